package edge

import (
	"errors"
	"fmt"
	"strings"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/evmtx"
)

// broadcastBody is POST /v1/sandbox/broadcast's body.
type broadcastBody struct {
	ChainID            *uint64        `json:"chainId"`
	From               *string        `json:"from"`
	TransactionRequest *txRequestBody `json:"transactionRequest"`
}

// txRequestBody is a transaction request as a quote gives it. to, data,
// value and gasLimit are what is executed; from, chainId and gasPrice are
// accepted so that a quote's transactionRequest can be sent as it is, and
// from and chainId must then agree with the body's.
type txRequestBody struct {
	To       *string `json:"to"`
	Data     *string `json:"data"`
	Value    *string `json:"value"`
	GasLimit *string `json:"gasLimit"`
	From     *string `json:"from"`
	ChainID  *uint64 `json:"chainId"`
	GasPrice *string `json:"gasPrice"`
}

// broadcastView is the answer: the mined transaction's outcome.
type broadcastView struct {
	TxHash       string `json:"txHash"`
	ChainID      uint64 `json:"chainId"`
	Status       string `json:"status"`
	BlockNumber  uint64 `json:"blockNumber"`
	GasUsed      uint64 `json:"gasUsed"`
	RevertReason string `json:"revertReason,omitempty"`
}

// sandboxBroadcast answers POST /v1/sandbox/broadcast {chainId, from,
// transactionRequest: {to, data, value, gasLimit}}: it executes the request
// on the sandbox chain as from would sign it, mines it in a block of its
// own and answers once the transaction is recorded (it survives a
// restart). data is 0x-prefixed hex; value and gasLimit are hex quantities
// or decimal integers (no gasLimit: the block gas limit).
//
// A transaction that reverts is still mined and answered 200 with its hash,
// status "reverted" and revertReason (an ERC-20 input not approved to the
// quote's estimate.approvalAddress gives "ERC20: insufficient allowance"),
// exactly as a wallet learns it from a chain; status "success" otherwise.
// The answer is {txHash, chainId, status, blockNumber, gasUsed,
// revertReason (only on "reverted")}; GET /v1/sandbox/tx/{txHash} has the
// full receipt.
//
// Refused before anything is mined, as a node refuses a transaction:
// INVALID_PARAMS naming chainId (unknown or not EVM), from (malformed, a
// contract, or unable to pay gas limit × gas price: fund it with POST
// /v1/sandbox/faucet), transactionRequest.to, .data, .value or .gasLimit
// (malformed, or a gas limit outside [intrinsic gas, block gas limit]),
// and transactionRequest.from or .chainId when they disagree with the
// body's. The gas price is the sandbox chain's own, fixed per chain; a
// gasPrice in the request must be a quantity and is otherwise ignored.
func (s *Server) sandboxBroadcast(r *Request) error {
	var body broadcastBody
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	if body.ChainID == nil {
		return apierr.Param("chainId", "chainId is required")
	}
	if _, err := s.sandboxChainParam("chainId", *body.ChainID); err != nil {
		return err
	}
	if body.From == nil {
		return apierr.Param("from", "from is required: the address that sends the transaction")
	}
	from, aerr := evmAddressParam("from", *body.From)
	if aerr != nil {
		return aerr
	}
	txb := body.TransactionRequest
	if txb == nil {
		return apierr.Param("transactionRequest", "transactionRequest is required: {to, data, value, gasLimit}")
	}
	if txb.From != nil && !strings.EqualFold(*txb.From, *body.From) {
		return apierr.Param("transactionRequest.from", "transactionRequest.from differs from from").With("value", *txb.From)
	}
	if txb.ChainID != nil && *txb.ChainID != *body.ChainID {
		return apierr.Param("transactionRequest.chainId", fmt.Sprintf("transactionRequest.chainId %d differs from chainId %d", *txb.ChainID, *body.ChainID))
	}
	// The gas price is the sandbox chain's own, but one that is given must
	// be a gas price, as a node would insist.
	if txb.GasPrice != nil {
		if _, ok := evmtx.ParseQuantity(*txb.GasPrice); !ok {
			return apierr.Param("transactionRequest.gasPrice", "transactionRequest.gasPrice: want wei as a hex quantity or a decimal integer below 2^256")
		}
	}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	tx, err := evmtx.ParseTxRequest(str(txb.To), str(txb.Data), str(txb.Value), str(txb.GasLimit))
	if err != nil {
		var re *evmtx.RequestError
		if errors.As(err, &re) {
			return apierr.Param("transactionRequest."+re.Field, "transactionRequest."+re.Field+": "+re.Reason)
		}
		return err
	}
	rc, err := s.deps.Sandbox.Send(r.Context(), *body.ChainID, from, tx)
	if err != nil {
		return sendError(err)
	}
	v := broadcastView{TxHash: rc.TxHash.Hex(), ChainID: *body.ChainID, Status: receiptStatus(rc),
		BlockNumber: rc.BlockNumber, GasUsed: rc.GasUsed, RevertReason: rc.RevertReason}
	writeJSON(r, statusOK, v)
	return nil
}

// sendError maps a transaction the chain refused to mine to the parameter
// at fault.
func sendError(err error) error {
	switch {
	case errors.Is(err, evmtx.ErrInsufficientFundsForGas):
		return apierr.Param("from", "from cannot pay gas limit × gas price in the native coin; top it up with POST /v1/sandbox/faucet or lower transactionRequest.gasLimit").Wrap(err).
			With("reason", "insufficient_funds_for_gas")
	case errors.Is(err, evmtx.ErrInvalidSender):
		return apierr.Param("from", "from cannot send transactions: "+chainReason(err)).Wrap(err)
	case errors.Is(err, evmtx.ErrIntrinsicGas), errors.Is(err, evmtx.ErrGasLimitTooHigh):
		return apierr.Param("transactionRequest.gasLimit", "transactionRequest.gasLimit: "+chainReason(err)).Wrap(err)
	case errors.Is(err, evmtx.ErrInvalidValue):
		return apierr.Param("transactionRequest.value", "transactionRequest.value: "+chainReason(err)).Wrap(err)
	}
	return sandboxError(err, "chainId")
}

// chainReason is the sandbox chain's own words for a refusal, without the
// package prefixes the error picked up on its way.
func chainReason(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, "simchain: "); i >= 0 {
		msg = msg[i+len("simchain: "):]
	}
	return msg
}
