// Package simrpc is the sandbox chains' Ethereum JSON-RPC node: the
// mapping between JSON-RPC 2.0 requests (single or batched) and a sandbox
// chain (package simchain), so that a wallet, ethers, viem or go-ethereum's
// ethclient pointed at the sandbox reads and sends as on a real chain. It
// is plain Go and moves no bytes over a network: the edge hands it a
// request body and writes back what Serve returns. Values are encoded as
// go-ethereum's hexutil encodes them (quantities as 0x-hex without leading
// zeros, data as 0x-hex bytes).
//
// The methods: eth_chainId, net_version, eth_blockNumber,
// eth_getBlockByNumber (tags latest, pending, safe and finalized name the
// head, earliest the genesis; with baseFeePerGas), eth_getBlockByHash,
// eth_getBalance,
// eth_getTransactionCount (latest; pending counts the sender's queued
// transactions without a gap), eth_getCode, eth_call and eth_estimateGas,
// eth_gasPrice (base fee plus the suggested priority fee),
// eth_maxPriorityFeePerGas, eth_feeHistory, eth_sendRawTransaction,
// eth_getTransactionByHash (a queued transaction with null block fields),
// eth_getTransactionReceipt, eth_getLogs (address and topic filters over
// at most MaxLogRange blocks), and web3_clientVersion, net_listening,
// eth_syncing and eth_accounts, which wallets ask on connecting.
//
// Choices where a node is not bound:
//   - State is kept only at the head: a state read (balance, nonce, code,
//     call) at an older block is refused with -32000 "historical state is
//     not available", at a later one with "header not found".
//   - A contract of the sandbox is Go code, not EVM bytecode: eth_getCode
//     answers ContractCode, a fixed non-empty marker, at every token and
//     contract, and 0x elsewhere.
//   - Errors use the codes nodes use: -32700 a body that is not JSON,
//     -32600 a request that is not a JSON-RPC 2.0 request (or an empty or
//     too large batch), -32601 an unknown method, -32602 parameters that
//     do not parse, 3 a call that reverted (message "execution reverted:
//     reason", data the revert data), -32000 everything the chain refuses,
//     in its words ("nonce too low: ...", "replacement transaction
//     underpriced: ...").
//   - A notification (no id) is executed and not answered; a batch of
//     notifications alone answers nothing (an empty body).
package simrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/routing/sim/simchain"
)

// Chains is what the node needs of the sandbox chains' owner.
type Chains interface {
	// View runs fn on a chain under the owner's lock; the error is a chain
	// that is not a sandbox chain.
	View(ctx context.Context, chainID uint64, fn func(*simchain.Chain)) error
	// SendRaw takes a signed transaction, recorded before it returns; a
	// refusal is the chain's error, in a node's words.
	SendRaw(ctx context.Context, chainID uint64, raw []byte) (common.Hash, error)
}

// Limits of one request.
const (
	// MaxBatch is the most requests one batch may hold.
	MaxBatch = 100
	// MaxLogRange is the most blocks one eth_getLogs may search.
	MaxLogRange = 10_000
	// MaxFeeHistory is the most blocks one eth_feeHistory may cover.
	MaxFeeHistory = 1024
)

// ClientVersion is web3_clientVersion's answer.
const ClientVersion = "swapgate-sandbox/v1"

// ContractCode is what eth_getCode answers at a sandbox contract: the
// bytes of INVALID, so that a client that looks for code finds some, and
// one that would run it learns it cannot.
var ContractCode = []byte{0xfe}

// JSON-RPC error codes.
const (
	CodeParse          = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeServer         = -32000
	CodeReverted       = 3
)

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return e.Message }

func errorf(code int, format string, args ...any) *rpcError {
	return &rpcError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// request is one JSON-RPC request as read.
type request struct {
	JSONRPC string            `json:"jsonrpc"`
	ID      json.RawMessage   `json:"id"`
	Method  *string           `json:"method"`
	Params  []json.RawMessage `json:"params"`
}

// response is one JSON-RPC response.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// MarshalJSON writes result even when it is null, unless there is an
// error, as JSON-RPC requires exactly one of the two.
func (r response) MarshalJSON() ([]byte, error) {
	if r.Error != nil {
		return json.Marshal(struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   *rpcError       `json:"error"`
		}{r.JSONRPC, r.ID, r.Error})
	}
	return json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result"`
	}{r.JSONRPC, r.ID, r.Result})
}

