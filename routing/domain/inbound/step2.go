package inbound

import (
	"github.com/ethereum/go-ethereum/common"
)

// The transactions of step 2, each one intent of the transaction manager
// keyed by the deposit (IntentKey), so that a restart finds the one it
// submitted and never sends another.
const (
	// StepApprove: approve(warp router) on the source chain's USDC, when
	// the operator account's allowance is short of the deposit.
	StepApprove = "approve"
	// StepBridge: transferRemote(369, operator account, amountIn) on the
	// source chain's warp router.
	StepBridge = "bridge"
	// StepDeliver: USDCh transfer(toAddress, amountIn) on 369 when
	// outputToken is USDCh itself.
	StepDeliver = "deliver"
	// StepSwapApprove: approve(PulseX router) on USDCh, when the
	// allowance is short.
	StepSwapApprove = "swap-approve"
	// StepSwap: swapExactTokensForTokens (swapExactTokensForETH for the
	// native coin) on the PulseX router, to toAddress.
	StepSwap = "swap"
	// StepFallback: USDCh transfer(toAddress, amountIn) on 369 after the
	// swap could not be made.
	StepFallback = "fallback"
)

// IntentKey is the transaction manager's key of a deposit's step: one
// intent per key, ever.
func IntentKey(txHash common.Hash, step string) string {
	return "inbound/" + txHash.Hex() + "/" + step
}

// StepTx is one transaction step 2 submitted: its step, chain, the
// transaction manager's intent and, once mined, the transaction's hash.
type StepTx struct {
	Step     string
	ChainID  uint64
	IntentID string
	TxHash   common.Hash
	// PulseBlock is chain 369's block number before the bridge was
	// submitted (StepBridge): its delivery is looked for from there on.
	PulseBlock uint64 `json:",omitempty"`
}

// WithTx is d with s recorded: an entry of the same step is replaced, a
// new step appended. d itself is not changed.
func (d Deposit) WithTx(s StepTx) Deposit {
	txs := make([]StepTx, 0, len(d.Txs)+1)
	found := false
	for _, t := range d.Txs {
		if t.Step == s.Step {
			t, found = s, true
		}
		txs = append(txs, t)
	}
	if !found {
		txs = append(txs, s)
	}
	d.Txs = txs
	return d
}

// Tx is the recorded transaction of a step, if any.
func (d Deposit) Tx(step string) (StepTx, bool) {
	for _, t := range d.Txs {
		if t.Step == step {
			return t, true
		}
	}
	return StepTx{}, false
}

// TxData is one of step 2's transactions as the deposit's status and
// webhook events show it: only those mined.
type TxData struct {
	Step    string `json:"step"`
	ChainID uint64 `json:"chainId"`
	TxHash  string `json:"txHash"`
}

func (d Deposit) txData() []TxData {
	var out []TxData
	for _, t := range d.Txs {
		if t.TxHash != (common.Hash{}) {
			out = append(out, TxData{Step: t.Step, ChainID: t.ChainID, TxHash: t.TxHash.Hex()})
		}
	}
	return out
}
