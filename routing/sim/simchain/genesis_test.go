package simchain_test

import (
	"errors"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/sim/simchain"
)

// TestInitStorageBeforeTheFirstTransactionOnly: a contract's storage slot
// written at genesis reads back (as eth_getStorageAt would) without mining
// anything; an address without code is refused, and after a transaction
// InitStorage answers ErrNotGenesis. Before InitStorage a contract could
// not start with state of its own (a pool's reserves).
func TestInitStorageBeforeTheFirstTransactionOnly(t *testing.T) {
	c := newChain(t, ethereum)
	deployHold(t, c)
	key, val := common.HexToHash("0x08"), common.HexToHash("0x1234")
	if err := c.InitStorage(holdAddr, key, val); err != nil {
		t.Fatal(err)
	}
	if got := c.Storage(holdAddr, key); got != val {
		t.Fatalf("slot reads %s, want %s", got.Hex(), val.Hex())
	}
	if c.Head().Number != 0 || len(c.Logs(simchain.LogFilter{})) != 0 {
		t.Fatal("InitStorage mined something")
	}
	if err := c.InitStorage(alice, key, val); err == nil {
		t.Fatal("storage written for an account without code")
	}
	mustSucceed(t, c, alice, simchain.TxRequest{To: bob, Value: eth(1)})
	if err := c.InitStorage(holdAddr, key, common.Hash{}); !errors.Is(err, simchain.ErrNotGenesis) {
		t.Fatalf("InitStorage after a transaction: %v, want ErrNotGenesis", err)
	}
	if got := c.Storage(holdAddr, key); got != val {
		t.Fatalf("slot reads %s after the refusal, want %s", got.Hex(), val.Hex())
	}
}
