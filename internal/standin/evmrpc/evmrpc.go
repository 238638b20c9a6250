// Package evmrpc is a local stand-in of EVM JSON-RPC nodes, for end-to-end
// tests and the bench: one HTTP server answers for several chains, each at
// its own path ("/369", "/42161"), the calls Swapgate's live readers make,
// deterministically, after a configurable latency:
//
//   - eth_chainId, eth_blockNumber;
//   - eth_call of quoteGasPayment(uint32) (selector 0xf2ed8c53) on the
//     chain's Hyperlane warp-route router (USDCh itself on chain 369), of
//     getAmountsOut(uint256,address[]) (0xd06ca61f) on the PulseX router
//     0x165C3410fC91EF562C50559f7d2289fEbed552d9 of chain 369, from
//     constant-product reserves with PulseX's 0.29% fee (amountOut =
//     in·9971·rOut / (rIn·10000 + in·9971), hop by hop; a hop without a
//     pool reverts, as the router's getReserves on a missing pair does), of
//     getAmountsIn(uint256,address[]) (0x1f00ca74) on the same router, the
//     same pools read backwards (amountIn = rIn·out·10000 / ((rOut −
//     out)·9971) + 1, hop by hop from the last; an output a pool cannot give
//     reverts with INSUFFICIENT_LIQUIDITY), of the PulseX factory's
//     getPair(address,address) (0xe6a43905; the zero address for tokens
//     without a pool), and of each pair's token0() (0x0dfe1681, the lower
//     address) and getReserves() (0x0902f1ac, the same pools), and of ERC-20 balanceOf(address) (0x70a08231) on any address; a call to
//     anything else returns no data, as a call to an address without code;
//     after SetPoolDrift, pools that move between two reads at the latest
//     block;
//   - eth_feeHistory, eth_gasPrice, eth_maxPriorityFeePerGas;
//   - eth_getBalance;
//   - eth_getTransactionByHash and eth_getTransactionReceipt of the
//     transactions a test registers (AddTransaction) or sends
//     (eth_sendRawTransaction: mined at once, successful, an ERC-20
//     transfer(address,uint256) logging its Transfer event), null for
//     others.
//
// Requests may be batched (a JSON array), as go-ethereum's BatchCallContext
// sends them. ABI encoding goes through go-ethereum's accounts/abi.
package evmrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/internal/standin/kit"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/quote"
)

// Chain ids the stand-in serves by default: PulseChain and Arbitrum One.
const (
	ChainPulse    = quote.PulseChainID
	ChainArbitrum = 42161
)

// Defaults of Config.
const (
	// DefaultBlockNumber is every chain's block height at start.
	DefaultBlockNumber = 20_000_000
	// DefaultBaseFee and DefaultTip are eth_feeHistory's base fee and
	// priority-fee reward at every percentile (0.1 gwei and 0.01 gwei).
	DefaultBaseFee = 100_000_000
	DefaultTip     = 10_000_000
	// DefaultPoolSideUSD is each side of the default PulseX pools.
	DefaultPoolSideUSD = 1_000_000
	// DefaultGasPaymentUSD is the default interchain gas payment, in the
	// source chain's native coin.
	DefaultGasPaymentUSD = 0.5
)

// stateABI is the part of the contracts' ABIs the stand-in answers.
const stateABI = `[
{"type":"function","name":"quoteGasPayment","stateMutability":"view","inputs":[{"name":"destination","type":"uint32"}],"outputs":[{"name":"","type":"uint256"}]},
{"type":"function","name":"getAmountsOut","stateMutability":"view","inputs":[{"name":"amountIn","type":"uint256"},{"name":"path","type":"address[]"}],"outputs":[{"name":"amounts","type":"uint256[]"}]},
{"type":"function","name":"getAmountsIn","stateMutability":"view","inputs":[{"name":"amountOut","type":"uint256"},{"name":"path","type":"address[]"}],"outputs":[{"name":"amounts","type":"uint256[]"}]},
{"type":"function","name":"balanceOf","stateMutability":"view","inputs":[{"name":"owner","type":"address"}],"outputs":[{"name":"","type":"uint256"}]},
{"type":"function","name":"getPair","stateMutability":"view","inputs":[{"name":"tokenA","type":"address"},{"name":"tokenB","type":"address"}],"outputs":[{"name":"pair","type":"address"}]},
{"type":"function","name":"getReserves","stateMutability":"view","inputs":[],"outputs":[{"name":"reserve0","type":"uint112"},{"name":"reserve1","type":"uint112"},{"name":"blockTimestampLast","type":"uint32"}]},
{"type":"function","name":"token0","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"address"}]}]`

