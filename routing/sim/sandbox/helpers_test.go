package sandbox

import (
	"errors"
	"math/big"
	"testing"

	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/quote/quotetest"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/tools"
)

// Test wallets: EVM sender and recipient, a Solana recipient.
const (
	sender    = "0x1111111111111111111111111111111111111111"
	recipient = "0x2222222222222222222222222222222222222222"
	feeWallet = "0x3333333333333333333333333333333333333333"
	solWallet = "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV"
)

// fixedPrices and fixedGas are the reference prices and gas the tests
// price with (see quotetest).
var (
	fixedPrices = quotetest.ReferencePrices
	fixedGas    = quotetest.GasOnMainnet
)

type fixture struct {
	reg *registry.Registry
	cat *tools.Catalog
}

func loadFixture(t *testing.T) fixture {
	t.Helper()
	reg, err := registry.Load()
	if err != nil {
		t.Fatalf("registry: %v", err)
	}
	cat, err := tools.Load(reg)
	if err != nil {
		t.Fatalf("tools: %v", err)
	}
	return fixture{reg: reg, cat: cat}
}

func (f fixture) market(t *testing.T, cfg Config) *Market {
	t.Helper()
	m, err := New(f.reg, f.cat, fixedPrices(f.reg), fixedGas, cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return m
}

// req builds a request by chain id and token symbol ("" = native).
func (f fixture) req(t *testing.T, from uint64, fromSym string, to uint64, toSym string, whole string) *quote.Request {
	t.Helper()
	to_ := recipient
	if c, _ := f.reg.Chain(to); c != nil && c.AddressFormat == "solana" {
		to_ = solWallet
	}
	return quotetest.Request(t, f.reg, from, fromSym, to, toSym, whole, sender, to_)
}

// noRouteReason returns the reason of a *quote.NoRoute, or "" for any other
// error.
func noRouteReason(err error) string {
	var nr *quote.NoRoute
	if errors.As(err, &nr) {
		return nr.Reason
	}
	return ""
}

// checkAmounts asserts the invariants every route keeps.
func checkAmounts(t *testing.T, r *quote.Route) {
	t.Helper()
	sum := new(big.Int).Add(r.ToAmount, r.PartnerFee)
	if sum.Cmp(r.PreFeeToAmount) != 0 {
		t.Errorf("ToAmount %s + PartnerFee %s != PreFeeToAmount %s", r.ToAmount, r.PartnerFee, r.PreFeeToAmount)
	}
	if r.ToAmount.Sign() <= 0 {
		t.Errorf("ToAmount %s not positive", r.ToAmount)
	}
	if r.ToAmountMin.Cmp(r.ToAmount) > 0 {
		t.Errorf("ToAmountMin %s above ToAmount %s", r.ToAmountMin, r.ToAmount)
	}
}
