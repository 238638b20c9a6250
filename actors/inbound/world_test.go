package inbound

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"sync"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/txintent"
	"github.com/swapgate/swapgate/store"
)

// world is step 2's transaction manager and chains in one fake: every
// submitted intent is mined at once (or held until released), its effect
// applied to allowances, receipts and the bridge's messages; reads answer
// from that state. It counts submissions per key, which must never exceed
// one.
type world struct {
	mu       sync.Mutex
	op       common.Address
	intents  map[string]*txintent.Intent // by key
	byID     map[string]*txintent.Intent
	order    []string // keys in submission order
	submits  map[string]int
	receipts map[common.Hash]*types.Receipt
	allow    map[string]bool // token/spender approved
	// processed are the messages delivered on 369; deliver makes every
	// bridge's message delivered when it is mined.
	processed map[common.Hash]bool
	deliver   bool
	// fail makes a step's intent fail with the reason; hold keeps it
	// unmined until release.
	fail map[string]string
	hold map[string]bool
	// rate is getAmountsOut's output per unit of input; revert makes it
	// revert.
	rate   int64
	revert bool
	// crashSubmit makes the next submissions store the intent and answer
	// an error, as a service killed inside Submit.
	crashSubmit int
}

func newWorld() *world {
	return &world{op: common.HexToAddress("0x0000000000000000000000000000000000000abc"), intents: map[string]*txintent.Intent{},
		byID: map[string]*txintent.Intent{}, submits: map[string]int{}, receipts: map[common.Hash]*types.Receipt{},
		allow: map[string]bool{}, processed: map[common.Hash]bool{}, deliver: true, fail: map[string]string{}, hold: map[string]bool{}, rate: 3}
}

func stepOf(key string) string {
	for i := len(key) - 1; i >= 0; i-- {
		if key[i] == '/' {
			return key[i+1:]
		}
	}
	return key
}

func (w *world) Submit(_ context.Context, r txintent.Request) (*txintent.Intent, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if in, ok := w.intents[r.Key]; ok {
		return in.Clone(), nil
	}
	w.submits[r.Key]++
	value := "0"
	if r.Value != nil {
		value = r.Value.String()
	}
	in := &txintent.Intent{ID: fmt.Sprintf("i%d", len(w.order)+1), Purpose: r.Purpose, Key: r.Key, ChainID: r.ChainID, From: w.op.Hex(),
		To: r.To.Hex(), Data: r.Data, Value: value, GasLimit: r.GasLimit, State: txintent.Sent}
	w.intents[r.Key], w.byID[in.ID] = in, in
	w.order = append(w.order, r.Key)
	if !w.hold[stepOf(r.Key)] {
		w.mine(in)
	}
	if w.crashSubmit > 0 {
		w.crashSubmit--
		return nil, errors.New("killed inside Submit")
	}
	return in.Clone(), nil
}

// release mines the held intents of step.
func (w *world) release(step string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.hold, step)
	for _, k := range w.order {
		if in := w.intents[k]; stepOf(k) == step && !in.Final() {
			w.mine(in)
		}
	}
}

func (w *world) mine(in *txintent.Intent) {
	h := crypto.Keccak256Hash([]byte(in.Key))
	in.Txs = []txintent.Tx{{Hash: h.Hex(), BlockNumber: 100, Status: 1}}
	rc := &types.Receipt{TxHash: h, Status: 1, BlockNumber: big.NewInt(100)}
	if reason, ok := w.fail[stepOf(in.Key)]; ok {
		in.State, in.Reason, in.Txs[0].Status = txintent.Failed, reason, 0
		rc.Status = 0
		w.receipts[h] = rc
		return
	}
	in.State = txintent.Confirmed
	method, args, _ := pulseroute.Decode(in.Data)
	ev := pulseroute.ABI().Events
	switch method {
	case pulseroute.MethodApprove:
		w.allow[in.To+"/"+args[0].(common.Address).Hex()] = true
	case pulseroute.MethodTransferRemote:
		id := crypto.Keccak256Hash([]byte("message/" + in.Key))
		rc.Logs = append(rc.Logs, &types.Log{Topics: []common.Hash{ev["DispatchId"].ID, id}})
		if w.deliver {
			w.processed[id] = true
		}
	case pulseroute.MethodSwapExactTokensForTokens, pulseroute.MethodSwapExactTokensForETH:
		out := new(big.Int).Mul(args[0].(*big.Int), big.NewInt(w.rate))
		data := make([]byte, 128)
		args[0].(*big.Int).FillBytes(data[0:32])
		out.FillBytes(data[96:128])
		rc.Logs = append(rc.Logs, &types.Log{Topics: []common.Hash{ev["Swap"].ID, {}, {}}, Data: data})
	}
	w.receipts[h] = rc
}

