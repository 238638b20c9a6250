package txm_test

import (
	"context"
	"math/big"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/actors/txm"
	"github.com/swapgate/swapgate/routing/domain/txintent"
)

// lyingSigner signs with the operator's key what its change makes of the
// transaction asked, or with another key, until told to behave.
type lyingSigner struct {
	*txm.LocalSigner
	change func(*types.DynamicFeeTx)
	other  bool
	honest atomic.Bool
	asked  atomic.Int64
}

func (s *lyingSigner) SignTx(ctx context.Context, chainID *big.Int, tx *types.Transaction) (*types.Transaction, error) {
	s.asked.Add(1)
	if s.honest.Load() {
		return s.LocalSigner.SignTx(ctx, chainID, tx)
	}
	if s.other {
		k, _ := crypto.GenerateKey()
		return types.SignTx(tx, types.LatestSignerForChainID(chainID), k)
	}
	d := &types.DynamicFeeTx{ChainID: tx.ChainId(), Nonce: tx.Nonce(), GasTipCap: tx.GasTipCap(), GasFeeCap: tx.GasFeeCap(),
		Gas: tx.Gas(), To: tx.To(), Value: tx.Value(), Data: tx.Data()}
	s.change(d)
	return s.LocalSigner.SignTx(ctx, chainID, types.NewTx(d))
}

// A signature of anything but the transaction asked, or by another key,
// is never stored or sent: the intent waits queued until the signer signs
// what it is asked.
func TestManagerRefusesWhatTheSignerChanged(t *testing.T) {
	for name, s := range map[string]*lyingSigner{
		"value": {change: func(d *types.DynamicFeeTx) { d.Value = big.NewInt(1e18) }},
		"data":  {change: func(d *types.DynamicFeeTx) { d.Data = []byte{1} }},
		"to":    {change: func(d *types.DynamicFeeTx) { a := common.HexToAddress("0xbad"); d.To = &a }},
		"key":   {other: true},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			s.LocalSigner = e.signer
			o := e.options(e.node, e.store)
			o.Signer = s
			m := e.start(o)
			in, err := m.Submit(e.ctx, pay("p", 5))
			if err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(10 * time.Second)
			for s.asked.Load() < 2 && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			got, err := m.Intent(e.ctx, in.ID)
			if err != nil || got.State != txintent.Queued || len(got.Txs) != 0 {
				t.Fatalf("after a changed signature: %+v %v", got, err)
			}
			if n, _ := e.node.NonceAt(e.ctx, e.signer.Address(), nil); n != 0 {
				t.Fatalf("the account sent %d transactions", n)
			}
			s.honest.Store(true)
			e.minedOnce(e.waitFinal("p"))
			if e.balance() != 5 {
				t.Fatalf("the recipient got %d", e.balance())
			}
		})
	}
}
