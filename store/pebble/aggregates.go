package pebblestore

import "github.com/swapgate/swapgate/store"

// Every kind of state package store names is one this backend keeps: a
// method missing or changed fails the build here rather than where a
// consumer is handed the store.
var (
	_ store.Partners    = (*Store)(nil)
	_ store.FeeWallets  = (*Store)(nil)
	_ store.Ledger      = (*Store)(nil)
	_ store.Settlement  = (*Store)(nil)
	_ store.Webhooks    = (*Store)(nil)
	_ store.Swaps       = (*Store)(nil)
	_ store.Inbound     = (*Store)(nil)
	_ store.Onramp      = (*Store)(nil)
	_ store.Idempotency = (*Store)(nil)
	_ store.Usage       = (*Store)(nil)
	_ store.Portal      = (*Store)(nil)
	_ store.QuoteRefs   = (*Store)(nil)
	_ store.ChainLog    = (*Store)(nil)
	_ store.TxIntents   = (*Store)(nil)
	_ store.Health      = (*Store)(nil)
)
