package simchain_test

import (
	"crypto/ecdsa"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/routing/sim/simchain"
)

const gwei = 1_000_000_000

// signer is a key that signs transactions for tests.
type signer struct {
	key  *ecdsa.PrivateKey
	addr common.Address
}

func newSigner(t testing.TB, seed string) signer {
	t.Helper()
	key, err := crypto.ToECDSA(crypto.Keccak256([]byte(seed)))
	if err != nil {
		t.Fatal(err)
	}
	return signer{key: key, addr: crypto.PubkeyToAddress(key.PublicKey)}
}

// txSpec is a transaction a step signs: kind "legacy", "2930" or "1559"
// (the default), fees in gwei.
type txSpec struct {
	kind          string
	chainID       uint64 // 0: the chain's
	nonce         uint64
	feeCap, tip   float64 // 1559: max fee and priority fee; others: gasPrice is feeCap
	value         *big.Int
	gas           uint64 // 0: 21,000
	to            *common.Address
	data          []byte
	unprotected   bool
	badSignature  bool
	wantErr       string // a refusal's words
	wantMinedNow  []int  // indexes (in this case's sends) mined by this step
	resendOfIndex int    // >0: resend the bytes of send index-1
}

func gweiBig(g float64) *big.Int {
	v, _ := new(big.Float).Mul(big.NewFloat(g), big.NewFloat(gwei)).Int(nil)
	return v
}