var nullID = json.RawMessage("null")

// Serve answers one request body for a chain: a JSON-RPC response, an
// array of them for a batch, or nothing for notifications alone.
func Serve(ctx context.Context, chains Chains, chainID uint64, body []byte) []byte {
	n := &node{ctx: ctx, chains: chains, id: chainID}
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		var batch []json.RawMessage
		if err := json.Unmarshal(body, &batch); err != nil {
			return encode(response{JSONRPC: "2.0", ID: nullID, Error: errorf(CodeParse, "parse error: %v", err)})
		}
		switch {
		case len(batch) == 0:
			return encode(response{JSONRPC: "2.0", ID: nullID, Error: errorf(CodeInvalidRequest, "empty batch")})
		case len(batch) > MaxBatch:
			return encode(response{JSONRPC: "2.0", ID: nullID, Error: errorf(CodeInvalidRequest, "batch too large: %d requests, at most %d", len(batch), MaxBatch)})
		}
		var out []response
		for _, raw := range batch {
			if r, ok := n.one(raw); ok {
				out = append(out, r)
			}
		}
		if len(out) == 0 {
			return nil
		}
		b, _ := json.Marshal(out)
		return b
	}
	if !json.Valid(body) {
		return encode(response{JSONRPC: "2.0", ID: nullID, Error: errorf(CodeParse, "parse error: the body is not JSON")})
	}
	r, ok := n.one(body)
	if !ok {
		return nil
	}
	return encode(r)
}

func encode(r response) []byte {
	b, err := json.Marshal(r)
	if err != nil {
		b, _ = json.Marshal(response{JSONRPC: "2.0", ID: nullID, Error: errorf(CodeServer, "encode the answer: %v", err)})
	}
	return b
}

// node serves the requests of one body.
type node struct {
	ctx    context.Context
	chains Chains
	id     uint64
}

// one answers one request; ok is false for a notification.
func (n *node) one(raw json.RawMessage) (response, bool) {
	out := response{JSONRPC: "2.0", ID: nullID}
	var req request
	if err := json.Unmarshal(raw, &req); err != nil {
		out.Error = errorf(CodeInvalidRequest, "invalid request: want an object {jsonrpc, id, method, params} with params a list")
		return out, true
	}
	notification := len(req.ID) == 0
	if !notification {
		switch req.ID[0] {
		case '"', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			out.ID = req.ID
		default:
			out.Error = errorf(CodeInvalidRequest, "invalid request: the id must be a string, a number or null")
			return out, true
		}
	}
	switch {
	case req.JSONRPC != "2.0":
		out.Error = errorf(CodeInvalidRequest, `invalid request: jsonrpc must be "2.0"`)
		return out, true
	case req.Method == nil || *req.Method == "":
		out.Error = errorf(CodeInvalidRequest, "invalid request: no method")
		return out, true
	}
	res, err := n.call(*req.Method, req.Params)
	if err != nil {
		var re *rpcError
		if !errors.As(err, &re) {
			re = &rpcError{Code: CodeServer, Message: err.Error()}
		}
		out.Error = re
	} else {
		out.Result = res
	}
	return out, !notification
}

// call dispatches a method.
func (n *node) call(method string, params []json.RawMessage) (any, error) {
	switch method {
	case "eth_chainId":
		return hexutil.Uint64(n.id), nil
	case "net_version":
		return strconv.FormatUint(n.id, 10), nil
	case "web3_clientVersion":
		return ClientVersion, nil
	case "net_listening":
		return true, nil
	case "eth_syncing":
		return false, nil
	case "eth_accounts":
		return []common.Address{}, nil
	case "eth_blockNumber":
		var head uint64
		err := n.view(func(c *simchain.Chain) { head = c.Head().Number })
		return hexutil.Uint64(head), err
	case "eth_gasPrice":
		var p *big.Int
		err := n.view(func(c *simchain.Chain) { p = new(big.Int).Add(c.BaseFee(), c.SuggestedTip()) })
		return (*hexutil.Big)(p), err
	case "eth_maxPriorityFeePerGas":
		var p *big.Int
		err := n.view(func(c *simchain.Chain) { p = c.SuggestedTip() })
		return (*hexutil.Big)(p), err
	case "eth_getBlockByNumber":
		return n.getBlock(params)
	case "eth_getBlockByHash":
		return n.getBlockByHash(params)
	case "eth_getBalance", "eth_getTransactionCount", "eth_getCode":
		return n.stateRead(method, params)
	case "eth_call", "eth_estimateGas":
		return n.simulate(method, params)
	case "eth_feeHistory":
		return n.feeHistory(params)
	case "eth_sendRawTransaction":
		var raw hexutil.Bytes
		if err := param(params, 0, &raw, true); err != nil {
			return nil, err
		}
		h, err := n.chains.SendRaw(n.ctx, n.id, raw)
		if err != nil {
			return nil, err
		}
		return h, nil
	case "eth_getTransactionByHash":
		return n.getTransaction(params)
	case "eth_getTransactionReceipt":
		return n.getReceipt(params)
	case "eth_getLogs":
		return n.getLogs(params)
	}
	return nil, errorf(CodeMethodNotFound, "the method %s does not exist/is not available", method)
}

