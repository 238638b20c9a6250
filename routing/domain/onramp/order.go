package onramp

import (
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/swapgate/swapgate/routing/domain/scenario"
	"github.com/swapgate/swapgate/routing/domain/webhook"
)

// State is an order's state.
type State string

// Order states. COMPLETED, FAILED, REFUNDED and EXPIRED are terminal.
const (
	Created         State = "CREATED"
	PaymentReceived State = "PAYMENT_RECEIVED"
	CryptoSent      State = "CRYPTO_SENT"
	Completed       State = "COMPLETED"
	Failed          State = "FAILED"
	Refunded        State = "REFUNDED"
	Expired         State = "EXPIRED"
)

// Terminal reports whether no transition leaves s.
func (s State) Terminal() bool {
	return s == Completed || s == Failed || s == Refunded || s == Expired
}

// transitions is the state machine: for each state, the states it may move
// to and the event each move publishes ("" for none: an expiry is the
// partner's own clock running out, not news).
var transitions = map[State]map[State]string{
	Created:         {PaymentReceived: webhook.OnrampPaymentReceived, Failed: webhook.OnrampFailed, Expired: ""},
	PaymentReceived: {CryptoSent: webhook.OnrampCryptoSent, Failed: webhook.OnrampFailed, Refunded: webhook.OnrampRefunded},
	CryptoSent:      {Completed: webhook.OnrampCompleted},
}

// ErrTransition is returned for a move the state machine does not allow.
var ErrTransition = errors.New("onramp: transition not allowed")

// Step is one entry of an order's history: the state entered, when, and
// what came with it (the delivery's transaction, a failure's reason).
type Step struct {
	State  State     `json:"status"`
	At     time.Time `json:"at"`
	TxHash string    `json:"txHash,omitempty"`
	Reason string    `json:"reason,omitempty"`
}

// Order is an on-ramp order from its checkout on. PartnerID is the partner
// whose key made the checkout ("" for an anonymous one); CSRF is the token
// the hosted checkout page's forms must carry.
type Order struct {
	UID         string    `json:"orderUid"`
	PartnerID   string    `json:"partnerId,omitempty"`
	ExternalID  string    `json:"externalId,omitempty"`
	Email       string    `json:"email,omitempty"`
	Wallet      string    `json:"walletAddress"`
	RedirectURL string    `json:"redirectUrl,omitempty"`
	Country     string    `json:"userCountry,omitempty"`
	Provider    string    `json:"provider"`
	CSRF        string    `json:"csrf"`
	Quote       Quote     `json:"quote"`
	State       State     `json:"status"`
	History     []Step    `json:"history"`
	CreatedAt   time.Time `json:"createdAt"`
	ExpiresAt   time.Time `json:"expiresAt"`
	// TxHash is the delivery transaction, set on CRYPTO_SENT.
	TxHash string `json:"txHash,omitempty"`
	// Scenario is the sandbox scenario the order plays (see Script and
	// ScriptedMove), "" for none.
	Scenario scenario.Name `json:"scenario,omitempty"`
}

// uidEncoding spells uids in lower-case base32 without padding: URL-safe and
// unambiguous to read out.
var uidEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewUID is a fresh order uid: "ord_" and 128 random bits, so that knowing
// one order's uid tells nothing of another's (the uid is what the checkout
// page's URL carries).
func NewUID() string { return "ord_" + randomToken() }

func randomToken() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("onramp: crypto/rand failed: %v", err))
	}
	return uidEncoding.EncodeToString(b[:])
}

// ValidUID reports whether s has the form of an order uid, so that a lookup
// of anything else is refused before it reaches the store.
func ValidUID(s string) bool {
	if !strings.HasPrefix(s, "ord_") || len(s) != 4+26 {
		return false
	}
	_, err := uidEncoding.DecodeString(s[4:])
	return err == nil
}