func (s signer) sign(t testing.TB, chainID uint64, spec txSpec) []byte {
	t.Helper()
	if spec.chainID != 0 {
		chainID = spec.chainID
	}
	gas := spec.gas
	if gas == 0 {
		gas = 21_000
	}
	to := bob
	if spec.to != nil {
		to = *spec.to
	}
	value := spec.value
	if value == nil {
		value = big.NewInt(1)
	}
	id := new(big.Int).SetUint64(chainID)
	var data types.TxData
	switch spec.kind {
	case "legacy":
		data = &types.LegacyTx{Nonce: spec.nonce, GasPrice: gweiBig(spec.feeCap), Gas: gas, To: &to, Value: value}
	case "2930":
		data = &types.AccessListTx{ChainID: id, Nonce: spec.nonce, GasPrice: gweiBig(spec.feeCap), Gas: gas, To: &to, Value: value,
			AccessList: types.AccessList{{Address: to}}}
	case "create":
		data = &types.DynamicFeeTx{ChainID: id, Nonce: spec.nonce, GasFeeCap: gweiBig(spec.feeCap), GasTipCap: gweiBig(spec.tip), Gas: gas, Value: value}
	default:
		data = &types.DynamicFeeTx{ChainID: id, Nonce: spec.nonce, GasFeeCap: gweiBig(spec.feeCap), GasTipCap: gweiBig(spec.tip), Gas: gas, To: &to, Value: value, Data: spec.data}
	}
	var signerFor types.Signer = types.LatestSignerForChainID(id)
	if spec.unprotected {
		signerFor = types.HomesteadSigner{}
	}
	tx, err := types.SignNewTx(s.key, signerFor, data)
	if err != nil {
		t.Fatal(err)
	}
	if spec.badSignature {
		tx, err = tx.WithSignature(signerFor, append(make([]byte, 64), 0))
		if err != nil {
			t.Fatal(err)
		}
	}
	raw, err := tx.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// step is one thing a case does to its chain: a send, or a base fee set.
type step struct {
	send    *txSpec
	baseFee float64 // gwei, when send is nil
	// What the chain must say afterwards.
	wantNonce, wantPending uint64
}

// TestSendRaw: signed transactions as a node takes them: each type mined
// at its effective price, nonces in order with future ones waiting, the
// base fee holding back what does not reach it, replacements only with
// both fees raised by 10%, and every refusal in a node's words, leaving
// nothing changed.
func TestSendRaw(t *testing.T) {
	me := newSigner(t, "alice's key")
	over := eth(1_000_000)
	deployed := token(t, ethereum, "USDC")
	approve := pack(t, "approve", carol, usdc(5))
	cases := []struct {
		name  string
		steps []step
	}{
		{"every type mines at once", []step{
			{send: &txSpec{kind: "legacy", nonce: 0, feeCap: 3, wantMinedNow: []int{0}}, wantNonce: 1, wantPending: 1},
			{send: &txSpec{kind: "2930", nonce: 1, feeCap: 3, gas: 30_000, wantMinedNow: []int{1}}, wantNonce: 2, wantPending: 2},
			{send: &txSpec{nonce: 2, feeCap: 5, tip: 1, wantMinedNow: []int{2}}, wantNonce: 3, wantPending: 3},
		}},
		{"nonce too low", []step{
			{send: &txSpec{nonce: 0, feeCap: 5, tip: 1, wantMinedNow: []int{0}}, wantNonce: 1, wantPending: 1},
			{send: &txSpec{nonce: 0, feeCap: 6, tip: 1, wantErr: "nonce too low: address " + me.addr.Hex() + ", tx: 0 state: 1"}, wantNonce: 1, wantPending: 1},
		}},
		{"a future nonce waits until the gap fills", []step{
			{send: &txSpec{nonce: 2, feeCap: 5, tip: 1}, wantNonce: 0, wantPending: 0},
			{send: &txSpec{nonce: 1, feeCap: 5, tip: 1}, wantNonce: 0, wantPending: 0},
			{send: &txSpec{nonce: 0, feeCap: 5, tip: 1, wantMinedNow: []int{2, 1, 0}}, wantNonce: 3, wantPending: 3},
		}},
		{"below the base fee waits until it falls", []step{
			{baseFee: 10},
			{send: &txSpec{nonce: 0, feeCap: 5, tip: 1}, wantNonce: 0, wantPending: 1},
			{send: &txSpec{nonce: 1, feeCap: 50, tip: 1}, wantNonce: 0, wantPending: 2},
			{baseFee: 4, wantNonce: 2, wantPending: 2},
		}},
		{"a stuck transaction is replaced with both fees 10% higher", []step{
			{baseFee: 10},
			{send: &txSpec{nonce: 0, feeCap: 5, tip: 1}, wantNonce: 0, wantPending: 1},
			{send: &txSpec{nonce: 0, feeCap: 5.4, tip: 2, wantErr: "replacement transaction underpriced"}, wantNonce: 0, wantPending: 1},
			{send: &txSpec{nonce: 0, feeCap: 20, tip: 1.09, wantErr: "replacement transaction underpriced"}, wantNonce: 0, wantPending: 1},
			{send: &txSpec{nonce: 0, feeCap: 5.5, tip: 1.1}, wantNonce: 0, wantPending: 1},
			{send: &txSpec{nonce: 0, feeCap: 12.1, tip: 1.21, wantMinedNow: []int{4}}, wantNonce: 1, wantPending: 1},
		}},
		{"insufficient funds for gas * price + value", []step{
			{send: &txSpec{nonce: 0, feeCap: 5, tip: 1, value: over, wantErr: "insufficient funds for gas * price + value: balance "}},
		}},
		{"another chain's transaction", []step{
			{send: &txSpec{chainID: 2, nonce: 0, feeCap: 5, tip: 1, wantErr: "invalid chain id for signer: have 2 want 1"}},
			{send: &txSpec{kind: "legacy", chainID: 10, nonce: 0, feeCap: 5, wantErr: "invalid chain id for signer"}},
		}},
		{"unprotected legacy", []step{
			{send: &txSpec{kind: "legacy", unprotected: true, nonce: 0, feeCap: 5, wantErr: "only replay-protected (EIP-155) transactions allowed over RPC"}},
		}},
		{"invalid sender", []step{
			{send: &txSpec{nonce: 0, feeCap: 5, tip: 1, badSignature: true, wantErr: "invalid sender"}},
		}},
		{"already known", []step{
			{send: &txSpec{nonce: 1, feeCap: 5, tip: 1}},
			{send: &txSpec{resendOfIndex: 1, wantErr: "already known"}},
		}},
		{"gas limits and fee caps", []step{
			{send: &txSpec{nonce: 0, feeCap: 5, tip: 1, gas: 20_000, wantErr: "intrinsic gas too low: gas 20000, minimum needed 21000"}},
			{send: &txSpec{nonce: 0, feeCap: 5, tip: 1, gas: simchain.BlockGasLimit + 1, wantErr: "exceeds block gas limit"}},
			{send: &txSpec{nonce: 0, feeCap: 1, tip: 2, wantErr: "max priority fee per gas higher than max fee per gas"}},
			{send: &txSpec{kind: "create", nonce: 0, feeCap: 5, tip: 1, wantErr: "contract creation is not supported"}},
			{send: &txSpec{nonce: 0, feeCap: 5, tip: 1, to: &deployed, value: new(big.Int), data: approve, gas: 60_000, wantMinedNow: []int{4}}, wantNonce: 1, wantPending: 1},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := simchain.New(simchain.Config{Registry: testRegistry(t), ChainID: ethereum,
				Clock: func() time.Time { return genesisTime }, GasPrice: big.NewInt(2 * gwei), BaseFee: big.NewInt(1 * gwei)})
			if err != nil {
				t.Fatal(err)
			}
			var raws [][]byte
			var hashes []common.Hash
			for i, st := range tc.steps {
				var mined []*simchain.Receipt
				if st.send == nil {
					if mined, err = c.SetBaseFee(gweiBig(st.baseFee)); err != nil {
						t.Fatalf("step %d: base fee: %v", i, err)
					}
				} else {
					raw := me.sign(t, ethereum, *st.send)
					if st.send.resendOfIndex > 0 {
						raw = raws[st.send.resendOfIndex-1]
					}
					head := c.Head().Number
					var h common.Hash
					h, mined, err = c.SendRaw(raw)
					raws = append(raws, raw)
					hashes = append(hashes, h)
					if st.send.wantErr != "" {
						if err == nil || !strings.HasPrefix(err.Error(), st.send.wantErr) {
							t.Fatalf("step %d: got %v, want %q", i, err, st.send.wantErr)
						}
						if c.Head().Number != head {
							t.Fatalf("step %d: a refusal mined blocks", i)
						}
						continue
					}
					if err != nil {
						t.Fatalf("step %d: %v", i, err)
					}
					var want []common.Hash
					for _, j := range st.send.wantMinedNow {
						want = append(want, hashes[j])
					}
					var got []common.Hash
					for _, r := range mined {
						got = append(got, r.TxHash)
					}
					if len(got) != len(want) {
						t.Fatalf("step %d: mined %v, want %v", i, got, want)
					}
					for j := range want {
						if got[j] != want[j] {
							t.Fatalf("step %d: mined %v, want %v", i, got, want)
						}
					}
					if _, queued := c.Queued(h); queued == (len(mined) > 0 && mined[0].TxHash == h) {
						t.Fatalf("step %d: queued %v while mined %v", i, queued, got)
					}
				}
				if c.Nonce(me.addr) != st.wantNonce || c.PendingNonce(me.addr) != st.wantPending {
					t.Fatalf("step %d: nonce %d pending %d, want %d and %d", i, c.Nonce(me.addr), c.PendingNonce(me.addr), st.wantNonce, st.wantPending)
				}
				for _, r := range mined {
					if !r.Succeeded() {
						t.Fatalf("step %d: %s failed: %s", i, r.TxHash.Hex(), r.RevertReason)
					}
					b, _ := c.BlockByNumber(r.BlockNumber)
					stx, ok := c.SignedTransaction(r.TxHash)
					if !ok {
						t.Fatalf("step %d: %s mined without its signed transaction", i, r.TxHash.Hex())
					}
					// The effective price: min(max fee, base fee + tip).
					want := new(big.Int).Add(b.BaseFee, stx.GasTipCap())
					if want.Cmp(stx.GasFeeCap()) > 0 {
						want = stx.GasFeeCap()
					}
					if r.EffectiveGasPrice.Cmp(want) != 0 || b.BaseFee.Cmp(c.BaseFee()) != 0 {
						t.Fatalf("step %d: effective price %s, want %s (block base fee %s)", i, r.EffectiveGasPrice, want, b.BaseFee)
					}
				}
			}
		})
	}
}

// TestSendRawPaysTheEffectivePrice: the sender pays gas used × the
// effective price, and the value.
func TestSendRawPaysTheEffectivePrice(t *testing.T) {
	me := newSigner(t, "payer")
	c, err := simchain.New(simchain.Config{Registry: testRegistry(t), ChainID: ethereum,
		Clock: func() time.Time { return genesisTime }, GasPrice: big.NewInt(2 * gwei), BaseFee: big.NewInt(1 * gwei)})
	if err != nil {
		t.Fatal(err)
	}
	before := c.Balance(native, me.addr)
	_, mined, err := c.SendRaw(me.sign(t, ethereum, txSpec{nonce: 0, feeCap: 10, tip: 2, value: big.NewInt(1000)}))
	if err != nil || len(mined) != 1 {
		t.Fatalf("send: %v, mined %d", err, len(mined))
	}
	paid := new(big.Int).Mul(big.NewInt(21_000), gweiBig(3))
	wantBig(t, "balance", c.Balance(native, me.addr), sub(sub(before, paid), big.NewInt(1000)))
	wantBig(t, "effective price", mined[0].EffectiveGasPrice, gweiBig(3))
}

// TestSendRawQueueIsBounded: a sender may have MaxQueuedPerAccount
// transactions waiting; the next is refused as a full pool refuses it, and
// a replacement of a waiting one is still taken.
func TestSendRawQueueIsBounded(t *testing.T) {
	me := newSigner(t, "queue filler")
	c := newChain(t, ethereum)
	for n := uint64(1); n <= simchain.MaxQueuedPerAccount; n++ {
		if _, _, err := c.SendRaw(me.sign(t, ethereum, txSpec{nonce: n, feeCap: 5, tip: 1})); err != nil {
			t.Fatalf("nonce %d: %v", n, err)
		}
	}
	if _, _, err := c.SendRaw(me.sign(t, ethereum, txSpec{nonce: simchain.MaxQueuedPerAccount + 1, feeCap: 5, tip: 1})); !errors.Is(err, simchain.ErrTxPoolFull) {
		t.Fatalf("one more: %v", err)
	}
	if _, _, err := c.SendRaw(me.sign(t, ethereum, txSpec{nonce: 5, feeCap: 6, tip: 2})); err != nil {
		t.Fatalf("a replacement in a full queue: %v", err)
	}
	// The gap filled, all of them are mined in nonce order.
	_, mined, err := c.SendRaw(me.sign(t, ethereum, txSpec{nonce: 0, feeCap: 5, tip: 1}))
	if err != nil || len(mined) != simchain.MaxQueuedPerAccount+1 || c.Nonce(me.addr) != simchain.MaxQueuedPerAccount+1 {
		t.Fatalf("filling the gap: %v, mined %d, nonce %d", err, len(mined), c.Nonce(me.addr))
	}
}
