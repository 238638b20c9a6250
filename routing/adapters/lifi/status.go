package lifi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	"github.com/swapgate/swapgate/routing/adapters/httpjson"
	"github.com/swapgate/swapgate/routing/domain/swap"
)

// wireStatus is LI.FI's /v1/status answer, the fields a tracker reads.
type wireStatus struct {
	Status           string        `json:"status"`
	Substatus        string        `json:"substatus"`
	SubstatusMessage string        `json:"substatusMessage"`
	Sending          wireStatusLeg `json:"sending"`
	Receiving        wireStatusLeg `json:"receiving"`
}

type wireStatusLeg struct {
	TxHash    string                   `json:"txHash"`
	ChainID   httpjson.FlexString      `json:"chainId"`
	Amount    httpjson.FlexString      `json:"amount"`
	Token     struct{ Address string } `json:"token"`
	Timestamp httpjson.FlexString      `json:"timestamp"`
}

// SwapStatus asks LI.FI for the status of a swap's source transaction and
// maps it to an observation in the same vocabulary (the service's statuses
// are LI.FI's). A transaction LI.FI does not know yet is NOT_FOUND, which
// leaves the swap as it is.
func (c *Client) SwapStatus(ctx context.Context, s *swap.Swap) (swap.Observation, error) {
	q := url.Values{}
	q.Set("txHash", s.Sending.TxHash)
	q.Set("fromChain", strconv.FormatUint(s.FromChain, 10))
	q.Set("toChain", strconv.FormatUint(s.ToChain, 10))
	if s.Tool != "" {
		q.Set("bridge", s.Tool)
	}
	r, err := c.hc.Do(ctx, http.MethodGet, c.base+"/v1/status?"+q.Encode(), nil)
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
	o := swap.Observation{Status: w.Status, Substatus: w.Substatus, SubstatusMessage: w.SubstatusMessage,
		SendingTimestamp: int64(w.Sending.Timestamp.Uint64())}
	if w.Receiving.TxHash != "" {
		// The receiving leg reaches the client's status answer: its
		// transaction id and amount are checked as a quote's fields are.
		if err := upstream.TxHash("receiving.txHash", w.Receiving.TxHash); err != nil {
			return swap.Observation{}, err
		}
		if w.Receiving.Amount != "" {
			if _, err := upstream.Decimal("receiving.amount", w.Receiving.Amount); err != nil {
				return swap.Observation{}, err
			}
		}
		o.Receiving = swap.Leg{TxHash: w.Receiving.TxHash, ChainID: w.Receiving.ChainID.Uint64(),
			Amount: string(w.Receiving.Amount), Token: w.Receiving.Token.Address, Timestamp: int64(w.Receiving.Timestamp.Uint64())}
	}
	switch o.Status {
	case swap.StatusNotFound, swap.StatusInvalid, swap.StatusPending, swap.StatusDone, swap.StatusFailed:
		return o, nil
	}
	return swap.Observation{}, upstream.BadAnswer("unknown status %q", w.Status)
}
