package sandboxchain

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/routing/domain/inbound"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/sim/pulsesim"
	"github.com/swapgate/swapgate/routing/sim/sandbox"
	"github.com/swapgate/swapgate/routing/sim/sandboxnet"
	"github.com/swapgate/swapgate/routing/sim/simchain"
	"github.com/swapgate/swapgate/store"
)

// DeliveryStore remembers the deliveries made for a reference;
// store.ChainLog promises it (both backends).
type DeliveryStore interface {
	SandboxDelivery(ctx context.Context, ref string) (string, error)
	PutSandboxDelivery(ctx context.Context, ref, txHash string) error
}

// Chains is what the ledger reads and does on the sandbox chains: the
// in-process owner (*Service) on a single node, the chain grains' proxy
// (*Remote) in a cluster.
type Chains interface {
	// TransactionOn finds a mined transaction by hash on one chain; an
	// error is a chain that could not be asked.
	TransactionOn(ctx context.Context, chainID uint64, hash common.Hash) (sandboxnet.Mined, bool, error)
	// CreditOnce credits amount of token to holder on a chain for
	// reference ref: a retried request for the same ref mines nothing
	// twice where the chain's owner can be asked twice (a grain).
	CreditOnce(ctx context.Context, chainID uint64, ref string, holder, token common.Address, amount *big.Int) (*simchain.Receipt, error)
	// WarpDelivery finds the relayer's delivery of a warp-route message
	// on its destination chain.
	WarpDelivery(ctx context.Context, chainID uint64, id common.Hash) (*simchain.Receipt, bool, error)
}

// Ledger is what trackers and the step-2 runner read and do on the sandbox
// chains: a transaction's outcome and evidence, the quote a step-1
// transaction executed, and deliveries made once per reference.
type Ledger struct {
	svc       Chains
	refs      DeliveryStore
	reg       *registry.Registry
	contracts *pulseroute.Contracts // the sandbox's warp routes
}

// NewLedger returns the ledger over the sandbox chains.
func NewLedger(svc Chains, refs DeliveryStore, reg *registry.Registry) *Ledger {
	return &Ledger{svc: svc, refs: refs, reg: reg, contracts: pulseroute.DefaultContracts()}
}

var (
	_ sandbox.Ledger     = (*Ledger)(nil)
	_ sandbox.WarpLedger = (*Ledger)(nil)
)

// Outcome reports a transaction on chainID: whether it is mined there,
// whether it succeeded, its revert reason and when it was mined.
func (l *Ledger) Outcome(ctx context.Context, chainID uint64, hash string) (found, succeeded bool, reason string, minedAt time.Time, err error) {
	m, ok, err := l.svc.TransactionOn(ctx, chainID, common.HexToHash(hash))
	if err != nil {
		return false, false, "", time.Time{}, err
	}
	if !ok || m.Receipt == nil {
		return false, false, "", time.Time{}, nil
	}
	return true, m.Receipt.Succeeded(), m.Receipt.RevertReason, time.Unix(int64(m.Receipt.BlockTime), 0), nil
}

// Deliver credits amount of token to to on chainID for ref, once: a
// repeated call returns the first delivery's hash. A chain the sandbox
// does not simulate (Solana, the intents chains) gets a recorded delivery
// with a synthetic hash.
func (l *Ledger) Deliver(ctx context.Context, chainID uint64, ref, to, token string, amount *big.Int) (string, error) {
	if h, err := l.refs.SandboxDelivery(ctx, ref); err == nil {
		return h, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return "", err
	}
	h, err := l.credit(ctx, chainID, ref, to, token, amount)
	if err != nil {
		return "", err
	}
	// A crash between the credit and this record can repeat the credit on
	// the next poll in one process: the sandbox accepts that window. A
	// cluster's chain grain knows the credit by its reference and answers
	// the repeat with the first credit.
	if err := l.refs.PutSandboxDelivery(ctx, ref, h); err != nil {
		return "", err
	}
	return h, nil
}

func (l *Ledger) credit(ctx context.Context, chainID uint64, ref, to, token string, amount *big.Int) (string, error) {
	c, ok := l.reg.Chain(chainID)
	if !ok || c.ChainType != registry.EVM || !common.IsHexAddress(to) {
		return crypto.Keccak256Hash([]byte(fmt.Sprintf("sandbox-delivery/%d/%s/%s/%s", chainID, to, token, amount))).Hex(), nil
	}
	tokenAddr := common.Address{}
	if !strings.EqualFold(token, "native") && token != "" {
		tokenAddr = common.HexToAddress(token)
	}
	r, err := l.svc.CreditOnce(ctx, chainID, ref, common.HexToAddress(to), tokenAddr, amount)
	if err != nil {
		return "", fmt.Errorf("sandbox delivery on chain %d: %w", chainID, err)
	}
	return r.TxHash.Hex(), nil
}

// Evidence is what the source chain shows of a transaction, for a deposit
// registration.
func (l *Ledger) Evidence(ctx context.Context, chainID uint64, txHash common.Hash) (inbound.Evidence, error) {
	m, ok, err := l.svc.TransactionOn(ctx, chainID, txHash)
	if err != nil {
		return inbound.Evidence{}, err
	}
	if !ok || m.Receipt == nil {
		return inbound.Evidence{ChainID: chainID}, nil
	}
	r := m.Receipt
	ev := inbound.Mined(m.ChainID, r.From, r.Status, r.BlockNumber, r.Logs)
	if tx := m.Transaction; tx != nil {
		ev.To, ev.Value, ev.CallRef = tx.To, tx.Value, quote.CallRef(tx.Data)
	}
	return ev, nil
}

// QuoteRef is the quote reference the sandbox router announced in a
// transaction on chainID.
func (l *Ledger) QuoteRef(ctx context.Context, chainID uint64, txHash common.Hash) ([32]byte, bool, error) {
	m, ok, err := l.svc.TransactionOn(ctx, chainID, txHash)
	if err != nil {
		return [32]byte{}, false, err
	}
	if !ok || m.Receipt == nil {
		return [32]byte{}, false, nil
	}
	ref, ok := sandbox.ExecutedQuoteRef(chainID, m.Receipt.Logs)
	return ref, ok, nil
}

// WarpArrival finds the warp-route message a transaction on chainID
// dispatched (a direct pulseroute route's bridgeAndSwap or
// transferRemote) and the relayer's delivery of it on its destination.
func (l *Ledger) WarpArrival(ctx context.Context, chainID uint64, hash string) (sandbox.WarpArrival, error) {
	var a sandbox.WarpArrival
	w, ok := l.contracts.WarpRoute(chainID)
	if !ok {
		return a, nil
	}
	m, found, err := l.svc.TransactionOn(ctx, chainID, common.HexToHash(hash))
	if err != nil || !found || m.Receipt == nil {
		return a, err
	}
	msgs := pulsesim.MessagesIn(chainID, w.Router, m.Receipt.Logs)
	if len(msgs) == 0 {
		return a, nil
	}
	msg := msgs[0]
	a.Sent, a.MessageID, a.Recipient, a.Amount = true, msg.ID.Hex(), msg.RecipientAddress().Hex(), msg.Amount.String()
	if dw, ok := l.contracts.WarpRoute(msg.Destination); ok {
		a.Token = dw.Token.Hex()
	}
	r, delivered, err := l.svc.WarpDelivery(ctx, msg.Destination, msg.ID)
	if err != nil || !delivered {
		return a, err
	}
	a.Delivered, a.TxHash, a.At = true, r.TxHash.Hex(), time.Unix(int64(r.BlockTime), 0)
	return a, nil
}
