package oneclick

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/swapgate/swapgate/routing/adapters/httpjson"
	"github.com/swapgate/swapgate/routing/domain/swap"
)

// wireStatus is 1Click's /v0/status answer, the fields a tracker reads.
type wireStatus struct {
	Status      string `json:"status"`
	SwapDetails struct {
		AmountIn                 httpjson.FlexString `json:"amountIn"`
		AmountOut                httpjson.FlexString `json:"amountOut"`
		DestinationChainTxHashes []struct {
			Hash string `json:"hash"`
		} `json:"destinationChainTxHashes"`
		RefundReason string `json:"refundReason"`
	} `json:"swapDetails"`
}

// SwapStatus asks 1Click for the status of an intents deposit (by its
// deposit address and memo) and maps it onto the tracked swap's
// vocabulary: PENDING_DEPOSIT and KNOWN_DEPOSIT_TX are not yet seen
// (NOT_FOUND, leaving the swap as it is), INCOMPLETE_DEPOSIT is PENDING
// PARTIAL, PROCESSING is PENDING, SUCCESS DONE, REFUNDED DONE REFUNDED,
// FAILED FAILED. A deposit 1Click does not know (404) is not yet seen.
func (c *Client) SwapStatus(ctx context.Context, s *swap.Swap) (swap.Observation, error) {
	q := url.Values{}
	q.Set("depositAddress", s.DepositAddress)
	if s.DepositMemo != "" {
		q.Set("depositMemo", s.DepositMemo)
	}
	r, err := c.hc.Do(ctx, http.MethodGet, c.base+"/v0/status?"+q.Encode(), nil)
	if err != nil {
		return swap.Observation{}, err
	}
	if r.Status == http.StatusNotFound {
		return swap.Observation{Status: swap.StatusNotFound}, nil
	}
	if r.Status != http.StatusOK {
		return swap.Observation{}, responseError(r)
	}
	var w wireStatus
	if err := json.Unmarshal(r.Body, &w); err != nil {
		return swap.Observation{}, upstream.BadAnswer("decode status: %w", err)
	}
	o := swap.Observation{SubstatusMessage: "intents status " + w.Status}
	switch w.Status {
	case swap.DepositPending, swap.DepositKnownTx:
		return swap.Observation{Status: swap.StatusNotFound}, nil
	case swap.DepositIncomplete:
		o.Status, o.Substatus = swap.StatusPending, swap.Partial
	case swap.DepositProcessing:
		o.Status, o.Substatus = swap.StatusPending, swap.WaitDestinationTransaction
	case swap.DepositSuccess:
		o.Status, o.Substatus = swap.StatusDone, swap.Completed
	case swap.DepositRefunded:
		o.Status, o.Substatus = swap.StatusDone, swap.Refunded
		o.SubstatusMessage = "refunded: " + w.SwapDetails.RefundReason
	case swap.DepositFailed:
		o.Status, o.Substatus = swap.StatusFailed, swap.UnknownFailedError
	default:
		return swap.Observation{}, upstream.BadAnswer("unknown status %q", w.Status)
	}
	if hs := w.SwapDetails.DestinationChainTxHashes; len(hs) > 0 && hs[0].Hash != "" {
		// The delivery reaches the client's status answer: its
		// transaction id and amount are checked as a quote's fields are.
		if err := upstream.TxHash("swapDetails.destinationChainTxHashes.hash", hs[0].Hash); err != nil {
			return swap.Observation{}, err
		}
		if w.SwapDetails.AmountOut != "" {
			if _, err := upstream.Decimal("swapDetails.amountOut", w.SwapDetails.AmountOut); err != nil {
				return swap.Observation{}, err
			}
		}
		o.Receiving = swap.Leg{TxHash: hs[0].Hash, ChainID: s.ToChain, Amount: string(w.SwapDetails.AmountOut), Token: s.ToToken}
	}
	return o, nil
}

// SubmitDeposit tells 1Click of a deposit transaction so that it need not
// wait to notice it (POST /v0/deposit/submit).
func (c *Client) SubmitDeposit(ctx context.Context, txHash, depositAddress, memo string) error {
	body, err := json.Marshal(struct {
		TxHash         string `json:"txHash"`
		DepositAddress string `json:"depositAddress"`
		Memo           string `json:"memo,omitempty"`
	}{txHash, depositAddress, memo})
	if err != nil {
		return upstream.BadAnswer("encode deposit submit: %w", err)
	}
	r, err := c.hc.Do(ctx, http.MethodPost, c.base+"/v0/deposit/submit", body)
	if err != nil {
		return err
	}
	if r.Status != http.StatusOK && r.Status != http.StatusCreated {
		return responseError(r)
	}
	return nil
}
