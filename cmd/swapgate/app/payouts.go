package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/swapgate/swapgate/actors/txm"
	"github.com/swapgate/swapgate/edge/admin"
	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/txintent"
	"github.com/swapgate/swapgate/store"
)

// Payouts on-chain: `swapgate settle` plans transfers (admin.SettlePayouts)
// and hands each one the manager signs for to a payoutSender, which stores
// it as an intent of the transaction manager keyed by the transfer's ID
// (purpose "payout"); the manager's completion hook for that purpose
// settles the transfer's earnings when the intent is confirmed, or puts
// them back in the pending set with the reason when it failed. A run made
// while no manager runs (the settle command on an open store, the service
// down) leaves its transfers planned: the service hands them to its
// manager once the manager started (startPayouts).

// payoutStore joins the settlement's reads and the transfers, which both
// backends keep in one store.
type payoutStore struct {
	store.Settlement
	p store.Payouts
}

// payoutStoreOf is stores' PayoutStore.
func payoutStoreOf(s *Stores) admin.PayoutStore { return payoutStore{s.Settlement, s.Payouts} }

func (s payoutStore) PlanPayouts(ctx context.Context, eco string, b *account.SettlementBatch, ts []*account.Transfer, forgotten []*account.Activity) error {
	return s.p.PlanPayouts(ctx, eco, b, ts, forgotten)
}
func (s payoutStore) Payout(ctx context.Context, id string) (*account.Transfer, error) {
	return s.p.Payout(ctx, id)
}
func (s payoutStore) Payouts(ctx context.Context, eco, state string) ([]*account.Transfer, error) {
	return s.p.Payouts(ctx, eco, state)
}
func (s payoutStore) FinishPayout(ctx context.Context, t *account.Transfer) error {
	return s.p.FinishPayout(ctx, t)
}

// payoutManager is what payouts need of the transaction manager
// (*txm.Manager).
type payoutManager interface {
	Submit(ctx context.Context, r txintent.Request) (*txintent.Intent, error)
	OnFinal(purpose string, h txm.Hook)
}

// payoutSender is admin.PayoutSender over the transaction manager, or,
// with none (m nil), the deferred one: it says it can sign on every EVM
// chain of the registry and leaves transfers planned for the manager's
// next start.
type payoutSender struct {
	m      payoutManager
	chains func(chainID uint64) bool
	st     admin.PayoutStore
	now    func() time.Time
	log    *slog.Logger
}

// evmChains is the registry's EVM chains, as a set.
func evmChains(reg *registry.Registry) func(uint64) bool {
	ids := map[uint64]bool{}
	for _, c := range reg.Chains() {
		if c.ChainType == registry.EVM {
			ids[c.ID] = true
		}
	}
	return func(id uint64) bool { return ids[id] }
}

// newPayoutSender builds the sender over m (nil: deferred) for the chains
// it signs on, registering the payout hook on m: call it before m starts.
func newPayoutSender(m payoutManager, chains func(uint64) bool, st admin.PayoutStore, log *slog.Logger) *payoutSender {
	p := &payoutSender{m: m, chains: chains, st: st, now: time.Now, log: log}
	if m != nil {
		m.OnFinal(account.PayoutPurpose, p.finished)
	}
	return p
}

func (p *payoutSender) CanSign(chainID uint64) bool { return p.chains(chainID) }

// SendPayout submits t's transaction under t's ID. A transfer that cannot
// become a transaction, or names a chain the manager has no node for, is
// failed with the reason, its earnings pending again: sending it again
// would fail again.
func (p *payoutSender) SendPayout(ctx context.Context, t *account.Transfer) error {
	if p.m == nil {
		return nil
	}
	to, data, value, gas, err := t.Call()
	if err == nil {
		req := txintent.Request{Purpose: account.PayoutPurpose, Key: t.ID, ChainID: t.ChainID, To: to, Data: data, Value: value, GasLimit: gas}
		if err = req.Validate(); err == nil {
			_, err = p.m.Submit(ctx, req)
			if err == nil || !errors.Is(err, txm.ErrUnknownChain) {
				return err // sent, or a failure the next run retries
			}
		}
	}
	if _, ferr := admin.FinishTransfer(ctx, p.st, t.ID, false, "", err.Error(), p.now()); ferr != nil {
		return fmt.Errorf("fail payout %s (%v): %w", t.ID, err, ferr)
	}
	return nil
}

// finished is the manager's hook for final payout intents: the transfer
// named by the intent's key settles by its mined transaction or fails with
// its reason. A transfer already finished otherwise is logged, not retried.
func (p *payoutSender) finished(ctx context.Context, in *txintent.Intent) error {
	confirmed, hash := in.State == txintent.Confirmed, ""
	if confirmed {
		tx := in.MinedTx()
		if tx == nil {
			return fmt.Errorf("payout %s: confirmed intent %s has no mined transaction", in.Key, in.ID)
		}
		hash = tx.Hash
	}
	_, err := admin.FinishTransfer(ctx, p.st, in.Key, confirmed, hash, in.Reason, p.now())
	if errors.Is(err, account.ErrTransferState) || errors.Is(err, account.ErrNotFound) {
		p.log.Error("payout intent finished a transfer that cannot take it", "payout", in.Key, "intent", in.ID, "err", err)
		return nil
	}
	return err
}

// startPayouts hands the transfers planned while no manager ran to the
// manager (after it started); a failure is logged, and the next settlement
// run sends them.
func (p *payoutSender) startPayouts(ctx context.Context) {
	if p.m == nil {
		return
	}
	if err := admin.SendPlanned(ctx, p.st, p, account.EcosystemEVM); err != nil {
		p.log.Error("send planned payouts", "err", err)
	}
}

// payoutSenderOf is the sender the admin listener's settlement runs use:
// the manager's when its part set one, else the deferred one.
func (a *App) payoutSenderOf(s *startup) admin.PayoutSender {
	if a.payouts != nil {
		return a.payouts
	}
	return newPayoutSender(nil, evmChains(s.reg), payoutStoreOf(a.stores), a.log)
}

// SettlePayouts runs a settlement of ecosystem on stores in this process
// (the settle command on an open store): the transfers the manager will
// sign for (every EVM chain of the registry) stay planned until a
// service's manager takes them at its start, or a run through a running
// service's admin listener sends them.
func SettlePayouts(ctx context.Context, stores *Stores, ecosystem string, dryRun bool, now time.Time) (*account.SettlementBatch, error) {
	reg, err := registry.Load()
	if err != nil {
		return nil, fmt.Errorf("app: settle: %w", err)
	}
	st := payoutStoreOf(stores)
	return admin.SettlePayouts(ctx, st, newPayoutSender(nil, evmChains(reg), st, slog.Default()), ecosystem, dryRun, now)
}

// RecordPayout settles the manual payout id by txHash on stores in this
// process (admin.RecordTransfer).
func RecordPayout(ctx context.Context, stores *Stores, id, txHash string, now time.Time) (*account.Transfer, error) {
	return admin.RecordTransfer(ctx, payoutStoreOf(stores), id, txHash, now)
}
