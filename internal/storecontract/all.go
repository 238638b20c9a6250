package storecontract

import "testing"

// Store is every aggregate a backend's one store keeps: all but the
// tickets, which Pebble keeps apart, in the ticket log (RunTickets).
type Store interface {
	Accounts
	FeeWallets
	Settlement
	Swaps
	InboundDeposits
	OnrampOrders
	Idempotency
	ChainLog
	Usage
	Portal
	TxIntents
}

// RunAll runs every suite but the tickets' against a backend's stores, one
// subtest per aggregate.
func RunAll(t *testing.T, open Factory[Store]) {
	t.Run("Accounts", func(t *testing.T) { RunAccounts(t, narrow(open, func(s Store) Accounts { return s })) })
	t.Run("FeeWallets", func(t *testing.T) { RunFeeWallets(t, narrow(open, func(s Store) FeeWallets { return s })) })
	t.Run("Ledger", func(t *testing.T) { RunLedger(t, narrow(open, func(s Store) Ledger { return s })) })
	t.Run("Settlement", func(t *testing.T) { RunSettlement(t, narrow(open, func(s Store) Settlement { return s })) })
	t.Run("Webhooks", func(t *testing.T) { RunWebhooks(t, narrow(open, func(s Store) Webhooks { return s })) })
	t.Run("Swaps", func(t *testing.T) { RunSwaps(t, narrow(open, func(s Store) Swaps { return s })) })
	t.Run("InboundDeposits", func(t *testing.T) {
		RunInboundDeposits(t, narrow(open, func(s Store) InboundDeposits { return s }))
	})
	t.Run("OnrampOrders", func(t *testing.T) { RunOnrampOrders(t, narrow(open, func(s Store) OnrampOrders { return s })) })
	t.Run("Idempotency", func(t *testing.T) { RunIdempotency(t, narrow(open, func(s Store) Idempotency { return s })) })
	t.Run("ChainLog", func(t *testing.T) { RunChainLog(t, narrow(open, func(s Store) ChainLog { return s })) })
	t.Run("Usage", func(t *testing.T) { RunUsage(t, narrow(open, func(s Store) Usage { return s })) })
	t.Run("Portal", func(t *testing.T) { RunPortal(t, narrow(open, func(s Store) Portal { return s })) })
	t.Run("TxIntents", func(t *testing.T) { RunTxIntents(t, narrow(open, func(s Store) TxIntents { return s })) })
}

// narrow makes a factory of S out of one of a wider store.
func narrow[S, W any](open Factory[W], as func(W) S) Factory[S] {
	return func(t *testing.T) Handle[S] {
		h := open(t)
		out := Handle[S]{Store: as(h.Store)}
		if h.Crash != nil {
			out.Crash = func(t *testing.T) S { return as(h.Crash(t)) }
		}
		if h.Reopen != nil {
			out.Reopen = func(t *testing.T) S { return as(h.Reopen(t)) }
		}
		return out
	}
}