func (n *node) view(fn func(*simchain.Chain)) error { return n.chains.View(n.ctx, n.id, fn) }

// param decodes positional parameter i into v; a missing optional one
// leaves v as it is.
func param(params []json.RawMessage, i int, v any, required bool) error {
	if i >= len(params) || string(params[i]) == "null" {
		if required {
			return errorf(CodeInvalidParams, "missing value for required argument %d", i)
		}
		return nil
	}
	if err := json.Unmarshal(params[i], v); err != nil {
		return errorf(CodeInvalidParams, "invalid argument %d: %v", i, err)
	}
	return nil
}

// blockTag parses a block parameter: a tag, a quantity, or an EIP-1898
// object with blockNumber; an absent one is latest.
func blockTag(params []json.RawMessage, i int, head uint64) (uint64, error) {
	if i >= len(params) || len(params[i]) == 0 || string(params[i]) == "null" {
		return head, nil
	}
	raw := params[i]
	if len(raw) > 0 && raw[0] == '{' {
		var obj struct {
			BlockNumber *string `json:"blockNumber"`
		}
		if err := json.Unmarshal(raw, &obj); err != nil || obj.BlockNumber == nil {
			return 0, errorf(CodeInvalidParams, "invalid argument %d: want a block number or tag (a block hash is not supported)", i)
		}
		raw, _ = json.Marshal(*obj.BlockNumber)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, errorf(CodeInvalidParams, "invalid argument %d: want a block number or tag", i)
	}
	switch s {
	case "latest", "pending", "safe", "finalized":
		return head, nil
	case "earliest":
		return 0, nil
	}
	v, err := hexutil.DecodeUint64(s)
	if err != nil {
		return 0, errorf(CodeInvalidParams, "invalid argument %d: block number %q: %v", i, s, err)
	}
	return v, nil
}

// isPending reports whether the block parameter i is the pending tag.
func isPending(params []json.RawMessage, i int) bool {
	return i < len(params) && string(params[i]) == `"pending"`
}

// atHead checks that a state read names the head: the node keeps no
// older state.
func atHead(n, head uint64) error {
	switch {
	case n > head:
		return errorf(CodeServer, "header not found")
	case n < head:
		return errorf(CodeServer, "historical state is not available: the sandbox node keeps only the state at its head, block %d", head)
	}
	return nil
}

func (n *node) stateRead(method string, params []json.RawMessage) (any, error) {
	var addr common.Address
	if err := param(params, 0, &addr, true); err != nil {
		return nil, err
	}
	var out any
	var ferr error
	err := n.view(func(c *simchain.Chain) {
		num, err := blockTag(params, 1, c.Head().Number)
		if err == nil {
			err = atHead(num, c.Head().Number)
		}
		if err != nil {
			ferr = err
			return
		}
		switch method {
		case "eth_getBalance":
			out = (*hexutil.Big)(c.Balance(common.Address{}, addr))
		case "eth_getTransactionCount":
			if isPending(params, 1) {
				out = hexutil.Uint64(c.PendingNonce(addr))
			} else {
				out = hexutil.Uint64(c.Nonce(addr))
			}
		case "eth_getCode":
			if c.Code(addr) != nil {
				out = hexutil.Bytes(ContractCode)
			} else {
				out = hexutil.Bytes{}
			}
		}
	})
	if err == nil {
		err = ferr
	}
	return out, err
}

