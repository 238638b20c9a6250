package inbound

import (
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/webhook"
)

// State is where a registered deposit is in step 2. The values are what
// clients see in data.status.
type State string

// The states. COMPLETED, REFUNDED_USDCH and FAILED are terminal: nothing
// leaves them, and entering each publishes the deposit's one final event.
const (
	// None is a deposit not registered yet, the start of the machine.
	None State = ""
	// Confirming: registered (the signature checked) before the source
	// chain shows the step-1 transaction with its confirmations (unknown to
	// the node, pending, or in fewer blocks than --confirmations). The
	// runner reads the chain again until the deposit's horizon; nothing is
	// published, and no amount is known, until it moves on.
	Confirming State = "CONFIRMING"
	// Received: registered and verified; the USDC sits in the inbound
	// receiver on the source chain.
	Received State = "RECEIVED"
	// Bridging: the receiver's transferRemote is mined on the source chain;
	// the USDCh is on its way to chain 369.
	Bridging State = "BRIDGING"
	// Swapping: the USDCh arrived on 369 and the DEX leg into outputToken
	// for toAddress is under way.
	Swapping State = "SWAPPING"
	// Completed (terminal): toAddress received outputToken on 369 — from
	// the DEX leg, or straight from the bridge when outputToken is USDCh.
	Completed State = "COMPLETED"
	// Fallback: the DEX leg failed; the bridged USDCh is being sent to
	// toAddress on 369.
	Fallback State = "FALLBACK"
	// RefundedUSDCh (terminal): toAddress received the bridged USDCh on
	// 369 instead of outputToken: spendable funds, not the asked token.
	RefundedUSDCh State = "REFUNDED_USDCH"
	// Failed (terminal): the deposit cannot proceed (the bridge could not
	// be sent or never arrived, or the fallback transfer failed); reason
	// says which, and the funds wait for an operator where they are.
	Failed State = "FAILED"
)

// States lists every state after None, in the order of the flow.
func States() []State {
	return []State{Confirming, Received, Bridging, Swapping, Completed, Fallback, RefundedUSDCh, Failed}
}

// Terminal reports whether nothing leaves s.
func (s State) Terminal() bool { return s == Completed || s == RefundedUSDCh || s == Failed }

// Trigger is what moves a deposit: an outcome the tracker observed.
type Trigger string

const (
	// Registered: the registration passed every check (None → RECEIVED).
	Registered Trigger = "registered"
	// Awaited: the registration is sound but its transaction is not yet
	// confirmed on the source chain (None → CONFIRMING).
	Awaited Trigger = "awaited"
	// Confirmed: the source chain now shows the deposit, confirmed, and it
	// passed every check (CONFIRMING → RECEIVED, with the amount).
	Confirmed Trigger = "confirmed"
	// Refused: the confirmed transaction is not the deposit (reverted,
	// another sender, too little USDC), or it was not confirmed before the
	// horizon (CONFIRMING → FAILED, with the reason).
	Refused Trigger = "refused"
	// BridgeSent: the bridge transaction is mined on the source chain
	// (RECEIVED → BRIDGING).
	BridgeSent Trigger = "bridge_sent"
	// Bridged: the USDCh arrived on 369 for the DEX leg (BRIDGING →
	// SWAPPING); not for a deposit whose outputToken is USDCh.
	Bridged Trigger = "bridged"
	// Delivered: the USDCh arrived on 369 at toAddress itself, the whole
	// of step 2 when outputToken is USDCh (BRIDGING → COMPLETED).
	Delivered Trigger = "delivered"
	// Swapped: the DEX leg paid outputToken to toAddress (SWAPPING →
	// COMPLETED).
	Swapped Trigger = "swapped"
	// SwapFailed: the DEX leg failed (SWAPPING → FALLBACK).
	SwapFailed Trigger = "swap_failed"
	// Refunded: the fallback paid the USDCh to toAddress (FALLBACK →
	// REFUNDED_USDCH).
	Refunded Trigger = "refunded"
	// BridgeFailed: the bridge could not be sent, or what was sent will
	// not arrive (RECEIVED or BRIDGING → FAILED).
	BridgeFailed Trigger = "bridge_failed"
	// FallbackFailed: the fallback transfer cannot be made (FALLBACK →
	// FAILED).
	FallbackFailed Trigger = "fallback_failed"
)

