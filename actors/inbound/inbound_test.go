package inbound

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/inbound"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/webhook"
	"github.com/swapgate/swapgate/routing/sim/pulsesim"
	pebblestore "github.com/swapgate/swapgate/store/pebble"
)

// fakeChain shows every asked transaction as a successful step 1 that paid
// 25 USDC into Base's inbound receiver, and records deliveries.
type fakeChain struct {
	contracts *pulseroute.Contracts
	from      common.Address
	mu        sync.Mutex
	delivered map[string]string
}

func (f *fakeChain) Evidence(_ context.Context, chainID uint64, _ common.Hash) (inbound.Evidence, error) {
	w, _ := f.contracts.WarpRoute(chainID)
	recv, _ := f.contracts.InboundReceiver(chainID)
	return inbound.Evidence{ChainID: chainID, State: inbound.TxMined, From: f.from, Status: 1, BlockNumber: 7,
		Transfers: []inbound.Transfer{{Token: w.Token, From: common.HexToAddress("0xde"), To: recv, Amount: big.NewInt(25_000_000)}}}, nil
}

func (f *fakeChain) QuoteRef(context.Context, uint64, common.Hash) ([32]byte, bool, error) {
	return [32]byte{}, false, nil
}

func (f *fakeChain) Deliver(_ context.Context, chainID uint64, ref, to, token string, amount *big.Int) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := crypto.Keccak256Hash([]byte(ref)).Hex()
	f.delivered[ref] = fmt.Sprintf("%d %s %s %s", chainID, to, token, amount)
	return h, nil
}

func body(t *testing.T, chainID uint64, tx common.Hash, output common.Address) ([]byte, common.Address) {
	t.Helper()
	key, err := crypto.ToECDSA(crypto.Keccak256([]byte("swapgate/actors-inbound-test")))
	if err != nil {
		t.Fatal(err)
	}
	from := crypto.PubkeyToAddress(key.PublicKey)
	to := common.HexToAddress("0x3333333333333333333333333333333333333333")
	msg := pulseroute.RegisterMessage{TxHash: tx, ToAddress: to, OutputToken: output, DestinationDomain: 369}
	digest, err := pulseroute.Hash(pulseroute.TypedData(chainID, msg))
	if err != nil {
		t.Fatal(err)
	}
	sig, err := crypto.Sign(digest, key)
	if err != nil {
		t.Fatal(err)
	}
	sig[64] += 27
	b, _ := json.Marshal(map[string]any{"txHash": tx.Hex(), "fromAddress": from.Hex(), "toAddress": to.Hex(),
		"outputToken": output.Hex(), "destinationDomain": 369, "signature": "0x" + common.Bytes2Hex(sig)})
	return b, from
}

