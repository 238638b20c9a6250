// Package extsigner signs the operator's transactions through an external
// signer speaking JSON-RPC eth_signTransaction, as web3signer and Clef do,
// so that the operator's key never enters Swapgate's process or store.
//
// The request is the transaction's fields as the signers take them:
// {from, to, gas, maxFeePerGas, maxPriorityFeePerGas, value, nonce, data,
// chainId}, every number a hex quantity (a legacy transaction sends
// gasPrice instead of the two fee caps). The signers answer in two shapes,
// both accepted: Clef {raw, tx} and web3signer the raw transaction's hex
// string.
//
// A signer's answer is checked before it is used, as every upstream answer
// is: it must decode as a transaction of the asked type whose chain id,
// nonce, recipient, value, data, gas limit and fees are the ones asked, and
// recover to the configured address. Anything else is refused with the
// reason (ErrRefused) and nothing is broadcast: a signer that signs for
// another account, another chain or other calldata is broken or hostile,
// and its signature must never reach a node.
package extsigner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"
)

// ErrRefused marks an answer of the signer that is not the transaction that
// was asked for, or a signer's own refusal; the error says why.
var ErrRefused = errors.New("external signer refused")

// Caller makes one JSON-RPC call; go-ethereum's *rpc.Client is one.
type Caller interface {
	CallContext(ctx context.Context, result any, method string, args ...any) error
}

var _ Caller = (*rpc.Client)(nil)

// DefaultTimeout bounds one signing call when the caller's context has no
// earlier deadline. Clef may wait for a human to approve a request; a
// signer that needs longer than this blocks the account's next nonce, so
// the service gives up and retries rather than wait without end.
const DefaultTimeout = 30 * time.Second

// signerConns is how many idle connections to the signer are kept: the
// transaction manager signs many intents of one account in a row, and a
// connection per signature would be a TCP (and TLS) handshake each.
const signerConns = 64

// Signer signs transactions for one address through an external signer.
type Signer struct {
	c       Caller
	addr    common.Address
	url     string
	timeout time.Duration
	close   func()
}

// New returns a signer for addr over a connected client. url only names
// the signer in errors.
func New(c Caller, addr common.Address, url string) *Signer {
	return &Signer{c: c, addr: addr, url: url, timeout: DefaultTimeout, close: func() {}}
}

// Dial connects to the signer at url (HTTP, HTTPS, WebSocket or IPC, as
// go-ethereum dials them) for addr. It does not call the signer: Check
// does.
func Dial(ctx context.Context, url string, addr common.Address) (*Signer, error) {
	if addr == (common.Address{}) {
		return nil, fmt.Errorf("extsigner: the zero address is no account to sign for")
	}
	tr := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:   true,
		MaxIdleConns:        signerConns,
		MaxIdleConnsPerHost: signerConns,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
	}
	c, err := rpc.DialOptions(ctx, url, rpc.WithHTTPClient(&http.Client{Transport: tr}))
	if err != nil {
		return nil, fmt.Errorf("extsigner: dial %s: %w", redact(url), err)
	}
	s := New(c, addr, url)
	s.close = c.Close
	return s, nil
}

// Close releases the connection.
func (s *Signer) Close() { s.close() }

// Address is the account the signer signs for.
func (s *Signer) Address() common.Address { return s.addr }

// Check asks the signer which accounts it holds (eth_accounts) and fails
// when the configured address is not among them, so that a wrong
// --signer-address or --signer-url is a start error rather than the first
// intent's. A signer that does not list its accounts (Clef may refuse the
// call to a client it has not approved) passes: its first signature is
// checked anyway.
func (s *Signer) Check(ctx context.Context) error {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	var accounts []common.Address
	err := s.c.CallContext(ctx, &accounts, "eth_accounts")
	var rpcErr rpc.Error
	switch {
	case errors.As(err, &rpcErr):
		return nil
	case err != nil:
		return fmt.Errorf("extsigner: %s: eth_accounts: %w", redact(s.url), err)
	case !slices.Contains(accounts, s.addr):
		return fmt.Errorf("extsigner: %s does not hold %s (it lists %d accounts): %w", redact(s.url), s.addr, len(accounts), ErrRefused)
	}
	return nil
}

