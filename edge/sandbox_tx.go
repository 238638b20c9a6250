package edge

import (
	"encoding/hex"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/evmtx"
)

// receiptView is GET /v1/sandbox/tx/{txHash}'s answer: a mined transaction
// and its receipt as a node reports them (numbers that can exceed 2^53 are
// decimal strings; value and effectiveGasPrice are in wei).
type receiptView struct {
	TxHash            string    `json:"txHash"`
	ChainID           uint64    `json:"chainId"`
	Status            string    `json:"status"`
	BlockNumber       uint64    `json:"blockNumber"`
	BlockHash         string    `json:"blockHash"`
	Timestamp         uint64    `json:"timestamp"`
	From              string    `json:"from"`
	To                string    `json:"to"`
	Nonce             uint64    `json:"nonce"`
	Value             string    `json:"value"`
	Data              string    `json:"data"`
	GasLimit          uint64    `json:"gasLimit"`
	GasUsed           uint64    `json:"gasUsed"`
	EffectiveGasPrice string    `json:"effectiveGasPrice"`
	RevertReason      *string   `json:"revertReason"`
	Logs              []logView `json:"logs"`
}

// logView is one log of a receipt.
type logView struct {
	LogIndex uint     `json:"logIndex"`
	Address  string   `json:"address"`
	Topics   []string `json:"topics"`
	Data     string   `json:"data"`
}

// sandboxTx answers GET /v1/sandbox/tx/{txHash}: the transaction with that
// hash on whichever sandbox chain mined it (broadcasts and faucet
// top-ups alike), with its receipt: {txHash, chainId, status ("success" or
// "reverted"), blockNumber, blockHash, timestamp (Unix seconds), from, to,
// nonce, value, data, gasLimit, gasUsed, effectiveGasPrice, revertReason
// (null on success), logs: [{logIndex, address, topics, data}]} — a
// reverted transaction has no logs. A malformed hash is INVALID_PARAMS
// naming txHash; one no sandbox chain mined is 404 NOT_FOUND.
func (s *Server) sandboxTx(r *Request) error {
	v, _ := r.Ctx.UserValue("txHash").(string)
	hash, aerr := txHashParam("txHash", v)
	if aerr != nil {
		return aerr
	}
	m, ok := s.deps.Sandbox.Transaction(r.Context(), hash)
	if !ok {
		return apierr.New(apierr.NotFound, "no sandbox chain has mined transaction "+v).With("param", "txHash")
	}
	writeJSON(r, statusOK, viewReceipt(m))
	return nil
}

func viewReceipt(m evmtx.Mined) receiptView {
	tx, rc := m.Transaction, m.Receipt
	v := receiptView{
		TxHash: rc.TxHash.Hex(), ChainID: m.ChainID, Status: receiptStatus(rc),
		BlockNumber: rc.BlockNumber, BlockHash: rc.BlockHash.Hex(), Timestamp: rc.BlockTime,
		From: tx.From.Hex(), To: tx.To.Hex(), Nonce: tx.Nonce, Value: tx.Value.String(),
		Data: "0x" + hex.EncodeToString(tx.Data), GasLimit: tx.GasLimit, GasUsed: rc.GasUsed,
		EffectiveGasPrice: rc.EffectiveGasPrice.String(), Logs: make([]logView, 0, len(rc.Logs)),
	}
	if !rc.Succeeded() {
		reason := rc.RevertReason
		v.RevertReason = &reason
	}
	for _, l := range rc.Logs {
		lv := logView{LogIndex: l.Index, Address: l.Address.Hex(), Topics: make([]string, len(l.Topics)), Data: "0x" + hex.EncodeToString(l.Data)}
		for i, t := range l.Topics {
			lv.Topics[i] = t.Hex()
		}
		v.Logs = append(v.Logs, lv)
	}
	return v
}