// Triggers lists every trigger.
func Triggers() []Trigger {
	return []Trigger{Registered, Awaited, Confirmed, Refused, BridgeSent, Bridged, Delivered, Swapped, SwapFailed, Refunded, BridgeFailed, FallbackFailed}
}

// Transition is one allowed move and the webhook event it publishes (""
// for none).
type Transition struct {
	From    State
	Trigger Trigger
	To      State
	Event   string
}

// Transitions is the whole machine. A deposit publishes exactly two events:
// deposit.received when it is registered with its transaction confirmed
// (at once, or on leaving CONFIRMING), and one final event when it
// reaches a terminal state; a deposit that never leaves CONFIRMING but
// for FAILED publishes deposit.failed alone — deposit.completed for COMPLETED,
// deposit.failed for REFUNDED_USDCH and FAILED. The intermediate moves
// publish nothing.
//
// The fallback publishes deposit.failed with data.fallback true, not
// deposit.completed: the swap the user asked for did not happen (the event
// means "deposit swap failed"), a receiver that reads only the event name
// must not think outputToken arrived, and a deposit refunded in another
// token is reported as failed elsewhere too (a refunded intents deposit
// publishes deposit.failed). data.status REFUNDED_USDCH, deliveredToken
// and amountOut say the user holds USDCh on 369.
func Transitions() []Transition {
	return []Transition{
		{None, Registered, Received, webhook.DepositReceived},
		{None, Awaited, Confirming, ""},
		{Confirming, Confirmed, Received, webhook.DepositReceived},
		{Confirming, Refused, Failed, webhook.DepositFailed},
		{Received, BridgeSent, Bridging, ""},
		{Received, BridgeFailed, Failed, webhook.DepositFailed},
		{Bridging, Bridged, Swapping, ""},
		{Bridging, Delivered, Completed, webhook.DepositCompleted},
		{Bridging, BridgeFailed, Failed, webhook.DepositFailed},
		{Swapping, Swapped, Completed, webhook.DepositCompleted},
		{Swapping, SwapFailed, Fallback, ""},
		{Fallback, Refunded, RefundedUSDCh, webhook.DepositFailed},
		{Fallback, FallbackFailed, Failed, webhook.DepositFailed},
	}
}

func transition(from State, t Trigger) (Transition, bool) {
	for _, tr := range Transitions() {
		if tr.From == from && tr.Trigger == t {
			return tr, true
		}
	}
	return Transition{}, false
}

// Next is the state t leads to from from; false when the machine does not
// allow t there.
func Next(from State, t Trigger) (State, bool) {
	tr, ok := transition(from, t)
	return tr.To, ok
}