// Pool is one PulseX pair and its reserves.
type Pool struct {
	A, B               common.Address
	ReserveA, ReserveB *big.Int
}

// Config configures the stand-in. Zero fields take the defaults.
type Config struct {
	// Latency delays every HTTP request (a batch once).
	Latency time.Duration
	// Chains are the chain ids served ({369, 42161} when empty).
	Chains []uint64
	// Contracts gives the warp-route routers and the PulseX router
	// (pulseroute.DefaultContracts when nil).
	Contracts *pulseroute.Contracts
	// Pools are chain 369's PulseX pairs (when nil: every token of Prices
	// on 369 paired with USDCh, DefaultPoolSideUSD on each side at the
	// table's prices).
	Pools []Pool
	// Prices prices the default pools and gas payments
	// (kit.DefaultTable when nil).
	Prices *kit.Table
	// GasPayments is quoteGasPayment's answer per source chain, in its
	// native coin (default: DefaultGasPaymentUSD at Prices, or 10^14 wei
	// where the native coin has no price).
	GasPayments map[uint64]*big.Int
	// BlockNumber, BaseFee and Tip default to the constants above.
	BlockNumber  uint64
	BaseFee, Tip *big.Int
}

// Mined is how a registered transaction stands.
type Mined struct {
	// Pending leaves the transaction out of any block: no receipt.
	Pending bool
	// Status is the receipt's status (types.ReceiptStatusSuccessful or
	// Failed).
	Status uint64
	// Logs are the receipt's logs; their transaction and block fields are
	// filled in.
	Logs []*types.Log
	// BlockNumber is the block it was mined in (the chain's current block
	// when zero).
	BlockNumber uint64
}

type registeredTx struct {
	tx    *types.Transaction
	from  common.Address
	mined Mined
}

type chainState struct {
	id       uint64
	block    uint64
	native   map[common.Address]*big.Int
	tokens   map[common.Address]map[common.Address]*big.Int // token → holder → balance
	txs      map[common.Hash]*registeredTx
	gasPay   *big.Int
	router   common.Address // warp-route router, zero if none
	hasRoute bool
}

type pairKey struct{ a, b common.Address }

// Server is the stand-in's handler. It is safe for concurrent use.
type Server struct {
	cfg      Config
	latency  *kit.Latency
	abi      abi.ABI
	pulsex   common.Address
	factory  common.Address
	reserves map[pairKey][2]*big.Int // (in, out) reserves by direction
	// pairs are the pools' pair contracts: address → tokens (sorted).
	pairs map[common.Address]pairKey

	mu     sync.Mutex
	chains map[uint64]*chainState
	calls  map[string]int
	// drift and moves are SetPoolDrift's: the parts per million each
	// getAmountsOut takes from the pools' outputs, and how many reads have
	// moved them since it was set. Held under mu.
	drift, moves int64
}