// NewOrder opens an order for a priced checkout at now: CREATED, expiring
// after CheckoutTTL.
func NewOrder(partnerID, provider string, req *CheckoutRequest, q *Quote, now time.Time) *Order {
	now = now.UTC().Truncate(time.Millisecond)
	return &Order{
		UID: NewUID(), PartnerID: partnerID, ExternalID: req.ExternalID, Email: req.Email, Wallet: req.Wallet,
		RedirectURL: req.RedirectURL, Country: req.Country, Provider: provider, CSRF: randomToken(),
		Quote: *q, State: Created, History: []Step{{State: Created, At: now}},
		CreatedAt: now, ExpiresAt: now.Add(CheckoutTTL).Truncate(time.Second), Scenario: req.Scenario,
	}
}

// Move applies one transition at the given time and returns the event it
// publishes (nil for EXPIRED). A move the state machine does not allow
// leaves the order as it was and returns ErrTransition. An order moves to
// EXPIRED only once its ExpiresAt has passed.
func (o *Order) Move(to State, at time.Time, txHash, reason string) (*webhook.Event, error) {
	event, ok := transitions[o.State][to]
	if !ok {
		return nil, fmt.Errorf("%w: %s → %s", ErrTransition, o.State, to)
	}
	if to == Expired && at.Before(o.ExpiresAt) {
		return nil, fmt.Errorf("%w: %s expires at %s", ErrTransition, o.UID, o.ExpiresAt.Format(time.RFC3339))
	}
	at = at.UTC().Truncate(time.Millisecond)
	o.State = to
	o.History = append(o.History, Step{State: to, At: at, TxHash: txHash, Reason: reason})
	if to == CryptoSent {
		o.TxHash = txHash
	}
	if event == "" {
		return nil, nil
	}
	return &webhook.Event{Name: event, Time: at, Data: o.Payload()}, nil
}

// Allowed reports whether the order may move to the state now.
func (o *Order) Allowed(to State) bool {
	_, ok := transitions[o.State][to]
	return ok
}

// Payload is the data of an onramp.* event: the order as the partner knows
// it, with the state it entered and its history. Receivers deduplicate on
// orderUid and status.
type Payload struct {
	OrderUID      string `json:"orderUid"`
	ExternalID    string `json:"externalId"`
	Status        State  `json:"status"`
	FiatCurrency  string `json:"fiatCurrency"`
	FiatAmount    Cents  `json:"fiatAmount"`
	TotalFee      Cents  `json:"totalFee"`
	PartnerFee    Cents  `json:"partnerFee"`
	CryptoAsset   string `json:"cryptoAsset"`
	ChainID       uint64 `json:"chainId"`
	CryptoAmount  string `json:"cryptoAmount"`
	WalletAddress string `json:"walletAddress"`
	TxHash        string `json:"txHash"`
	Reason        string `json:"reason"`
	UpdatedAt     int64  `json:"updatedAt"`
}

// Payload is the event data of the order's current state.
func (o *Order) Payload() Payload {
	last := o.History[len(o.History)-1]
	return Payload{
		OrderUID: o.UID, ExternalID: o.ExternalID, Status: o.State, FiatCurrency: o.Quote.Currency,
		FiatAmount: o.Quote.Amount, TotalFee: o.Quote.Fees.Total, PartnerFee: o.Quote.Fees.Partner,
		CryptoAsset: o.Quote.Symbol, ChainID: o.Quote.ChainID, CryptoAmount: o.Quote.CryptoAmount,
		WalletAddress: o.Wallet, TxHash: o.TxHash, Reason: last.Reason, UpdatedAt: last.At.Unix(),
	}
}

// MarshalJSON writes cents as the JSON number of the amount ("100.00"), the
// form of every fiat amount in answers and payloads.
func (c Cents) MarshalJSON() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalJSON reads what MarshalJSON writes, exactly.
func (c *Cents) UnmarshalJSON(b []byte) error {
	r, ok := new(big.Rat).SetString(string(b))
	if !ok {
		return fmt.Errorf("onramp: amount %s is not a number", b)
	}
	v, ok := centsOf(r)
	if !ok {
		return fmt.Errorf("onramp: amount %s is not a whole number of cents", b)
	}
	*c = v
	return nil
}
