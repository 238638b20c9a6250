package app

import (
	"context"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/actors/sandboxchain"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/sim/simchain"
	pebblestore "github.com/swapgate/swapgate/store/pebble"
)

// The operator at its genesis allocation is left alone (a first start
// mines nothing); one that paid out more than half its USDC is topped up
// in USDC only.
func TestFundOperatorTopsUpUnderHalfTheGenesisAllocation(t *testing.T) {
	ctx := context.Background()
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	st, err := pebblestore.Open(t.TempDir(), pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	chains, _, err := sandboxchain.Start(ctx, reg, st, sandboxchain.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer chains.Close()
	op := common.HexToAddress("0x00000000000000000000000000000000000a11ce")
	usdcTok, _ := reg.TokenBySymbol(42161, "USDC")
	usdc := common.HexToAddress(usdcTok.Address)
	balance := func(token common.Address) *big.Int {
		b, err := chains.Balance(ctx, 42161, op, token)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	head := func() uint64 {
		b, err := chains.Head(ctx, 42161)
		if err != nil {
			t.Fatal(err)
		}
		return b.Number
	}
	h0, native0 := head(), balance(common.Address{})
	if err := fundOperator(ctx, chains, reg, op); err != nil {
		t.Fatal(err)
	}
	if head() != h0 {
		t.Fatalf("funding an account at its genesis allocation mined %d blocks", head()-h0)
	}
	units := func(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), big.NewInt(1_000_000)) }
	data, _ := simchain.ERC20ABI().Pack("transfer", common.HexToAddress("0x0000000000000000000000000000000000000b0b"), units(600))
	if r, err := chains.Send(ctx, 42161, op, simchain.TxRequest{To: usdc, Data: data}); err != nil || !r.Succeeded() {
		t.Fatalf("pay 600 USDC away: %v %+v", err, r)
	}
	native := balance(common.Address{})
	if err := fundOperator(ctx, chains, reg, op); err != nil {
		t.Fatal(err)
	}
	if got := balance(usdc); got.Cmp(units(400+10_000)) != 0 {
		t.Fatalf("USDC after the top-up: %s", got)
	}
	if got := balance(common.Address{}); got.Cmp(native) != 0 || native.Cmp(native0) >= 0 {
		t.Fatalf("native %s → %s (genesis %s): topped up though above half", native, got, native0)
	}
}