// callArgs is eth_call's and eth_estimateGas's transaction object.
type callArgs struct {
	From  *common.Address `json:"from"`
	To    *common.Address `json:"to"`
	Gas   *hexutil.Uint64 `json:"gas"`
	Value *hexutil.Big    `json:"value"`
	Data  *hexutil.Bytes  `json:"data"`
	Input *hexutil.Bytes  `json:"input"`
	// The fee fields are accepted and play no part in a simulation.
	GasPrice             *hexutil.Big    `json:"gasPrice"`
	MaxFeePerGas         *hexutil.Big    `json:"maxFeePerGas"`
	MaxPriorityFeePerGas *hexutil.Big    `json:"maxPriorityFeePerGas"`
	Nonce                *hexutil.Uint64 `json:"nonce"`
	ChainID              *hexutil.Big    `json:"chainId"`
	Type                 *hexutil.Uint64 `json:"type"`
	AccessList           json.RawMessage `json:"accessList"`
}

func (n *node) simulate(method string, params []json.RawMessage) (any, error) {
	var args callArgs
	if err := param(params, 0, &args, true); err != nil {
		return nil, err
	}
	if args.To == nil {
		return nil, errorf(CodeServer, "%v", simchain.ErrContractCreation)
	}
	if args.Data != nil && args.Input != nil && !bytes.Equal(*args.Data, *args.Input) {
		return nil, errorf(CodeInvalidParams, `invalid argument 0: both "data" and "input" are set and not equal. Please use "input" to pass transaction call data`)
	}
	var data []byte
	if args.Input != nil {
		data = *args.Input
	} else if args.Data != nil {
		data = *args.Data
	}
	var from common.Address
	if args.From != nil {
		from = *args.From
	}
	var gas uint64
	if args.Gas != nil {
		gas = uint64(*args.Gas)
	}
	var out []byte
	var used uint64
	var simErr, ferr error
	err := n.view(func(c *simchain.Chain) {
		if method == "eth_call" {
			num, err := blockTag(params, 1, c.Head().Number)
			if err == nil {
				err = atHead(num, c.Head().Number)
			}
			if err != nil {
				ferr = err
				return
			}
		}
		out, used, simErr = c.Simulate(from, *args.To, (*big.Int)(args.Value), data, gas)
	})
	if err == nil {
		err = ferr
	}
	if err != nil {
		return nil, err
	}
	if simErr != nil {
		var re *simchain.RevertError
		switch {
		case errors.As(simErr, &re):
			return nil, &rpcError{Code: CodeReverted, Message: re.Error(), Data: hexutil.Bytes(re.Data())}
		case errors.Is(simErr, simchain.ErrOutOfGas) && method == "eth_estimateGas":
			return nil, errorf(CodeServer, "gas required exceeds allowance (%d)", used)
		}
		return nil, errorf(CodeServer, "%v", simErr)
	}
	if method == "eth_estimateGas" {
		return hexutil.Uint64(used), nil
	}
	return hexutil.Bytes(out), nil
}