// SignTx has the external signer sign tx for chainID and returns the signed
// transaction once it is checked to be tx, for chainID, signed by Address.
// Dynamic-fee (EIP-1559) and legacy transactions are signed; others are
// refused before the call.
func (s *Signer) SignTx(ctx context.Context, chainID *big.Int, tx *types.Transaction) (*types.Transaction, error) {
	if chainID == nil || chainID.Sign() <= 0 {
		return nil, fmt.Errorf("extsigner: chain id %v: want a positive chain id", chainID)
	}
	args, err := argsOf(s.addr, chainID, tx)
	if err != nil {
		return nil, fmt.Errorf("extsigner: %w", err)
	}
	ctx, cancel := s.bound(ctx)
	defer cancel()
	var answer json.RawMessage
	if err := s.c.CallContext(ctx, &answer, "eth_signTransaction", args); err != nil {
		var rpcErr rpc.Error
		if errors.As(err, &rpcErr) {
			return nil, fmt.Errorf("extsigner: %s: eth_signTransaction nonce %d on chain %s: %w: %s", redact(s.url), tx.Nonce(), chainID, ErrRefused, rpcErr.Error())
		}
		return nil, fmt.Errorf("extsigner: %s: eth_signTransaction nonce %d on chain %s: %w", redact(s.url), tx.Nonce(), chainID, err)
	}
	signed, err := Verify(answer, s.addr, chainID, tx)
	if err != nil {
		return nil, fmt.Errorf("extsigner: %s: nonce %d on chain %s: %w", redact(s.url), tx.Nonce(), chainID, err)
	}
	return signed, nil
}

// bound gives ctx the signer's timeout when it has no earlier deadline.
func (s *Signer) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if d, ok := ctx.Deadline(); ok && time.Until(d) <= s.timeout {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, s.timeout)
}

// Args is the eth_signTransaction request: the transaction's fields as
// web3signer and Clef read them, numbers as hex quantities.
type Args struct {
	From                 common.Address  `json:"from"`
	To                   *common.Address `json:"to,omitempty"`
	Gas                  hexutil.Uint64  `json:"gas"`
	GasPrice             *hexutil.Big    `json:"gasPrice,omitempty"`
	MaxFeePerGas         *hexutil.Big    `json:"maxFeePerGas,omitempty"`
	MaxPriorityFeePerGas *hexutil.Big    `json:"maxPriorityFeePerGas,omitempty"`
	Value                *hexutil.Big    `json:"value"`
	Nonce                hexutil.Uint64  `json:"nonce"`
	Data                 hexutil.Bytes   `json:"data"`
	ChainID              *hexutil.Big    `json:"chainId"`
}

// argsOf is the request for tx from from on chainID.
func argsOf(from common.Address, chainID *big.Int, tx *types.Transaction) (Args, error) {
	value := tx.Value()
	if value == nil {
		value = new(big.Int)
	}
	a := Args{
		From:    from,
		To:      tx.To(),
		Gas:     hexutil.Uint64(tx.Gas()),
		Value:   (*hexutil.Big)(value),
		Nonce:   hexutil.Uint64(tx.Nonce()),
		Data:    hexutil.Bytes(tx.Data()),
		ChainID: (*hexutil.Big)(chainID),
	}
	if a.Data == nil {
		a.Data = hexutil.Bytes{}
	}
	switch tx.Type() {
	case types.DynamicFeeTxType:
		a.MaxFeePerGas = (*hexutil.Big)(tx.GasFeeCap())
		a.MaxPriorityFeePerGas = (*hexutil.Big)(tx.GasTipCap())
	case types.LegacyTxType:
		a.GasPrice = (*hexutil.Big)(tx.GasPrice())
	default:
		return Args{}, fmt.Errorf("transaction type %d: only dynamic-fee (2) and legacy (0) transactions are signed", tx.Type())
	}
	return a, nil
}

// clefAnswer is Clef's answer to eth_signTransaction.
type clefAnswer struct {
	Raw hexutil.Bytes `json:"raw"`
}