// New builds the stand-in.
func New(cfg Config) (*Server, error) {
	parsed, err := abi.JSON(strings.NewReader(stateABI))
	if err != nil {
		return nil, fmt.Errorf("evmrpc standin: abi: %w", err)
	}
	if len(cfg.Chains) == 0 {
		cfg.Chains = []uint64{ChainPulse, ChainArbitrum}
	}
	if cfg.Contracts == nil {
		cfg.Contracts = pulseroute.DefaultContracts()
	}
	if cfg.Prices == nil {
		if cfg.Prices, err = kit.DefaultTable(); err != nil {
			return nil, err
		}
	}
	if cfg.BlockNumber == 0 {
		cfg.BlockNumber = DefaultBlockNumber
	}
	if cfg.BaseFee == nil {
		cfg.BaseFee = big.NewInt(DefaultBaseFee)
	}
	if cfg.Tip == nil {
		cfg.Tip = big.NewInt(DefaultTip)
	}
	if cfg.Pools == nil {
		cfg.Pools = DefaultPools(cfg.Prices, cfg.Contracts)
	}
	s := &Server{cfg: cfg, latency: kit.NewLatency(cfg.Latency), abi: parsed, pulsex: cfg.Contracts.PulseX().Router,
		factory: cfg.Contracts.PulseX().Factory, reserves: map[pairKey][2]*big.Int{}, pairs: map[common.Address]pairKey{},
		chains: map[uint64]*chainState{}, calls: map[string]int{}}
	for _, p := range cfg.Pools {
		if p.ReserveA == nil || p.ReserveB == nil || p.ReserveA.Sign() <= 0 || p.ReserveB.Sign() <= 0 {
			return nil, fmt.Errorf("evmrpc standin: pool %s/%s has no reserves", p.A.Hex(), p.B.Hex())
		}
		s.reserves[pairKey{p.A, p.B}] = [2]*big.Int{p.ReserveA, p.ReserveB}
		s.reserves[pairKey{p.B, p.A}] = [2]*big.Int{p.ReserveB, p.ReserveA}
		s.pairs[PairAddress(p.A, p.B)] = sortedKey(p.A, p.B)
	}
	for _, id := range cfg.Chains {
		st := &chainState{id: id, block: cfg.BlockNumber, native: map[common.Address]*big.Int{},
			tokens: map[common.Address]map[common.Address]*big.Int{}, txs: map[common.Hash]*registeredTx{}}
		if w, ok := cfg.Contracts.WarpRoute(id); ok {
			st.router, st.hasRoute = w.Router, true
		}
		st.gasPay = cfg.GasPayments[id]
		if st.gasPay == nil {
			st.gasPay = defaultGasPayment(cfg.Prices, id)
		}
		s.chains[id] = st
	}
	return s, nil
}

// DefaultPools pairs every token of prices on chain 369 (but USDCh and the
// native coin) with USDCh, DefaultPoolSideUSD on each side.
func DefaultPools(prices *kit.Table, contracts *pulseroute.Contracts) []Pool {
	usdch := contracts.USDCh().Token
	usdchTok, ok := prices.Lookup(ChainPulse, usdch.Hex())
	if !ok {
		usdchTok = kit.Token{ChainID: ChainPulse, Address: usdch.Hex(), Decimals: pulseroute.USDCDecimals, PriceUSD: 1}
	}
	var out []Pool
	for _, t := range prices.Tokens() {
		if t.ChainID != ChainPulse || !common.IsHexAddress(t.Address) || t.PriceUSD <= 0 {
			continue
		}
		a := common.HexToAddress(t.Address)
		if a == usdch || a == (common.Address{}) {
			continue
		}
		out = append(out, Pool{A: a, B: usdch, ReserveA: units(DefaultPoolSideUSD, t), ReserveB: units(DefaultPoolSideUSD, usdchTok)})
	}
	return out
}

// units is usd worth of t in base units.
func units(usd float64, t kit.Token) *big.Int {
	one := kit.Token{Decimals: 0, PriceUSD: 1}
	return kit.Exchange(one, t, big.NewInt(int64(usd)))
}

func defaultGasPayment(prices *kit.Table, chain uint64) *big.Int {
	if n, ok := prices.Lookup(chain, "0x0000000000000000000000000000000000000000"); ok && n.PriceUSD > 0 {
		cents := kit.Token{Decimals: 2, PriceUSD: 1}
		return kit.Exchange(cents, n, big.NewInt(int64(DefaultGasPaymentUSD*100)))
	}
	return big.NewInt(100_000_000_000_000)
}

// Start builds the stand-in and serves it on a loopback port; the caller
// closes the returned server. URL gives each chain's endpoint.
func Start(cfg Config) (*Server, *httptest.Server, error) {
	s, err := New(cfg)
	if err != nil {
		return nil, nil, err
	}
	return s, kit.Start(s), nil
}

// URL is the endpoint of chain on a server started at base.
func URL(base string, chain uint64) string { return base + "/" + strconv.FormatUint(chain, 10) }

// SetLatency changes the delay of the answers from now on.
func (s *Server) SetLatency(d time.Duration) { s.latency.Set(d) }