func (n *node) feeHistory(params []json.RawMessage) (any, error) {
	var countRaw json.RawMessage
	if err := param(params, 0, &countRaw, true); err != nil {
		return nil, err
	}
	count, err := quantityOrNumber(countRaw)
	if err != nil {
		return nil, errorf(CodeInvalidParams, "invalid argument 0: %v", err)
	}
	var pct []float64
	if err := param(params, 2, &pct, false); err != nil {
		return nil, err
	}
	for i, p := range pct {
		if p < 0 || p > 100 || (i > 0 && p < pct[i-1]) {
			return nil, errorf(CodeInvalidParams, "invalid reward percentile: %v (percentiles run from 0 to 100, in increasing order)", p)
		}
	}
	type history struct {
		OldestBlock  hexutil.Uint64   `json:"oldestBlock"`
		BaseFee      []*hexutil.Big   `json:"baseFeePerGas"`
		GasUsedRatio []float64        `json:"gasUsedRatio"`
		Reward       [][]*hexutil.Big `json:"reward,omitempty"`
	}
	var out history
	var ferr error
	err = n.view(func(c *simchain.Chain) {
		head := c.Head().Number
		newest, err := blockTag(params, 1, head)
		if err == nil && newest > head {
			err = errorf(CodeServer, "requested block %d is after the head %d", newest, head)
		}
		if err != nil {
			ferr = err
			return
		}
		count = min(count, MaxFeeHistory, newest+1)
		oldest := newest + 1 - count
		out.OldestBlock = hexutil.Uint64(oldest)
		out.BaseFee, out.GasUsedRatio = []*hexutil.Big{}, []float64{}
		for b := oldest; b <= newest && count > 0; b++ {
			blk, _ := c.BlockByNumber(b)
			fee := blockBaseFee(blk)
			out.BaseFee = append(out.BaseFee, (*hexutil.Big)(fee))
			out.GasUsedRatio = append(out.GasUsedRatio, float64(blk.GasUsed)/float64(blk.GasLimit))
			if len(pct) > 0 {
				tip := new(big.Int)
				for _, h := range blk.Transactions {
					if r, ok := c.Receipt(h); ok && r.EffectiveGasPrice != nil && r.EffectiveGasPrice.Cmp(fee) > 0 {
						tip.Sub(r.EffectiveGasPrice, fee)
					}
				}
				row := make([]*hexutil.Big, len(pct))
				for i := range row {
					row[i] = (*hexutil.Big)(tip)
				}
				out.Reward = append(out.Reward, row)
			}
		}
		// The base fee of the block after the newest: the chain's, at the
		// head; the next block's own otherwise.
		next := c.BaseFee()
		if blk, ok := c.BlockByNumber(newest + 1); ok {
			next = blockBaseFee(blk)
		}
		out.BaseFee = append(out.BaseFee, (*hexutil.Big)(next))
	})
	if err == nil {
		err = ferr
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// quantityOrNumber reads a count given as a hex quantity or a JSON number.
func quantityOrNumber(raw json.RawMessage) (uint64, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return hexutil.DecodeUint64(s)
	}
	var v uint64
	if err := json.Unmarshal(raw, &v); err != nil {
		return 0, errors.New("want a hex quantity or a number")
	}
	return v, nil
}

func blockBaseFee(b *simchain.Block) *big.Int {
	if b.BaseFee == nil {
		return new(big.Int)
	}
	return b.BaseFee
}

func (n *node) getBlock(params []json.RawMessage) (any, error) {
	var full bool
	if err := param(params, 1, &full, false); err != nil {
		return nil, err
	}
	if len(params) == 0 {
		return nil, errorf(CodeInvalidParams, "missing value for required argument 0")
	}
	var out any
	var ferr error
	err := n.view(func(c *simchain.Chain) {
		num, err := blockTag(params, 0, c.Head().Number)
		if err != nil {
			ferr = err
			return
		}
		blk, ok := c.BlockByNumber(num)
		if !ok {
			return // null, as a node answers for a block it does not have
		}
		out = blockJSON(c, blk, full)
	})
	if err == nil {
		err = ferr
	}
	return out, err
}

func (n *node) getBlockByHash(params []json.RawMessage) (any, error) {
	h, err := hashParam(params)
	if err != nil {
		return nil, err
	}
	var full bool
	if err := param(params, 1, &full, false); err != nil {
		return nil, err
	}
	var out any
	err = n.view(func(c *simchain.Chain) {
		if blk, ok := c.BlockByHash(h); ok {
			out = blockJSON(c, blk, full)
		}
	})
	return out, err
}

// blockJSON is a block as nodes give it; the roots a sandbox chain does
// not keep are derived from what it does so that they are non-empty
// exactly when the block has transactions.
func blockJSON(c *simchain.Chain, b *simchain.Block, full bool) map[string]any {
	var bloom types.Bloom
	txRoot, receiptRoot := types.EmptyTxsHash, types.EmptyReceiptsHash
	var txs []any
	if len(b.Transactions) > 0 {
		var hashes []byte
		for _, h := range b.Transactions {
			hashes = append(hashes, h[:]...)
			if r, ok := c.Receipt(h); ok {
				addBloom(&bloom, r.Logs)
			}
			if full {
				txs = append(txs, txJSON(c, h))
			} else {
				txs = append(txs, h)
			}
		}
		txRoot = crypto.Keccak256Hash([]byte("transactions"), hashes)
		receiptRoot = crypto.Keccak256Hash([]byte("receipts"), hashes)
	}
	if txs == nil {
		txs = []any{}
	}
	return map[string]any{
		"number":           hexutil.Uint64(b.Number),
		"hash":             b.Hash,
		"parentHash":       b.ParentHash,
		"nonce":            types.BlockNonce{},
		"mixHash":          common.Hash{},
		"sha3Uncles":       types.EmptyUncleHash,
		"logsBloom":        bloom,
		"transactionsRoot": txRoot,
		"stateRoot":        crypto.Keccak256Hash([]byte("state"), b.Hash[:]),
		"receiptsRoot":     receiptRoot,
		"miner":            common.Address{},
		"difficulty":       (*hexutil.Big)(new(big.Int)),
		"totalDifficulty":  (*hexutil.Big)(new(big.Int)),
		"extraData":        hexutil.Bytes{},
		"size":             hexutil.Uint64(512 + 32*len(b.Transactions)),
		"gasLimit":         hexutil.Uint64(b.GasLimit),
		"gasUsed":          hexutil.Uint64(b.GasUsed),
		"timestamp":        hexutil.Uint64(b.Time),
		"baseFeePerGas":    (*hexutil.Big)(blockBaseFee(b)),
		"transactions":     txs,
		"uncles":           []common.Hash{},
	}
}

func addBloom(b *types.Bloom, logs []*types.Log) {
	for _, l := range logs {
		b.Add(l.Address.Bytes())
		for _, t := range l.Topics {
			b.Add(t[:])
		}
	}
}

func hashParam(params []json.RawMessage) (common.Hash, error) {
	var s string
	if err := param(params, 0, &s, true); err != nil {
		return common.Hash{}, err
	}
	b, err := hexutil.Decode(s)
	if err != nil || len(b) != common.HashLength {
		return common.Hash{}, errorf(CodeInvalidParams, "invalid argument 0: want a 32-byte hash as 0x-hex, not %q", s)
	}
	return common.BytesToHash(b), nil
}

func (n *node) getTransaction(params []json.RawMessage) (any, error) {
	h, err := hashParam(params)
	if err != nil {
		return nil, err
	}
	var out any
	err = n.view(func(c *simchain.Chain) {
		if p, ok := c.Queued(h); ok {
			m := signedJSON(p.Tx)
			m["from"] = p.From
			m["gasPrice"] = (*hexutil.Big)(p.Tx.GasFeeCap()) // what it may pay, until it is mined
			m["blockHash"], m["blockNumber"], m["transactionIndex"] = nil, nil, nil
			out = m
			return
		}
		if _, ok := c.Transaction(h); ok {
			out = txJSON(c, h)
		}
	})
	return out, err
}

// signedJSON is a signed transaction's own fields as go-ethereum writes
// them (type, chainId, nonce, fees, v, r, s, hash, ...).
func signedJSON(tx *types.Transaction) map[string]any {
	m := map[string]any{}
	b, err := tx.MarshalJSON()
	if err == nil {
		_ = json.Unmarshal(b, &m)
	}
	return m
}

// txJSON is a mined transaction as nodes give it. A transaction the chain
// mined without a signature (a sandbox broadcast, a faucet top-up, a
// credit) is a legacy transaction with a zero signature and its from.
func txJSON(c *simchain.Chain, h common.Hash) map[string]any {
	tx, _ := c.Transaction(h)
	var m map[string]any
	if stx, ok := c.SignedTransaction(h); ok {
		m = signedJSON(stx)
		m["gasPrice"] = (*hexutil.Big)(tx.GasPrice) // the effective price, once mined
	} else {
		zero := (*hexutil.Big)(new(big.Int))
		m = map[string]any{
			"type": hexutil.Uint64(0), "chainId": (*hexutil.Big)(new(big.Int).SetUint64(tx.ChainID)),
			"nonce": hexutil.Uint64(tx.Nonce), "to": tx.To, "gas": hexutil.Uint64(tx.GasLimit),
			"gasPrice": (*hexutil.Big)(tx.GasPrice), "value": (*hexutil.Big)(tx.Value),
			"input": hexutil.Bytes(tx.Data), "v": zero, "r": zero, "s": zero, "hash": tx.Hash,
		}
	}
	m["from"] = tx.From
	m["blockHash"] = tx.BlockHash
	m["blockNumber"] = hexutil.Uint64(tx.BlockNumber)
	m["transactionIndex"] = hexutil.Uint64(tx.Index)
	return m
}

func (n *node) getReceipt(params []json.RawMessage) (any, error) {
	h, err := hashParam(params)
	if err != nil {
		return nil, err
	}
	var out any
	err = n.view(func(c *simchain.Chain) {
		r, ok := c.Receipt(h)
		if !ok {
			return
		}
		var typ uint8
		if stx, ok := c.SignedTransaction(h); ok {
			typ = stx.Type()
		}
		var bloom types.Bloom
		addBloom(&bloom, r.Logs)
		logs := r.Logs
		if logs == nil {
			logs = []*types.Log{}
		}
		out = map[string]any{
			"type":              hexutil.Uint64(typ),
			"status":            hexutil.Uint64(r.Status),
			"cumulativeGasUsed": hexutil.Uint64(r.CumulativeGasUsed),
			"gasUsed":           hexutil.Uint64(r.GasUsed),
			"effectiveGasPrice": (*hexutil.Big)(r.EffectiveGasPrice),
			"logsBloom":         bloom,
			"logs":              logs,
			"transactionHash":   r.TxHash,
			"transactionIndex":  hexutil.Uint64(r.TxIndex),
			"blockHash":         r.BlockHash,
			"blockNumber":       hexutil.Uint64(r.BlockNumber),
			"from":              r.From,
			"to":                r.To,
			"contractAddress":   nil,
		}
	})
	return out, err
}

// filterArgs is eth_getLogs's filter object.
type filterArgs struct {
	FromBlock json.RawMessage   `json:"fromBlock"`
	ToBlock   json.RawMessage   `json:"toBlock"`
	BlockHash *common.Hash      `json:"blockHash"`
	Address   json.RawMessage   `json:"address"`
	Topics    []json.RawMessage `json:"topics"`
}

func (n *node) getLogs(params []json.RawMessage) (any, error) {
	var f filterArgs
	if err := param(params, 0, &f, true); err != nil {
		return nil, err
	}
	var lf simchain.LogFilter
	if len(f.Address) > 0 && string(f.Address) != "null" {
		var one common.Address
		if err := json.Unmarshal(f.Address, &one); err == nil {
			lf.Addresses = []common.Address{one}
		} else if err := json.Unmarshal(f.Address, &lf.Addresses); err != nil {
			return nil, errorf(CodeInvalidParams, "invalid argument 0: address: want an address or a list of addresses")
		}
	}
	if len(f.Topics) > 4 {
		return nil, errorf(CodeInvalidParams, "invalid argument 0: at most 4 topics")
	}
	for i, t := range f.Topics {
		var alts []common.Hash
		if len(t) > 0 && string(t) != "null" {
			var one common.Hash
			if err := json.Unmarshal(t, &one); err == nil {
				alts = []common.Hash{one}
			} else if err := json.Unmarshal(t, &alts); err != nil {
				return nil, errorf(CodeInvalidParams, "invalid argument 0: topics[%d]: want a topic, a list of topics or null", i)
			}
		}
		lf.Topics = append(lf.Topics, alts)
	}
	var out []*types.Log
	var ferr error
	err := n.view(func(c *simchain.Chain) {
		head := c.Head().Number
		from, to := head, head
		if f.BlockHash != nil {
			if f.FromBlock != nil || f.ToBlock != nil {
				ferr = errorf(CodeInvalidParams, "invalid argument 0: blockHash excludes fromBlock and toBlock")
				return
			}
			from, to = 1, 0 // empty unless the hash is found
			if b, ok := c.BlockByHash(*f.BlockHash); ok {
				from, to = b.Number, b.Number
			}
		} else {
			var err error
			if from, err = blockTag([]json.RawMessage{f.FromBlock}, 0, head); err == nil {
				to, err = blockTag([]json.RawMessage{f.ToBlock}, 0, head)
			}
			if err != nil {
				ferr = errorf(CodeInvalidParams, "invalid argument 0: %s", strings.TrimPrefix(err.Error(), "invalid argument 0: "))
				return
			}
		}
		to = min(to, head)
		switch {
		case from > to:
			return
		case to-from >= MaxLogRange:
			ferr = errorf(CodeInvalidParams, "query exceeds max block range %d", MaxLogRange)
			return
		case to == 0:
			return // the genesis block has no logs
		}
		lf.FromBlock, lf.ToBlock = from, to
		out = c.Logs(lf)
	})
	if err == nil {
		err = ferr
	}
	if out == nil {
		out = []*types.Log{}
	}
	return out, err
}