func (w *world) Intent(_ context.Context, id string) (*txintent.Intent, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if in, ok := w.byID[id]; ok {
		return in.Clone(), nil
	}
	return nil, store.ErrNotFound
}

func (w *world) IntentByKey(_ context.Context, key string) (*txintent.Intent, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if in, ok := w.intents[key]; ok {
		return in.Clone(), nil
	}
	return nil, store.ErrNotFound
}

func (w *world) Account(uint64) common.Address { return w.op }

func (w *world) CallContract(_ context.Context, _ uint64, msg ethereum.CallMsg) ([]byte, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	m, err := pulseroute.ABI().MethodById(msg.Data[:4])
	if err != nil {
		return nil, err
	}
	args, err := m.Inputs.Unpack(msg.Data[4:])
	if err != nil {
		return nil, err
	}
	switch m.Name {
	case pulseroute.MethodAllowance:
		if w.allow[msg.To.Hex()+"/"+args[1].(common.Address).Hex()] {
			return common.BigToHash(maxAllowance).Bytes(), nil
		}
		return make([]byte, 32), nil
	case pulseroute.MethodQuoteGasPayment:
		return m.Outputs.Pack(big.NewInt(1e15))
	case pulseroute.MethodGetAmountsOut:
		if w.revert {
			return nil, errors.New("execution reverted: PulseXLibrary: INSUFFICIENT_LIQUIDITY")
		}
		in := args[0].(*big.Int)
		return m.Outputs.Pack([]*big.Int{in, new(big.Int).Mul(in, big.NewInt(w.rate))})
	}
	return nil, fmt.Errorf("world: %s not served", m.Name)
}

func (w *world) TransactionReceipt(_ context.Context, _ uint64, h common.Hash) (*types.Receipt, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if rc, ok := w.receipts[h]; ok {
		return rc, nil
	}
	return nil, ethereum.NotFound
}

func (w *world) FilterLogs(_ context.Context, _ uint64, q ethereum.FilterQuery) ([]types.Log, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(q.Topics) != 2 || len(q.Topics[1]) != 1 || q.Topics[0][0] != pulseroute.ABI().Events["ProcessId"].ID {
		return nil, errors.New("world: only ProcessId(messageId) is served")
	}
	if w.processed[q.Topics[1][0]] {
		return []types.Log{{Topics: []common.Hash{q.Topics[0][0], q.Topics[1][0]}, BlockNumber: 101}}, nil
	}
	return nil, nil
}

func (w *world) BlockNumber(context.Context, uint64) (uint64, error) { return 100, nil }

// steps is every submitted intent's step, in order, and whether any key
// was submitted twice.
func (w *world) steps() ([]string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	twice := false
	for _, k := range w.order {
		out = append(out, stepOf(k))
		twice = twice || w.submits[k] > 1
	}
	return out, twice
}

// deliverAll delivers every bridge message mined so far.
func (w *world) deliverAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.deliver = true
	for _, k := range w.order {
		if stepOf(k) == "bridge" && w.intents[k].State == txintent.Confirmed {
			w.processed[crypto.Keccak256Hash([]byte("message/"+k))] = true
		}
	}
}