// rawOf reads the signed transaction's bytes from either answer shape:
// web3signer's hex string or Clef's {raw, tx}.
func rawOf(answer json.RawMessage) ([]byte, error) {
	trimmed := bytes.TrimSpace(answer)
	switch {
	case len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")):
		return nil, fmt.Errorf("%w: an empty answer", ErrRefused)
	case trimmed[0] == '"':
		var raw hexutil.Bytes
		if err := json.Unmarshal(trimmed, &raw); err != nil {
			return nil, fmt.Errorf("%w: the answer is not hex: %v", ErrRefused, err)
		}
		return raw, nil
	case trimmed[0] == '{':
		var c clefAnswer
		if err := json.Unmarshal(trimmed, &c); err != nil {
			return nil, fmt.Errorf("%w: the answer's raw is not hex: %v", ErrRefused, err)
		}
		if len(c.Raw) == 0 {
			return nil, fmt.Errorf("%w: the answer has no raw transaction", ErrRefused)
		}
		return c.Raw, nil
	}
	return nil, fmt.Errorf("%w: the answer is neither a hex string nor {raw, tx}", ErrRefused)
}

// Verify decodes a signer's answer and returns the signed transaction when
// it is want, for chainID, signed by from; otherwise ErrRefused with the
// first difference.
func Verify(answer json.RawMessage, from common.Address, chainID *big.Int, want *types.Transaction) (*types.Transaction, error) {
	raw, err := rawOf(answer)
	if err != nil {
		return nil, err
	}
	got := new(types.Transaction)
	if err := got.UnmarshalBinary(raw); err != nil {
		return nil, fmt.Errorf("%w: the raw transaction does not decode: %v", ErrRefused, err)
	}
	if reason := differs(got, want, chainID); reason != "" {
		return nil, fmt.Errorf("%w: the signed transaction's %s", ErrRefused, reason)
	}
	sender, err := types.Sender(types.LatestSignerForChainID(chainID), got)
	if err != nil {
		return nil, fmt.Errorf("%w: the signature does not recover: %v", ErrRefused, err)
	}
	if sender != from {
		return nil, fmt.Errorf("%w: the transaction is signed by %s, not %s", ErrRefused, sender, from)
	}
	return got, nil
}

// differs names the first field in which got is not want on chainID, ""
// when none.
func differs(got, want *types.Transaction, chainID *big.Int) string {
	type field struct {
		name      string
		got, want any
		same      bool
	}
	bigEq := func(a, b *big.Int) bool {
		if a == nil || b == nil {
			return a == nil && b == nil
		}
		return a.Cmp(b) == 0
	}
	addr := func(a *common.Address) string {
		if a == nil {
			return "none"
		}
		return a.Hex()
	}
	// A legacy transaction signed without EIP-155 carries no chain id and
	// could be replayed on every chain: it is refused as another chain's.
	gotChain := got.ChainId()
	if got.Type() == types.LegacyTxType && !got.Protected() {
		gotChain = new(big.Int)
	}
	fields := []field{
		{"type", got.Type(), want.Type(), got.Type() == want.Type()},
		{"chain id", gotChain, chainID, bigEq(gotChain, chainID)},
		{"nonce", got.Nonce(), want.Nonce(), got.Nonce() == want.Nonce()},
		{"recipient", addr(got.To()), addr(want.To()), addr(got.To()) == addr(want.To())},
		{"value", got.Value(), want.Value(), bigEq(got.Value(), orZero(want.Value()))},
		{"data", hexutil.Bytes(got.Data()), hexutil.Bytes(want.Data()), bytes.Equal(got.Data(), want.Data())},
		{"gas limit", got.Gas(), want.Gas(), got.Gas() == want.Gas()},
		{"fee cap", got.GasFeeCap(), want.GasFeeCap(), bigEq(got.GasFeeCap(), want.GasFeeCap())},
		{"tip cap", got.GasTipCap(), want.GasTipCap(), bigEq(got.GasTipCap(), want.GasTipCap())},
	}
	for _, f := range fields {
		if !f.same {
			return fmt.Sprintf("%s is %v, not %v", f.name, clip(fmt.Sprint(f.got)), clip(fmt.Sprint(f.want)))
		}
	}
	return ""
}

func orZero(v *big.Int) *big.Int {
	if v == nil {
		return new(big.Int)
	}
	return v
}

// clip bounds a value quoted in a refusal: calldata can be long.
func clip(s string) string {
	const n = 80
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// redact drops a URL's credentials (user:password@) before it is quoted in
// an error or a log.
func redact(url string) string {
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok {
		return url
	}
	host, path, _ := strings.Cut(rest, "/")
	if at := strings.LastIndex(host, "@"); at >= 0 {
		host = "…@" + host[at+1:]
	}
	if path != "" {
		return scheme + "://" + host + "/" + path
	}
	return scheme + "://" + host
}