// Deposit is a registered inbound deposit: the registration as the client
// sent it, what the source chain showed, and how far step 2 has come.
type Deposit struct {
	Registration Registration
	SourceChain  uint64
	// InputToken is the source chain's USDC, AmountIn what reached the
	// inbound receiver (base units, 6 decimals).
	InputToken common.Address
	AmountIn   *big.Int
	State      State
	// BridgeTxHash is the bridge transaction on the source chain, from
	// BRIDGING on.
	BridgeTxHash common.Hash
	// DestinationTxHash is the transaction on 369 that paid toAddress:
	// the DEX leg, the bridge's own delivery, or the fallback transfer.
	DestinationTxHash common.Hash
	// DeliveredToken and AmountOut are what toAddress received: outputToken
	// on COMPLETED, USDCh on REFUNDED_USDCH.
	DeliveredToken common.Address
	AmountOut      *big.Int
	// Fallback is set when the DEX leg failed and the fallback took over.
	Fallback bool
	// Reason says why the DEX leg or the deposit failed.
	Reason    string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Errors of NewDeposit and Apply: the tracker's mistakes, never a client's.
var (
	// ErrTransition is a trigger the machine does not allow in the
	// deposit's state, including any trigger on a terminal state.
	ErrTransition = errors.New("inbound: transition not allowed")
	// ErrUpdate is an update without the facts its trigger needs.
	ErrUpdate = errors.New("inbound: incomplete update")
)

// Update is an outcome the tracker observed, with the facts it brings.
type Update struct {
	Trigger Trigger
	At      time.Time
	// TxHash is the bridge transaction for BridgeSent, and the transaction
	// on 369 that paid toAddress for Delivered, Swapped and Refunded.
	TxHash common.Hash
	// AmountOut is what toAddress received, for Delivered, Swapped and
	// Refunded.
	AmountOut *big.Int
	// AmountIn is the USDC the confirmed transaction delivered to the
	// inbound receiver, for Confirmed.
	AmountIn *big.Int
	// Reason says why, for SwapFailed, BridgeFailed, FallbackFailed and
	// Refused.
	Reason string
}

// usdch is the synthetic warp-route token on 369 that the bridge mints.
func usdch() common.Address { return common.HexToAddress(pulseroute.USDChAddress) }

// NewDeposit makes the deposit of a registration CheckDeposit accepted, in
// RECEIVED, and the deposit.received event to enqueue with it.
func NewDeposit(c *pulseroute.Contracts, sourceChainID uint64, reg Registration, amountIn *big.Int, at time.Time) (Deposit, webhook.Event, error) {
	w, ok := c.WarpRoute(sourceChainID)
	switch {
	case !ok || w.Synthetic:
		return Deposit{}, webhook.Event{}, fmt.Errorf("%w: chain %d has no collateral warp route", ErrUpdate, sourceChainID)
	case amountIn == nil || amountIn.Sign() <= 0:
		return Deposit{}, webhook.Event{}, fmt.Errorf("%w: registration needs a positive amount", ErrUpdate)
	case at.IsZero():
		return Deposit{}, webhook.Event{}, fmt.Errorf("%w: registration needs a time", ErrUpdate)
	}
	d := Deposit{
		Registration: reg,
		SourceChain:  sourceChainID,
		InputToken:   w.Token,
		AmountIn:     new(big.Int).Set(amountIn),
		CreatedAt:    at,
	}
	d, ev, err := d.Apply(Update{Trigger: Registered, At: at})
	if err != nil {
		return Deposit{}, webhook.Event{}, err
	}
	return d, *ev, nil
}

// NewPendingDeposit makes the deposit of a registration whose signature
// checked but whose transaction the source chain does not show confirmed
// yet (Awaiting), in CONFIRMING, without an amount and without an event:
// deposit.received waits for Confirmed.
func NewPendingDeposit(c *pulseroute.Contracts, sourceChainID uint64, reg Registration, at time.Time) (Deposit, error) {
	w, ok := c.WarpRoute(sourceChainID)
	switch {
	case !ok || w.Synthetic:
		return Deposit{}, fmt.Errorf("%w: chain %d has no collateral warp route", ErrUpdate, sourceChainID)
	case at.IsZero():
		return Deposit{}, fmt.Errorf("%w: registration needs a time", ErrUpdate)
	}
	d := Deposit{Registration: reg, SourceChain: sourceChainID, InputToken: w.Token, CreatedAt: at}
	d, _, err := d.Apply(Update{Trigger: Awaited, At: at})
	return d, err
}

// Apply returns the deposit after u and the webhook event the transition
// publishes (nil for none), which the caller enqueues in the same batch as
// the new deposit. d itself is not changed. Bridged is refused for a
// deposit whose outputToken is USDCh, and Delivered for any other: the
// first has no DEX leg, the second has one.
func (d Deposit) Apply(u Update) (Deposit, *webhook.Event, error) {
	tr, ok := transition(d.State, u.Trigger)
	if !ok {
		return d, nil, fmt.Errorf("%w: %q in state %q", ErrTransition, u.Trigger, d.State)
	}
	direct := d.Registration.OutputToken == usdch()
	if (u.Trigger == Bridged && direct) || (u.Trigger == Delivered && !direct) {
		return d, nil, fmt.Errorf("%w: %q for output token %s", ErrTransition, u.Trigger, d.Registration.OutputToken.Hex())
	}
	if u.At.IsZero() {
		return d, nil, fmt.Errorf("%w: %q without a time", ErrUpdate, u.Trigger)
	}
	next := d
	switch u.Trigger {
	case BridgeSent:
		if u.TxHash == (common.Hash{}) {
			return d, nil, fmt.Errorf("%w: %q without the bridge transaction", ErrUpdate, u.Trigger)
		}
		next.BridgeTxHash = u.TxHash
	case Delivered, Swapped, Refunded:
		if u.TxHash == (common.Hash{}) || u.AmountOut == nil || u.AmountOut.Sign() <= 0 {
			return d, nil, fmt.Errorf("%w: %q needs the paying transaction and a positive amount", ErrUpdate, u.Trigger)
		}
		next.DestinationTxHash = u.TxHash
		next.AmountOut = new(big.Int).Set(u.AmountOut)
		next.DeliveredToken = d.Registration.OutputToken
		if u.Trigger == Refunded {
			next.DeliveredToken = usdch()
		}
	case Confirmed:
		if u.AmountIn == nil || u.AmountIn.Sign() <= 0 {
			return d, nil, fmt.Errorf("%w: %q needs a positive amount", ErrUpdate, u.Trigger)
		}
		next.AmountIn = new(big.Int).Set(u.AmountIn)
	case SwapFailed, BridgeFailed, FallbackFailed, Refused:
		if u.Reason == "" {
			return d, nil, fmt.Errorf("%w: %q without a reason", ErrUpdate, u.Trigger)
		}
		if u.Trigger == SwapFailed {
			next.Fallback = true
			next.Reason = "DEX leg failed: " + u.Reason
		} else {
			next.Reason = u.Reason
		}
	}
	next.State = tr.To
	next.UpdatedAt = u.At
	if tr.Event == "" {
		return next, nil, nil
	}
	return next, &webhook.Event{Name: tr.Event, Time: u.At, Data: next.Data()}, nil
}

// Data is the data object of deposit.* webhook events, in the swap
// events' style (chains as integers, amounts as base-unit decimal strings,
// addresses EIP-55 and hashes 0x hex). Receivers deduplicate on txHash and
// event: a deposit publishes each event at most once. Fields that do not
// apply yet are left out.
type Data struct {
	TxHash           string `json:"txHash"`
	SourceChain      uint64 `json:"sourceChain"`
	DestinationChain uint64 `json:"destinationChain"`
	FromAddress      string `json:"fromAddress"`
	ToAddress        string `json:"toAddress"`
	// InputToken is the source chain's USDC, the token of AmountIn.
	InputToken  string `json:"inputToken"`
	OutputToken string `json:"outputToken"`
	// AmountIn is absent while CONFIRMING (and on a deposit that failed
	// there): the amount is what the confirmed transaction delivered.
	AmountIn string `json:"amountIn,omitempty"`
	// AmountOut is in DeliveredToken: outputToken, or USDCh after the
	// fallback.
	AmountOut         string `json:"amountOut,omitempty"`
	DeliveredToken    string `json:"deliveredToken,omitempty"`
	Status            string `json:"status"`
	BridgeTxHash      string `json:"bridgeTxHash,omitempty"`
	DestinationTxHash string `json:"destinationTxHash,omitempty"`
	Fallback          bool   `json:"fallback"`
	Reason            string `json:"reason,omitempty"`
}

// Data is the deposit as webhook events show it.
func (d Deposit) Data() Data {
	out := Data{
		TxHash:           d.Registration.TxHash.Hex(),
		SourceChain:      d.SourceChain,
		DestinationChain: quote.PulseChainID,
		FromAddress:      d.Registration.FromAddress.Hex(),
		ToAddress:        d.Registration.ToAddress.Hex(),
		InputToken:       d.InputToken.Hex(),
		OutputToken:      d.Registration.OutputToken.Hex(),
		Status:           string(d.State),
		Fallback:         d.Fallback,
		Reason:           d.Reason,
	}
	if d.AmountIn != nil {
		out.AmountIn = d.AmountIn.String()
	}
	if d.AmountOut != nil {
		out.AmountOut = d.AmountOut.String()
		out.DeliveredToken = d.DeliveredToken.Hex()
	}
	if d.BridgeTxHash != (common.Hash{}) {
		out.BridgeTxHash = d.BridgeTxHash.Hex()
	}
	if d.DestinationTxHash != (common.Hash{}) {
		out.DestinationTxHash = d.DestinationTxHash.Hex()
	}
	return out
}

// Record is a registered deposit as the service keeps it: the deposit, and
// the quote (and so the partner, whose webhooks hear of it) whose step 1
// its transaction executed; both empty when the transaction named no quote
// the service issued.
type Record struct {
	Deposit   Deposit
	PartnerID string
	QuoteID   string
}
