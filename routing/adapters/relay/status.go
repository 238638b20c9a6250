package relay

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/swapgate/swapgate/routing/domain/swap"
)

// Relay's intent statuses.
const (
	statusWaiting    = "waiting"
	statusDepositing = "depositing"
	statusPending    = "pending"
	statusSubmitted  = "submitted"
	statusSuccess    = "success"
	statusDelayed    = "delayed"
	statusRefund     = "refund"
	statusFailure    = "failure"
)

// SwapStatus asks Relay for the status of a swap's request
// (GET /intents/status/v3?requestId=, the request id the quote's route
// carried into the swap as UpstreamRef) and maps it onto the swap's
// vocabulary:
//
//   - waiting (the deposit not yet confirmed): PENDING,
//     WAIT_SOURCE_CONFIRMATIONS;
//   - depositing, pending, submitted and delayed (the deposit confirmed,
//     the fill on its way or late): PENDING, WAIT_DESTINATION_TRANSACTION;
//   - success: DONE, COMPLETED, the receiving leg the last of txHashes on
//     the destination chain;
//   - refund: DONE, REFUNDED, as the service's other refunded swaps;
//   - failure: FAILED, UNKNOWN_FAILED_ERROR with Relay's details.
//
// A request Relay does not know (404) is NOT_FOUND, which leaves the swap
// as it is, and so is a swap without a request id, which Relay cannot be
// asked about. Another status is refused as UPSTREAM_ERROR.
func (c *Client) SwapStatus(ctx context.Context, s *swap.Swap) (swap.Observation, error) {
	if s.UpstreamRef == "" {
		return swap.Observation{Status: swap.StatusNotFound}, nil
	}
	uri := c.base + "/intents/status/v3?" + url.Values{"requestId": {s.UpstreamRef}}.Encode()
	r, err := c.hc.Do(ctx, http.MethodGet, uri, nil)
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
	switch w.Status {
	case statusWaiting:
		return swap.Observation{Status: swap.StatusPending, Substatus: swap.WaitSourceConfirmations,
			SubstatusMessage: "Relay is waiting for the deposit to be confirmed"}, nil
	case statusDepositing, statusPending, statusSubmitted:
		return swap.Observation{Status: swap.StatusPending, Substatus: swap.WaitDestinationTransaction,
			SubstatusMessage: "Relay is filling the order on the destination chain"}, nil
	case statusDelayed:
		return swap.Observation{Status: swap.StatusPending, Substatus: swap.WaitDestinationTransaction,
			SubstatusMessage: "Relay's fill on the destination chain is delayed"}, nil
	case statusSuccess:
		if len(w.TxHashes) == 0 {
			return swap.Observation{}, upstream.BadAnswer("txHashes: success without a destination transaction")
		}
		h := w.TxHashes[len(w.TxHashes)-1]
		// The receiving leg reaches the client's status answer: its
		// transaction id is checked as a quote's fields are.
		if err := upstream.TxHash("txHashes", h); err != nil {
			return swap.Observation{}, err
		}
		return swap.Observation{Status: swap.StatusDone, Substatus: swap.Completed,
			Receiving: swap.Leg{TxHash: h, ChainID: s.ToChain, Token: s.ToToken}}, nil
	case statusRefund:
		return swap.Observation{Status: swap.StatusDone, Substatus: swap.Refunded,
			SubstatusMessage: message("Relay refunded the deposit", w.Details)}, nil
	case statusFailure:
		return swap.Observation{Status: swap.StatusFailed, Substatus: swap.UnknownFailedError,
			SubstatusMessage: message("Relay could not fill the order", w.Details)}, nil
	}
	return swap.Observation{}, upstream.BadAnswer("status: unknown status %s", shown(w.Status))
}

// maxMessage bounds how much of Relay's details a status message carries.
const maxMessage = 200

// message is a status message with Relay's details, when it sent any.
func message(base, details string) string {
	if details == "" {
		return base
	}
	if len(details) > maxMessage {
		details = details[:maxMessage]
	}
	return base + ": " + details
}
