package pulserpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/ethereum/go-ethereum/params"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
)

var (
	bob    = common.HexToAddress("0x2222222222222222222222222222222222222222")
	tokenA = common.HexToAddress("0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48")
	tokenB = common.HexToAddress(pulseroute.WPLSAddress)
)

// artifact is a compiled contract as committed under testdata.
type artifact struct {
	ContractName     string          `json:"contractName"`
	ABI              json.RawMessage `json:"abi"`
	Bytecode         hexutil.Bytes   `json:"bytecode"`
	DeployedBytecode hexutil.Bytes   `json:"deployedBytecode"`
}

func loadArtifact(t *testing.T, name string) artifact {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var a artifact
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return a
}

// chain is a simulated chain with the two oracle contracts deployed by
// ordinary transactions.
type chain struct {
	backend       *simulated.Backend
	gasOracle     common.Address
	amountsOracle common.Address
}

func newChain(t *testing.T) *chain {
	t.Helper()
	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	deployer := crypto.PubkeyToAddress(key.PublicKey)
	b := simulated.NewBackend(types.GenesisAlloc{deployer: {Balance: new(big.Int).Mul(big.NewInt(100), big.NewInt(params.Ether))}})
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("close backend: %v", err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := b.Client()
	chainID, err := client.ChainID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	signer := types.LatestSignerForChainID(chainID)
	deploy := func(name string, nonce uint64) common.Address {
		a := loadArtifact(t, name)
		tx, err := types.SignNewTx(key, signer, &types.DynamicFeeTx{
			ChainID: chainID, Nonce: nonce, Gas: 300_000,
			GasTipCap: big.NewInt(params.GWei), GasFeeCap: big.NewInt(100 * params.GWei),
			Data: a.Bytecode,
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := client.SendTransaction(ctx, tx); err != nil {
			t.Fatalf("deploy %s: %v", name, err)
		}
		b.Commit()
		rcpt, err := client.TransactionReceipt(ctx, tx.Hash())
		if err != nil || rcpt.Status != types.ReceiptStatusSuccessful {
			t.Fatalf("deploy %s: receipt %+v, %v", name, rcpt, err)
		}
		code, err := client.CodeAt(ctx, rcpt.ContractAddress, nil)
		if err != nil || !bytes.Equal(code, a.DeployedBytecode) {
			t.Fatalf("deploy %s: code %x, want %x (%v)", name, code, a.DeployedBytecode, err)
		}
		return rcpt.ContractAddress
	}
	return &chain{backend: b, gasOracle: deploy("GasOracle", 0), amountsOracle: deploy("AmountsOracle", 1)}
}

func TestChainReadsOnSimulatedBackend(t *testing.T) {
	c := newChain(t)
	client := c.backend.Client()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	for _, dest := range []uint32{369, 1, 42161} {
		got, err := QuoteGasPayment(ctx, client, c.gasOracle, dest)
		if err != nil {
			t.Fatalf("QuoteGasPayment(%d): %v", dest, err)
		}
		want := new(big.Int).Mul(big.NewInt(int64(dest)), big.NewInt(1e12))
		if got.Cmp(want) != 0 {
			t.Errorf("QuoteGasPayment(%d) = %s, want %s", dest, got, want)
		}
	}

	amounts, err := GetAmountsOut(ctx, client, c.amountsOracle, big.NewInt(1_000_000), []common.Address{tokenA, tokenB, bob})
	if err != nil {
		t.Fatalf("GetAmountsOut: %v", err)
	}
	want := []int64{1_000_000, 997_000, 994_009}
	if len(amounts) != len(want) {
		t.Fatalf("amounts %v, want %v", amounts, want)
	}
	for i := range want {
		if amounts[i].Int64() != want[i] {
			t.Errorf("amounts %v, want %v", amounts, want)
		}
	}

	failures := map[string]func() error{
		// The amounts oracle reverts on quoteGasPayment's selector.
		"revert": func() error { _, err := QuoteGasPayment(ctx, client, c.amountsOracle, 369); return err },
		// An address without code answers an empty result.
		"no code": func() error {
			_, err := GetAmountsOut(ctx, client, bob, big.NewInt(1), []common.Address{tokenA, tokenB})
			return err
		},
		// A one-word answer where an array is expected does not decode.
		"bad result": func() error {
			_, err := GetAmountsOut(ctx, client, c.gasOracle, big.NewInt(1), []common.Address{tokenA, tokenB})
			return err
		},
	}
	for name, f := range failures {
		var ae *apierr.Error
		if err := f(); !errors.As(err, &ae) || ae.Code != apierr.RPCFailure {
			t.Errorf("%s: error %v, want RPC_FAILURE", name, err)
		}
	}
}

// fakeCaller answers every eth_call with ret and err, and records the call.
type fakeCaller struct {
	ret  []byte
	err  error
	last ethereum.CallMsg
}

func (f *fakeCaller) CallContract(_ context.Context, msg ethereum.CallMsg, _ *big.Int) ([]byte, error) {
	f.last = msg
	return f.ret, f.err
}

func TestChainReadErrors(t *testing.T) {
	ctx := context.Background()
	router := common.HexToAddress(pulseroute.PulseXRouterAddress)
	path := []common.Address{tokenA, tokenB}

	f := &fakeCaller{err: context.DeadlineExceeded}
	_, err := QuoteGasPayment(ctx, f, router, 369)
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Code != apierr.RPCFailure || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("transport error: %v", err)
	}
	if f.last.To == nil || *f.last.To != router {
		t.Errorf("call sent to %v", f.last.To)
	}
	if sel := pulseroute.ABI().Methods[pulseroute.MethodQuoteGasPayment].ID; !bytes.Equal(f.last.Data[:4], sel) {
		t.Errorf("call data %x", f.last.Data)
	}

	// A well-formed array of the wrong length.
	oneAmount := hexutil.MustDecode("0x" +
		"0000000000000000000000000000000000000000000000000000000000000020" +
		"0000000000000000000000000000000000000000000000000000000000000001" +
		"0000000000000000000000000000000000000000000000000000000000000005")
	_, err = GetAmountsOut(ctx, &fakeCaller{ret: oneAmount}, router, big.NewInt(5), path)
	if !errors.As(err, &ae) || ae.Code != apierr.RPCFailure {
		t.Errorf("short array: %v", err)
	}

	// A well-formed array that is not an answer to the call: the amount
	// asked about is not where the router puts it (getAmountsOut's first,
	// getAmountsIn's last).
	twoAmounts := hexutil.MustDecode("0x" +
		"0000000000000000000000000000000000000000000000000000000000000020" +
		"0000000000000000000000000000000000000000000000000000000000000002" +
		"0000000000000000000000000000000000000000000000000000000000000007" +
		"0000000000000000000000000000000000000000000000000000000000000009")
	if _, err = GetAmountsOut(ctx, &fakeCaller{ret: twoAmounts}, router, big.NewInt(5), path); !errors.As(err, &ae) || ae.Code != apierr.RPCFailure {
		t.Errorf("getAmountsOut whose first amount is not amountIn: %v", err)
	}
	if _, err = GetAmountsIn(ctx, &fakeCaller{ret: twoAmounts}, router, big.NewInt(5), path); !errors.As(err, &ae) || ae.Code != apierr.RPCFailure {
		t.Errorf("getAmountsIn whose last amount is not amountOut: %v", err)
	}
	if got, err := GetAmountsOut(ctx, &fakeCaller{ret: twoAmounts}, router, big.NewInt(7), path); err != nil || got[1].Int64() != 9 {
		t.Errorf("getAmountsOut of 7: %v, %v", got, err)
	}
	if got, err := GetAmountsIn(ctx, &fakeCaller{ret: twoAmounts}, router, big.NewInt(9), path); err != nil || got[0].Int64() != 7 {
		t.Errorf("getAmountsIn of 9: %v, %v", got, err)
	}

	// Invalid input is the caller's bug, not an RPC failure, and sends nothing.
	f = &fakeCaller{}
	_, err = GetAmountsOut(ctx, f, router, big.NewInt(5), path[:1])
	if err == nil || errors.As(err, &ae) || f.last.To != nil {
		t.Errorf("short path: %v (sent %v)", err, f.last.To)
	}
}