// SetPoolDrift makes chain 369's PulseX pools move as a busy chain's do
// between two reads at the latest block: from now on the k-th
// getAmountsOut (from 0) answers each hop's output less k×ppm parts per
// million, and getAmountsIn reads the pools as the next getAmountsOut
// will. 0 holds them still again.
func (s *Server) SetPoolDrift(ppm int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drift, s.moves = ppm, 0
}

// poolMove is the fraction (over 10⁶) of their outputs the pools answer
// now, and moves them once more when read is set (a getAmountsOut). The
// caller holds s.mu, as every call's answer does.
func (s *Server) poolMove(read bool) *big.Int {
	keep := 1_000_000 - s.drift*s.moves
	if read && s.drift != 0 {
		s.moves++
	}
	return big.NewInt(max(keep, 1))
}

// PairAddress is the stand-in's address of the PulseX pair of a and b
// (in either order): made up from the two tokens, the same for every
// stand-in.
func PairAddress(a, b common.Address) common.Address {
	k := sortedKey(a, b)
	return common.BytesToAddress(crypto.Keccak256(k.a.Bytes(), k.b.Bytes()))
}

// sortedKey orders a pair's tokens as PulseX's factory does: token0 is the
// lower address.
func sortedKey(a, b common.Address) pairKey {
	if bytes.Compare(a.Bytes(), b.Bytes()) > 0 {
		a, b = b, a
	}
	return pairKey{a, b}
}

// SetPool sets the reserves of the pool of a and b (ra of a, rb of b), as
// a swap on chain would; the pool must exist.
func (s *Server) SetPool(a, b common.Address, ra, rb *big.Int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.reserves[pairKey{a, b}]; !ok {
		return fmt.Errorf("evmrpc standin: no pool %s/%s", a.Hex(), b.Hex())
	}
	s.reserves[pairKey{a, b}] = [2]*big.Int{new(big.Int).Set(ra), new(big.Int).Set(rb)}
	s.reserves[pairKey{b, a}] = [2]*big.Int{new(big.Int).Set(rb), new(big.Int).Set(ra)}
	return nil
}

// Calls counts the requests answered per method, batched ones included.
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// EthCalls counts the eth_calls of a contract function (getAmountsOut,
// getReserves, ...), batched ones included.
func (s *Server) EthCalls(function string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls["eth_call "+function]
}

func (s *Server) chain(id uint64) (*chainState, error) {
	st, ok := s.chains[id]
	if !ok {
		return nil, fmt.Errorf("evmrpc standin: chain %d is not served", id)
	}
	return st, nil
}

// SetBlockNumber moves a chain's head.
func (s *Server) SetBlockNumber(chain, n uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.chain(chain)
	if err != nil {
		return err
	}
	st.block = n
	return nil
}

// SetBalance sets holder's balance of token on chain; the zero address is
// the native coin (eth_getBalance).
func (s *Server) SetBalance(chain uint64, token, holder common.Address, amount *big.Int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.chain(chain)
	if err != nil {
		return err
	}
	if token == (common.Address{}) {
		st.native[holder] = new(big.Int).Set(amount)
		return nil
	}
	if st.tokens[token] == nil {
		st.tokens[token] = map[common.Address]*big.Int{}
	}
	st.tokens[token][holder] = new(big.Int).Set(amount)
	return nil
}