func TestDepositsRunStepTwoToTheirEnd(t *testing.T) {
	ctx := context.Background()
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	dex, err := pulsesim.NewSandboxChain(reg)
	if err != nil {
		t.Fatal(err)
	}
	contracts := pulseroute.DefaultContracts()
	store, err := pebblestore.Open(t.TempDir(), pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	plsx := common.HexToAddress("0x95B303987A60C71504D99Aa1b13B4DA07b0790ab")
	usdch := contracts.USDCh().Token
	tests := []struct {
		name      string
		output    common.Address
		final     inbound.State
		fallback  bool
		delivered string
	}{
		{"the DEX leg pays the asked token", plsx, inbound.Completed, false, "/swap"},
		{"USDCh asked: the bridge pays it", usdch, inbound.Completed, false, "/bridge"},
		{"no pool for the asked token: the fallback pays USDCh", common.HexToAddress("0x1234567890123456789012345678901234567890"), inbound.RefundedUSDCh, true, "/fallback"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tx := common.BigToHash(big.NewInt(int64(1000 + i)))
			b, from := body(t, 8453, tx, tt.output)
			chain := &fakeChain{contracts: contracts, from: from, delivered: map[string]string{}}
			r, err := Start(ctx, store, chain, nil, Options{Contracts: contracts, DEX: dex})
			if err != nil {
				t.Fatal(err)
			}
			d, perr := r.Register(ctx, b)
			if perr != nil {
				t.Fatal(perr)
			}
			if d.Deposit.State != inbound.Received || d.Deposit.SourceChain != 8453 || d.Deposit.AmountIn.Int64() != 25_000_000 {
				t.Fatalf("registered %+v", d.Deposit)
			}
			deadline := time.Now().Add(5 * time.Second)
			for {
				got, err := r.Deposit(ctx, tx.Hex())
				if err == nil && got.Deposit.State.Terminal() {
					d = got
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("deposit stuck: %+v %v", got, err)
				}
				time.Sleep(5 * time.Millisecond)
			}
			r.Stop()
			if d.Deposit.State != tt.final || d.Deposit.Fallback != tt.fallback || d.Deposit.AmountOut == nil || d.Deposit.AmountOut.Sign() <= 0 {
				t.Fatalf("final %+v", d.Deposit)
			}
			if _, ok := chain.delivered[tx.Hex()+tt.delivered]; !ok || len(chain.delivered) != 1 {
				t.Fatalf("deliveries %v, want one %s", chain.delivered, tt.delivered)
			}
			// The same body again is the same deposit; another body for the
			// same transaction is refused.
			r2, _ := Start(ctx, store, chain, nil, Options{Contracts: contracts, DEX: dex})
			defer r2.Stop()
			if again, perr := r2.Register(ctx, b); perr != nil || again.Deposit.State != tt.final {
				t.Fatalf("replay: %+v %v", again, perr)
			}
			other, _ := body(t, 8453, tx, usdch)
			if tt.output == usdch {
				other, _ = body(t, 8453, tx, plsx)
			}
			if _, perr := r2.Register(ctx, other); perr == nil || perr.Code != apierr.InvalidParams || perr.Details["param"] != "txHash" {
				t.Fatalf("another body for a registered txHash: %v", perr)
			}
		})
	}
	_ = quote.PulseChainID
	_ = webhook.DepositReceived
}

// A deposit whose bridge fails ends FAILED once the bridge would have
// delivered, with its reason and without the fallback, and nothing is paid
// on 369: the runner's one way to FAILED, which the sandbox's failing
// bridges (Options.BridgeFails) drive.
func TestFailingBridgeEndsFailed(t *testing.T) {
	ctx := context.Background()
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	dex, err := pulsesim.NewSandboxChain(reg)
	if err != nil {
		t.Fatal(err)
	}
	contracts := pulseroute.DefaultContracts()
	store, err := pebblestore.Open(t.TempDir(), pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	tx := common.BigToHash(big.NewInt(2000))
	b, from := body(t, 8453, tx, common.HexToAddress("0x95B303987A60C71504D99Aa1b13B4DA07b0790ab"))
	chain := &fakeChain{contracts: contracts, from: from, delivered: map[string]string{}}
	var asked []string
	var mu sync.Mutex
	r, err := Start(ctx, store, chain, nil, Options{Contracts: contracts, DEX: dex, BridgeFails: func(h string) bool {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, h)
		return true
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	if _, perr := r.Register(ctx, b); perr != nil {
		t.Fatal(perr)
	}
	var d *inbound.Record
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, err := r.Deposit(ctx, tx.Hex())
		if err == nil && got.Deposit.State.Terminal() {
			d = got
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deposit stuck: %+v %v", got, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if d.Deposit.State != inbound.Failed || d.Deposit.Fallback || d.Deposit.AmountOut != nil ||
		d.Deposit.BridgeTxHash == (common.Hash{}) || d.Deposit.Reason != "the bridge to chain 369 did not deliver; the USDC waits on chain 8453 for an operator" {
		t.Fatalf("final %+v", d.Deposit)
	}
	chain.mu.Lock()
	defer chain.mu.Unlock()
	if len(chain.delivered) != 0 {
		t.Fatalf("a failed bridge paid %v", chain.delivered)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || asked[0] != tx.Hex() {
		t.Fatalf("BridgeFails asked for %v, want once for %s", asked, tx.Hex())
	}
}
