package webhook

import (
	"encoding/json"
	"fmt"
	"time"
)

// Event is what an event source publishes: a name from the Events table, the
// moment the state change happened, and the event's data object (SwapData for
// swap events; deposit and on-ramp sources bring their own types).
type Event struct {
	Name string
	Time time.Time
	Data any
}

// Payload is the JSON body of every delivery: {event, timestamp, data}.
type Payload struct {
	Event     string `json:"event"`
	Timestamp int64  `json:"timestamp"`
	Data      any    `json:"data"`
}

// SwapData is the data object of swap.* events, with the specification's
// field names. Test is set only on test deliveries.
type SwapData struct {
	TransactionID     string `json:"transactionId"`
	FromChain         uint64 `json:"fromChain"`
	ToChain           uint64 `json:"toChain"`
	FromToken         string `json:"fromToken"`
	ToToken           string `json:"toToken"`
	FromAmount        string `json:"fromAmount"`
	ToAmount          string `json:"toAmount"`
	FromAddress       string `json:"fromAddress"`
	ToAddress         string `json:"toAddress"`
	SourceTxHash      string `json:"sourceTxHash"`
	DestinationTxHash string `json:"destinationTxHash"`
	Status            string `json:"status"`
	Tool              string `json:"tool"`
	ExecutionDuration int64  `json:"executionDuration"`
	// RefundedTo is where the input went back on the source chain, on a
	// swap that ended refunded (the quote's refundTo, or fromAddress).
	RefundedTo string `json:"refundedTo,omitempty"`
	Test       bool   `json:"test,omitempty"`
}

// Body encodes the event as the exact bytes that are signed and sent. It is
// computed once when the event enters the outbox, so every attempt of a
// delivery carries byte-identical content and signature.
func (e Event) Body() ([]byte, error) {
	if !ValidEvent(e.Name) {
		return nil, fmt.Errorf("webhook: unknown event %q", e.Name)
	}
	if e.Time.IsZero() {
		return nil, fmt.Errorf("webhook: event %q has no time", e.Name)
	}
	b, err := json.Marshal(Payload{Event: e.Name, Timestamp: e.Time.Unix(), Data: e.Data})
	if err != nil {
		return nil, fmt.Errorf("webhook: encode %s payload: %w", e.Name, err)
	}
	return b, nil
}

// TestPayloadData is the data of a test delivery: a synthetic, clearly
// marked completed swap, so a receiver can check its parsing and signature
// verification end to end.
func TestPayloadData(deliveryRef string) SwapData {
	return SwapData{
		TransactionID: "test_" + deliveryRef,
		FromChain:     1,
		ToChain:       137,
		FromToken:     "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
		ToToken:       "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359",
		FromAmount:    "1000000",
		ToAmount:      "999000",
		FromAddress:   "0x0000000000000000000000000000000000000001",
		ToAddress:     "0x0000000000000000000000000000000000000001",
		Status:        "DONE",
		Tool:          "test",
		Test:          true,
	}
}