// AddTransaction registers a signed transaction on chain, as m says, and
// returns its hash; registering a hash again replaces it (a pending one
// can be mined later).
func (s *Server) AddTransaction(chain uint64, tx *types.Transaction, m Mined) (common.Hash, error) {
	from, err := types.Sender(types.LatestSignerForChainID(tx.ChainId()), tx)
	if err != nil {
		return common.Hash{}, fmt.Errorf("evmrpc standin: sender: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.chain(chain)
	if err != nil {
		return common.Hash{}, err
	}
	if m.BlockNumber == 0 {
		m.BlockNumber = st.block
	}
	st.txs[tx.Hash()] = &registeredTx{tx: tx, from: from, mined: m}
	return tx.Hash(), nil
}

// rpcRequest and rpcResponse are JSON-RPC 2.0's.
type rpcRequest struct {
	JSONRPC string            `json:"jsonrpc"`
	ID      json.RawMessage   `json:"id"`
	Method  string            `json:"method"`
	Params  []json.RawMessage `json:"params"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    string `json:"data,omitempty"`
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result"`
	Error   *rpcError       `json:"error,omitempty"`
}

// MarshalJSON leaves result out of an error answer, as JSON-RPC 2.0 says.
func (r rpcResponse) MarshalJSON() ([]byte, error) {
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

// ServeHTTP answers a POSTed request or batch at /<chainId>.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.latency.Wait(r.Context()) {
		return
	}
	if r.Method != http.MethodPost {
		http.Error(w, "JSON-RPC is POST", http.StatusMethodNotAllowed)
		return
	}
	id, err := strconv.ParseUint(strings.Trim(r.URL.Path, "/"), 10, 64)
	if err != nil {
		http.Error(w, "path must be /<chainId>", http.StatusNotFound)
		return
	}
	if _, ok := s.chains[id]; !ok {
		http.Error(w, fmt.Sprintf("chain %d is not served", id), http.StatusNotFound)
		return
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, 1<<20)); err != nil {
		http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	body := bytes.TrimSpace(buf.Bytes())
	var out any
	if len(body) > 0 && body[0] == '[' {
		var reqs []rpcRequest
		if err := json.Unmarshal(body, &reqs); err != nil {
			out = rpcResponse{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &rpcError{Code: -32700, Message: "parse error: " + err.Error()}}
		} else {
			resps := make([]rpcResponse, len(reqs))
			for i := range reqs {
				resps[i] = s.answer(id, &reqs[i])
			}
			out = resps
		}
	} else {
		var req rpcRequest
		if err := json.Unmarshal(body, &req); err != nil {
			out = rpcResponse{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &rpcError{Code: -32700, Message: "parse error: " + err.Error()}}
		} else {
			out = s.answer(id, &req)
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// errRevert is an eth_call that reverted.
type errRevert struct{ reason string }

func (e errRevert) Error() string { return "execution reverted: " + e.reason }

func (s *Server) answer(chain uint64, req *rpcRequest) rpcResponse {
	resp := rpcResponse{JSONRPC: "2.0", ID: req.ID}
	if len(resp.ID) == 0 {
		resp.ID = json.RawMessage("null")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[req.Method]++
	st := s.chains[chain]
	result, err := s.dispatch(st, req)
	if err != nil {
		var rev errRevert
		if errors.As(err, &rev) {
			// Error(string) encoding of the reason, as a node returns it.
			data, _ := abi.Arguments{{Type: mustType("string")}}.Pack(rev.reason)
			resp.Error = &rpcError{Code: 3, Message: err.Error(), Data: hexutil.Encode(append([]byte{0x08, 0xc3, 0x79, 0xa0}, data...))}
			return resp
		}
		var pe paramError
		if errors.As(err, &pe) {
			resp.Error = &rpcError{Code: -32602, Message: err.Error()}
			return resp
		}
		resp.Error = &rpcError{Code: -32601, Message: err.Error()}
		return resp
	}
	resp.Result = result
	return resp
}

func mustType(t string) abi.Type {
	ty, err := abi.NewType(t, "", nil)
	if err != nil {
		panic(err)
	}
	return ty
}

// paramError is a request whose parameters do not parse.
type paramError struct{ error }

func param[T any](req *rpcRequest, i int) (T, error) {
	var v T
	if i >= len(req.Params) {
		return v, paramError{fmt.Errorf("missing value for required argument %d", i)}
	}
	if err := json.Unmarshal(req.Params[i], &v); err != nil {
		return v, paramError{fmt.Errorf("invalid argument %d: %w", i, err)}
	}
	return v, nil
}

func (s *Server) dispatch(st *chainState, req *rpcRequest) (any, error) {
	switch req.Method {
	case "eth_chainId":
		return hexutil.Uint64(st.id), nil
	case "net_version":
		return strconv.FormatUint(st.id, 10), nil
	case "eth_blockNumber":
		return hexutil.Uint64(st.block), nil
	case "eth_gasPrice":
		return (*hexutil.Big)(new(big.Int).Add(s.cfg.BaseFee, s.cfg.Tip)), nil
	case "eth_maxPriorityFeePerGas":
		return (*hexutil.Big)(s.cfg.Tip), nil
	case "eth_feeHistory":
		return s.feeHistory(st, req)
	case "eth_getBalance":
		holder, err := param[common.Address](req, 0)
		if err != nil {
			return nil, err
		}
		return (*hexutil.Big)(balance(st.native[holder])), nil
	case "eth_call":
		call, err := param[struct {
			To    *common.Address `json:"to"`
			Data  hexutil.Bytes   `json:"data"`
			Input hexutil.Bytes   `json:"input"`
		}](req, 0)
		if err != nil {
			return nil, err
		}
		data := call.Input
		if len(data) == 0 {
			data = call.Data
		}
		if call.To == nil {
			return nil, paramError{errors.New("eth_call without to")}
		}
		out, err := s.call(st, *call.To, data)
		if err != nil {
			return nil, err
		}
		return hexutil.Bytes(out), nil
	case "eth_sendRawTransaction":
		raw, err := param[hexutil.Bytes](req, 0)
		if err != nil {
			return nil, err
		}
		return s.sendRaw(st, raw)
	case "eth_getTransactionByHash":
		h, err := param[common.Hash](req, 0)
		if err != nil {
			return nil, err
		}
		t, ok := st.txs[h]
		if !ok {
			return nil, nil
		}
		return txJSON(t)
	case "eth_getTransactionReceipt":
		h, err := param[common.Hash](req, 0)
		if err != nil {
			return nil, err
		}
		t, ok := st.txs[h]
		if !ok || t.mined.Pending {
			return nil, nil
		}
		return receipt(t), nil
	}
	return nil, fmt.Errorf("the method %s does not exist/is not available", req.Method)
}

func balance(v *big.Int) *big.Int {
	if v == nil {
		return new(big.Int)
	}
	return v
}

// feeHistory answers eth_feeHistory(blockCount, newestBlock, percentiles):
// blockCount blocks ending at the head, each at the configured base fee
// and half full, every percentile's reward the configured tip.
func (s *Server) feeHistory(st *chainState, req *rpcRequest) (any, error) {
	count, err := param[hexutil.Uint64](req, 0)
	if err != nil {
		// Some clients send the count as a JSON number.
		n, err2 := param[uint64](req, 0)
		if err2 != nil {
			return nil, err
		}
		count = hexutil.Uint64(n)
	}
	if count == 0 || count > 1024 {
		return nil, paramError{fmt.Errorf("blockCount %d out of range", count)}
	}
	percentiles, _ := param[[]float64](req, 2)
	n := min(uint64(count), st.block+1)
	out := struct {
		OldestBlock  hexutil.Uint64   `json:"oldestBlock"`
		BaseFee      []*hexutil.Big   `json:"baseFeePerGas"`
		GasUsedRatio []float64        `json:"gasUsedRatio"`
		Reward       [][]*hexutil.Big `json:"reward,omitempty"`
	}{OldestBlock: hexutil.Uint64(st.block + 1 - n)}
	for i := uint64(0); i <= n; i++ {
		out.BaseFee = append(out.BaseFee, (*hexutil.Big)(s.cfg.BaseFee))
	}
	for i := uint64(0); i < n; i++ {
		out.GasUsedRatio = append(out.GasUsedRatio, 0.5)
		if len(percentiles) > 0 {
			row := make([]*hexutil.Big, len(percentiles))
			for j := range row {
				row[j] = (*hexutil.Big)(s.cfg.Tip)
			}
			out.Reward = append(out.Reward, row)
		}
	}
	return out, nil
}

// call answers an eth_call.
func (s *Server) call(st *chainState, to common.Address, data []byte) ([]byte, error) {
	if len(data) < 4 {
		return nil, nil
	}
	m, err := s.abi.MethodById(data[:4])
	if err != nil {
		return nil, nil // no such function: as an address without code
	}
	s.calls["eth_call "+m.Name]++
	args, err := m.Inputs.Unpack(data[4:])
	if err != nil {
		return nil, errRevert{"bad calldata for " + m.Name}
	}
	switch m.Name {
	case "quoteGasPayment":
		if !st.hasRoute || to != st.router {
			return nil, nil
		}
		if uint64(args[0].(uint32)) == st.id {
			return nil, errRevert{"No router enrolled for domain: " + strconv.FormatUint(st.id, 10)}
		}
		return m.Outputs.Pack(st.gasPay)
	case "getAmountsOut":
		if st.id != ChainPulse || to != s.pulsex {
			return nil, nil
		}
		amounts, err := s.amountsOut(args[0].(*big.Int), args[1].([]common.Address))
		if err != nil {
			return nil, err
		}
		return m.Outputs.Pack(amounts)
	case "getAmountsIn":
		if st.id != ChainPulse || to != s.pulsex {
			return nil, nil
		}
		amounts, err := s.amountsIn(args[0].(*big.Int), args[1].([]common.Address))
		if err != nil {
			return nil, err
		}
		return m.Outputs.Pack(amounts)
	case "balanceOf":
		return m.Outputs.Pack(balance(st.tokens[to][args[0].(common.Address)]))
	case "getPair":
		if st.id != ChainPulse || to != s.factory {
			return nil, nil
		}
		a, b := args[0].(common.Address), args[1].(common.Address)
		if _, ok := s.reserves[pairKey{a, b}]; !ok {
			return m.Outputs.Pack(common.Address{})
		}
		return m.Outputs.Pack(PairAddress(a, b))
	case "token0", "getReserves":
		k, ok := s.pairs[to]
		if st.id != ChainPulse || !ok {
			return nil, nil
		}
		if m.Name == "token0" {
			return m.Outputs.Pack(k.a)
		}
		r := s.reserves[k]
		return m.Outputs.Pack(r[0], r[1], uint32(0))
	}
	return nil, nil
}

// amountsOut is UniswapV2Library.getAmountsOut with PulseX's fee.
func (s *Server) amountsOut(amountIn *big.Int, path []common.Address) ([]*big.Int, error) {
	if len(path) < 2 {
		return nil, errRevert{"PulseXLibrary: INVALID_PATH"}
	}
	if amountIn.Sign() <= 0 {
		return nil, errRevert{"PulseXLibrary: INSUFFICIENT_INPUT_AMOUNT"}
	}
	keep := s.poolMove(true)
	out := []*big.Int{new(big.Int).Set(amountIn)}
	for i := 0; i+1 < len(path); i++ {
		r, ok := s.reserves[pairKey{path[i], path[i+1]}]
		if !ok {
			return nil, errRevert{"PulseXLibrary: no pair " + path[i].Hex() + "/" + path[i+1].Hex()}
		}
		if out[i].Sign() <= 0 {
			// A hop the previous one paid nothing into: the library
			// requires a positive input at every hop.
			return nil, errRevert{"PulseXLibrary: INSUFFICIENT_INPUT_AMOUNT"}
		}
		in := new(big.Int).Mul(out[i], big.NewInt(10_000-pulseroute.PulseXFeeBps))
		num := new(big.Int).Mul(in, r[1])
		den := new(big.Int).Mul(r[0], big.NewInt(10_000))
		den.Add(den, in)
		o := num.Quo(num, den)
		out = append(out, o.Quo(o.Mul(o, keep), big.NewInt(1_000_000)))
	}
	return out, nil
}

// amountsIn is UniswapV2Library.getAmountsIn with PulseX's fee.
func (s *Server) amountsIn(amountOut *big.Int, path []common.Address) ([]*big.Int, error) {
	if len(path) < 2 {
		return nil, errRevert{"PulseXLibrary: INVALID_PATH"}
	}
	if amountOut.Sign() <= 0 {
		return nil, errRevert{"PulseXLibrary: INSUFFICIENT_OUTPUT_AMOUNT"}
	}
	keep := s.poolMove(false)
	amounts := make([]*big.Int, len(path))
	amounts[len(path)-1] = new(big.Int).Set(amountOut)
	for i := len(path) - 1; i > 0; i-- {
		r, ok := s.reserves[pairKey{path[i-1], path[i]}]
		if !ok {
			return nil, errRevert{"PulseXLibrary: no pair " + path[i-1].Hex() + "/" + path[i].Hex()}
		}
		if amounts[i].Cmp(r[1]) >= 0 {
			return nil, errRevert{"PulseXLibrary: INSUFFICIENT_LIQUIDITY"}
		}
		// The hop that answers out×keep/10⁶ must be asked for
		// ⌈out×10⁶/keep⌉ before the pool moved.
		want := new(big.Int).Mul(amounts[i], big.NewInt(1_000_000))
		want.Add(want, new(big.Int).Sub(keep, big.NewInt(1)))
		want.Quo(want, keep)
		if want.Cmp(r[1]) >= 0 {
			return nil, errRevert{"PulseXLibrary: INSUFFICIENT_LIQUIDITY"}
		}
		num := new(big.Int).Mul(r[0], want)
		num.Mul(num, big.NewInt(10_000))
		den := new(big.Int).Sub(r[1], want)
		den.Mul(den, big.NewInt(10_000-pulseroute.PulseXFeeBps))
		amounts[i-1] = num.Quo(num, den).Add(num, big.NewInt(1))
	}
	return amounts, nil
}

// transferSelector is ERC-20 transfer(address,uint256); transferTopic is
// its Transfer(address,address,uint256) event.
var (
	transferSelector = crypto.Keccak256([]byte("transfer(address,uint256)"))[:4]
	transferTopic    = crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)"))
)

// sendRaw mines a signed transaction at once: successful, with the
// Transfer log of an ERC-20 transfer. The caller holds s.mu.
func (s *Server) sendRaw(st *chainState, raw []byte) (any, error) {
	tx := new(types.Transaction)
	if err := tx.UnmarshalBinary(raw); err != nil {
		return nil, paramError{fmt.Errorf("decode transaction: %w", err)}
	}
	if tx.Protected() && tx.ChainId().Uint64() != st.id {
		return nil, paramError{fmt.Errorf("transaction signed for chain %s, this is chain %d", tx.ChainId(), st.id)}
	}
	from, err := types.Sender(types.LatestSignerForChainID(tx.ChainId()), tx)
	if err != nil {
		return nil, paramError{fmt.Errorf("invalid sender: %w", err)}
	}
	var logs []*types.Log
	if d := tx.Data(); tx.To() != nil && len(d) == 68 && bytes.Equal(d[:4], transferSelector) {
		logs = append(logs, &types.Log{Address: *tx.To(),
			Topics: []common.Hash{transferTopic, common.BytesToHash(from.Bytes()), common.BytesToHash(d[4:36])},
			Data:   append([]byte(nil), d[36:68]...)})
	}
	st.txs[tx.Hash()] = &registeredTx{tx: tx, from: from, mined: Mined{Status: types.ReceiptStatusSuccessful, Logs: logs, BlockNumber: st.block}}
	return tx.Hash(), nil
}

// blockHash is a made-up, stable hash of a block.
func blockHash(chain, n uint64) common.Hash {
	return crypto.Keccak256Hash([]byte(fmt.Sprintf("standin/%d/%d", chain, n)))
}

// txJSON is the node's transaction object: the signed transaction's own
// fields, and where it was mined and by whom.
func txJSON(t *registeredTx) (json.RawMessage, error) {
	raw, err := t.tx.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, err
	}
	fields["from"] = t.from
	if t.mined.Pending {
		fields["blockHash"], fields["blockNumber"], fields["transactionIndex"] = nil, nil, nil
	} else {
		chain := t.tx.ChainId().Uint64()
		fields["blockHash"] = blockHash(chain, t.mined.BlockNumber)
		fields["blockNumber"] = hexutil.Uint64(t.mined.BlockNumber)
		fields["transactionIndex"] = hexutil.Uint64(0)
	}
	return json.Marshal(fields)
}

// receipt is the mined transaction's receipt.
func receipt(t *registeredTx) *types.Receipt {
	chain := t.tx.ChainId().Uint64()
	bh := blockHash(chain, t.mined.BlockNumber)
	logs := make([]*types.Log, len(t.mined.Logs))
	for i, l := range t.mined.Logs {
		c := *l
		c.TxHash, c.BlockHash, c.BlockNumber, c.Index, c.TxIndex = t.tx.Hash(), bh, t.mined.BlockNumber, uint(i), 0
		logs[i] = &c
	}
	r := &types.Receipt{Type: t.tx.Type(), Status: t.mined.Status, CumulativeGasUsed: t.tx.Gas(), Logs: logs,
		TxHash: t.tx.Hash(), GasUsed: t.tx.Gas(), EffectiveGasPrice: t.tx.GasPrice(), BlockHash: bh,
		BlockNumber: new(big.Int).SetUint64(t.mined.BlockNumber)}
	r.Bloom = types.CreateBloom(r)
	if t.tx.To() == nil {
		r.ContractAddress = crypto.CreateAddress(t.from, t.tx.Nonce())
	}
	return r
}
