// Package signer is a local stand-in of an external transaction signer
// (web3signer, Clef) for tests: a net/http handler answering JSON-RPC
// eth_signTransaction and eth_accounts for one test key.
//
// The request is read as Clef reads it (go-ethereum's apitypes.SendTxArgs
// and its ToTransaction), so a request it signs is one Clef would take.
// The answer comes in either signer's shape: web3signer's hex string of the
// raw transaction, or Clef's {raw, tx}. A test can make it misbehave
// (Tamper: the transaction changed before it is signed; SignWith: signed by
// another key; Refuse: a JSON-RPC error, as Clef's "Request denied") to
// hold the service's checks of a signer's answer to their word.
package signer

import (
	"crypto/ecdsa"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
)

// Shape is how the stand-in answers eth_signTransaction.
type Shape int

const (
	// Web3Signer answers the raw transaction as a hex string.
	Web3Signer Shape = iota
	// Clef answers {raw, tx}.
	Clef
)

// Server is the stand-in. Its zero value is not usable: New.
type Server struct {
	key   *ecdsa.PrivateKey
	shape Shape

	mu       sync.Mutex
	tamper   func(*types.DynamicFeeTx)
	signWith *ecdsa.PrivateKey
	refuse   string
	calls    atomic.Int64
}

// New returns a stand-in signing with key in shape.
func New(key *ecdsa.PrivateKey, shape Shape) *Server {
	return &Server{key: key, shape: shape}
}

// Start serves a stand-in on a loopback test server; close it when done.
func Start(key *ecdsa.PrivateKey, shape Shape) (*Server, *httptest.Server) {
	s := New(key, shape)
	return s, httptest.NewServer(s)
}

// Address is the account the stand-in holds.
func (s *Server) Address() common.Address { return crypto.PubkeyToAddress(s.key.PublicKey) }

// Signed is how many transactions it has signed.
func (s *Server) Signed() int { return int(s.calls.Load()) }

// Tamper changes every dynamic-fee transaction before it is signed (nil:
// none), as a broken or hostile signer would.
func (s *Server) Tamper(f func(*types.DynamicFeeTx)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tamper = f
}

// SignWith signs with another key from now on (nil: its own).
func (s *Server) SignWith(k *ecdsa.PrivateKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.signWith = k
}

// Refuse answers every signing request with a JSON-RPC error carrying msg
// ("" signs again).
func (s *Server) Refuse(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse = msg
}

type request struct {
	ID     json.RawMessage   `json:"id"`
	Method string            `json:"method"`
	Params []json.RawMessage `json:"params"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// ServeHTTP answers one JSON-RPC request (batches are not needed: the
// signers are called one transaction at a time).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req request
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		writeJSON(w, response{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &rpcError{-32700, "parse error"}})
		return
	}
	res := response{JSONRPC: "2.0", ID: req.ID}
	switch req.Method {
	case "eth_accounts":
		res.Result = []common.Address{s.Address()}
	case "eth_signTransaction":
		out, err := s.sign(req.Params)
		if err != nil {
			res.Error = err
		} else {
			res.Result = out
		}
	default:
		res.Error = &rpcError{-32601, "the method " + req.Method + " does not exist/is not available"}
	}
	writeJSON(w, res)
}

// sign reads the request as Clef does and signs it.
func (s *Server) sign(params []json.RawMessage) (any, *rpcError) {
	s.mu.Lock()
	tamper, signWith, refuse := s.tamper, s.signWith, s.refuse
	s.mu.Unlock()
	if refuse != "" {
		return nil, &rpcError{-32000, refuse}
	}
	if len(params) != 1 {
		return nil, &rpcError{-32602, "missing value for required argument 0"}
	}
	var args apitypes.SendTxArgs
	if err := json.Unmarshal(params[0], &args); err != nil {
		return nil, &rpcError{-32602, "invalid argument 0: " + err.Error()}
	}
	if args.From.Address() != s.Address() {
		return nil, &rpcError{-32000, "unknown account " + args.From.Address().Hex()}
	}
	if args.ChainID == nil {
		return nil, &rpcError{-32000, "chainId is required"}
	}
	tx, err := args.ToTransaction()
	if err != nil {
		return nil, &rpcError{-32000, err.Error()}
	}
	chainID := (*big.Int)(args.ChainID)
	if tamper != nil && tx.Type() == types.DynamicFeeTxType {
		d := &types.DynamicFeeTx{
			ChainID: new(big.Int).Set(chainID), Nonce: tx.Nonce(), GasTipCap: tx.GasTipCap(), GasFeeCap: tx.GasFeeCap(),
			Gas: tx.Gas(), To: tx.To(), Value: tx.Value(), Data: tx.Data(),
		}
		tamper(d)
		chainID = d.ChainID
		tx = types.NewTx(d)
	}
	key := s.key
	if signWith != nil {
		key = signWith
	}
	signed, err := types.SignTx(tx, types.LatestSignerForChainID(chainID), key)
	if err != nil {
		return nil, &rpcError{-32000, err.Error()}
	}
	raw, err := signed.MarshalBinary()
	if err != nil {
		return nil, &rpcError{-32000, err.Error()}
	}
	s.calls.Add(1)
	if s.shape == Clef {
		return struct {
			Raw hexutil.Bytes      `json:"raw"`
			Tx  *types.Transaction `json:"tx"`
		}{raw, signed}, nil
	}
	return hexutil.Bytes(raw), nil
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
