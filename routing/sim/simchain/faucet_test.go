package simchain_test

import (
	"errors"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/math"

	"github.com/swapgate/swapgate/routing/sim/simchain"
)

func TestFaucetToken(t *testing.T) {
	c := newChain(t, ethereum)
	usdcAddr := token(t, ethereum, "USDC")
	faucet := simchain.FaucetAddress()

	r, err := c.Faucet(carol, usdcAddr, usdc(250))
	if err != nil {
		t.Fatal(err)
	}
	wantBig(t, "carol USDC", c.Balance(usdcAddr, carol), usdc(1250))
	if len(r.Logs) != 1 {
		t.Fatalf("%d logs, want 1", len(r.Logs))
	}
	from, to, amount := decodeAmountLog(t, r.Logs[0], "Transfer")
	if r.Logs[0].Address != usdcAddr || from != native || to != carol || amount.Cmp(usdc(250)) != 0 {
		t.Errorf("faucet logged %s Transfer(%s, %s, %s)", r.Logs[0].Address, from, to, amount)
	}
	tx, ok := c.Transaction(r.TxHash)
	if !ok || tx.From != faucet || tx.To != usdcAddr || tx.GasPrice.Sign() != 0 || r.From != faucet || r.BlockNumber != 1 {
		t.Errorf("faucet transaction %+v, receipt %+v", tx, r)
	}
	if r.GasUsed == 0 || r.GasUsed > tx.GasLimit {
		t.Errorf("faucet gas used %d", r.GasUsed)
	}

	// A top-up of a balance already spent from adds to the real balance.
	mustSucceed(t, c, carol, simchain.TxRequest{To: usdcAddr, Data: pack(t, "transfer", bob, usdc(1250))})
	r2, err := c.Faucet(carol, usdcAddr, usdc(3))
	if err != nil {
		t.Fatal(err)
	}
	wantBig(t, "carol USDC after spending and a top-up", c.Balance(usdcAddr, carol), usdc(3))
	if r2.TxHash == r.TxHash || c.Nonce(faucet) != 2 {
		t.Errorf("faucet hashes %s %s, faucet nonce %d", r.TxHash, r2.TxHash, c.Nonce(faucet))
	}
	// Nothing stays with the faucet, and carol paid nothing for the top-ups.
	wantBig(t, "faucet USDC", c.Balance(usdcAddr, faucet), new(big.Int))
}

func TestFaucetNative(t *testing.T) {
	c := newChain(t, ethereum)
	r, err := c.Faucet(carol, native, eth(5))
	if err != nil {
		t.Fatal(err)
	}
	wantBig(t, "carol ETH", c.Balance(native, carol), eth(105))
	wantBig(t, "faucet ETH", c.Balance(native, simchain.FaucetAddress()), new(big.Int))
	tx, _ := c.Transaction(r.TxHash)
	if len(r.Logs) != 0 || tx.Value.Cmp(eth(5)) != 0 || tx.To != carol || r.GasUsed != 21_000 {
		t.Errorf("native faucet transaction %+v, receipt %+v", tx, r)
	}
	if c.Nonce(carol) != 0 {
		t.Error("the faucet consumed the holder's nonce")
	}

	// Native coin sent to a contract that refuses it: mined, failed, and
	// nothing created.
	r, err = c.Faucet(token(t, ethereum, "USDC"), native, eth(1))
	if err == nil || r == nil || r.Succeeded() {
		t.Fatalf("faucet to a token contract: %v, %+v", err, r)
	}
	wantBig(t, "faucet ETH after a failure", c.Balance(native, simchain.FaucetAddress()), new(big.Int))
	wantBig(t, "token contract ETH", c.Balance(native, token(t, ethereum, "USDC")), new(big.Int))
}

func TestFaucetRefusals(t *testing.T) {
	c := newChain(t, ethereum)
	usdcAddr := token(t, ethereum, "USDC")
	if _, err := c.Faucet(bob, usdcAddr, new(big.Int).Sub(math.MaxBig256, usdc(1000))); err != nil {
		t.Fatalf("topping up to 2^256-1: %v", err)
	}
	cases := []struct {
		name   string
		holder common.Address
		token  common.Address
		amount *big.Int
		want   error
	}{
		{"unknown token", carol, common.HexToAddress("0x5555555555555555555555555555555555555555"), usdc(1), simchain.ErrUnknownToken},
		{"zero amount", carol, usdcAddr, new(big.Int), simchain.ErrInvalidFaucetRequest},
		{"negative amount", carol, usdcAddr, big.NewInt(-1), simchain.ErrInvalidFaucetRequest},
		{"no amount", carol, usdcAddr, nil, simchain.ErrInvalidFaucetRequest},
		{"zero address", native, usdcAddr, usdc(1), simchain.ErrInvalidFaucetRequest},
		{"overflow", bob, usdcAddr, big.NewInt(1), simchain.ErrInvalidFaucetRequest},
	}
	head := c.Head().Number
	for _, tc := range cases {
		r, err := c.Faucet(tc.holder, tc.token, tc.amount)
		if !errors.Is(err, tc.want) || r != nil {
			t.Errorf("%s: %v, %v; want %v", tc.name, r, err, tc.want)
		}
	}
	if c.Head().Number != head {
		t.Error("a refused faucet request mined a block")
	}
}

func TestFaucetRefusesTheFaucet(t *testing.T) {
	c := newChain(t, ethereum)
	if _, err := c.Faucet(simchain.FaucetAddress(), native, eth(1)); !errors.Is(err, simchain.ErrInvalidFaucetRequest) {
		t.Errorf("faucet to itself: %v", err)
	}
}
