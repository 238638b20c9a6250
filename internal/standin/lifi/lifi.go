// Package lifi is a local stand-in of the LI.FI REST API, for end-to-end
// tests and the bench: GET /v1/quote (and /v1/quote/toAmount, its
// exact-output form), /v1/tools, /v1/tokens and /v1/status
// in LI.FI's wire shapes, answered deterministically from the request, a
// price table and the transactions a test marks as sent, each after a
// configurable latency.
//
// The shapes follow LI.FI's public API reference, the fields Swapgate's
// aggregator adapter reads:
//   - /v1/quote answers a Step: type "lifi", tool and toolDetails{key,name,
//     logoURI}, action{fromChainId,toChainId,fromToken,toToken,fromAmount,
//     fromAddress,toAddress,slippage}, estimate{tool,approvalAddress,
//     fromAmount,toAmount,toAmountMin,fromAmountUSD,toAmountUSD,feeCosts[],
//     gasCosts[],executionDuration}, includedSteps and transactionRequest
//     {to,from,data,value,gasLimit,gasPrice,chainId}, its numbers hex
//     strings; from a Solana or Sui source, transactionRequest is {data}
//     alone, the serialized transaction in base64, and the estimate names
//     no approvalAddress. The integrator's fee (query "fee", a fraction) is a fee cost
//     named "Integrator Fee"; slippage is a fraction, 0.005 by default.
//     No route is 404 with {"message","code":1002,"errors":{...}}.
//   - /v1/tools answers {bridges[{key,name,logoURI,supportedChains[{fromChainId,
//     toChainId}]}], exchanges[{key,name,logoURI,supportedChains[ids]}]}.
//   - /v1/tokens answers {tokens:{"<chainId>":[Token]}}, a Token being
//     {address,chainId,symbol,decimals,name,coinKey,logoURI,priceUSD}; the
//     query "chains" (comma-separated ids) restricts it.
//   - /v1/status?txHash= answers {status,substatus,substatusMessage,sending,
//     receiving,tool}: PENDING/WAIT_DESTINATION_TRANSACTION, then
//     DONE/COMPLETED with the receiving leg; a hash nobody sent is 404
//     {"status":"NOT_FOUND"}, as LI.FI answers a hash it has not indexed.
//
// No tool key starts with "sbx-": those are the sandbox's.
package lifi

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/swapgate/swapgate/internal/standin/kit"
)

// DefaultRouter is LI.FI's diamond, the address its transactionRequests go
// to on every EVM chain, and the approval address of ERC-20 sources.
const DefaultRouter = "0x1231DEB6f5749EF6cE6943a275A1D3E7486F4EaE"

// Tool keys the stand-in quotes with: two bridges for cross-chain routes,
// two exchanges for same-chain ones (LI.FI's own keys).
const (
	ToolAcross    = "across"
	ToolStargate  = "stargateV2"
	ToolOneInch   = "1inch"
	ToolSushiswap = "sushiswap"
)

// Fees and costs of the stand-in's routes.
const (
	// toolFeeBps is the bridge's or exchange's own fee, in the source token.
	toolFeeBps = 10
	// defaultSlippage applies when the query has none.
	defaultSlippage = 0.005
	// gasEstimate and gasLimit are the source transaction's gas units.
	gasEstimate = 200_000
	gasLimit    = 260_000
	// gasPriceWei is the gas price every chain is quoted at (0.1 gwei).
	gasPriceWei = 100_000_000
)

type toolDef struct{ key, name string }

var (
	bridges   = []toolDef{{ToolAcross, "AcrossV3"}, {ToolStargate, "StargateV2 (Fast mode)"}}
	exchanges = []toolDef{{ToolOneInch, "1inch"}, {ToolSushiswap, "SushiSwap"}}
)

// Config configures the stand-in. Zero fields take the defaults.
type Config struct {
	// Latency delays every answer.
	Latency time.Duration
	// Router is transactionRequest.to (DefaultRouter when empty);
	// ApprovalAddress is estimate.approvalAddress (Router when empty).
	Router, ApprovalAddress string
	// Prices is the price table quotes and /v1/tokens are computed from
	// (kit.DefaultTable when nil).
	Prices *kit.Table
	// StatusPolls is how many /v1/status answers of a sent transaction are
	// PENDING before it is DONE; StatusDelay how long after MarkSent it is
	// DONE regardless. Both zero: DONE at once.
	StatusPolls int
	StatusDelay time.Duration
	// Record keeps the query of every /v1/quote request, for Quotes (off
	// by default: a bench sends millions).
	Record bool
	// NoRoute, when set, is asked about every valid /v1/quote query; true
	// answers LI.FI's "no available quotes" (404, code 1002) as for a pair
	// it cannot route, so a test can take the aggregator's route away.
	NoRoute func(query url.Values) bool
	// Tamper, when set, edits every /v1/quote Step (its JSON object, as
	// decoded into maps and slices) just before it is answered, so that a
	// test can make the stand-in misbehave as a broken or hostile upstream
	// would: a transactionRequest.to that is no address, no
	// transactionRequest, a toAmount above 2^256 − 1. SetTamper changes it
	// while the stand-in serves.
	Tamper func(step map[string]any)
}

// Sent is a source transaction a test marks as sent, and what its
// receiving leg delivers.
type Sent struct {
	FromChain, ToChain uint64
	FromToken, ToToken string
	FromAmount         string
	ToAmount           string
	Tool               string
}

type sentTx struct {
	Sent
	at    time.Time
	polls int
}

// Server is the stand-in's handler. It is safe for concurrent use.
type Server struct {
	cfg     Config
	latency *kit.Latency
	prices  *kit.Table
	mux     *http.ServeMux

	tamper atomic.Pointer[func(map[string]any)]

	mu     sync.Mutex
	sent   map[string]*sentTx
	quotes []url.Values
	now    func() time.Time
}

// New builds the stand-in.
func New(cfg Config) (*Server, error) {
	if cfg.Router == "" {
		cfg.Router = DefaultRouter
	}
	if cfg.ApprovalAddress == "" {
		cfg.ApprovalAddress = cfg.Router
	}
	prices := cfg.Prices
	if prices == nil {
		var err error
		if prices, err = kit.DefaultTable(); err != nil {
			return nil, err
		}
	}
	s := &Server{cfg: cfg, latency: kit.NewLatency(cfg.Latency), prices: prices, sent: map[string]*sentTx{}, now: time.Now}
	s.SetTamper(cfg.Tamper)
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("GET /v1/quote", s.quote)
	s.mux.HandleFunc("GET /v1/quote/toAmount", s.quoteToAmount)
	s.mux.HandleFunc("GET /v1/tools", s.tools)
	s.mux.HandleFunc("GET /v1/tokens", s.tokens)
	s.mux.HandleFunc("GET /v1/status", s.status)
	s.mux.HandleFunc("GET /logos/{chain}/{file}", serveLogo)
	return s, nil
}

// Start builds the stand-in and serves it on a loopback port; the caller
// closes the returned server.
func Start(cfg Config) (*Server, *httptest.Server, error) {
	s, err := New(cfg)
	if err != nil {
		return nil, nil, err
	}
	return s, kit.Start(s), nil
}

// ServeHTTP answers after the configured latency.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	kit.Delayed(s.latency, s.mux).ServeHTTP(w, r)
}

// SetLatency changes the delay of the answers from now on.
func (s *Server) SetLatency(d time.Duration) { s.latency.Set(d) }

// SetTamper changes how the /v1/quote Steps answered from now on are
// edited (see Config.Tamper); nil answers them as they are.
func (s *Server) SetTamper(f func(step map[string]any)) {
	if f == nil {
		s.tamper.Store(nil)
		return
	}
	s.tamper.Store(&f)
}

// MarkSent tells the stand-in that a source transaction was sent: its
// /v1/status goes PENDING, then DONE as Config says.
func (s *Server) MarkSent(txHash string, tx Sent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent[strings.ToLower(txHash)] = &sentTx{Sent: tx, at: s.now()}
}

// Quotes returns the queries of the /v1/quote requests received so far,
// in order, when Config.Record is set (nil otherwise): a test reads what
// the server asked for (the toAddress of a multi-step quote's step 1, the
// integrator fee).
func (s *Server) Quotes() []url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]url.Values(nil), s.quotes...)
}

// Prices returns the price table the stand-in quotes from.
func (s *Server) Prices() *kit.Table { return s.prices }

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// wireToken is LI.FI's Token.
type wireToken struct {
	Address  string `json:"address"`
	ChainID  uint64 `json:"chainId"`
	Symbol   string `json:"symbol"`
	Decimals uint8  `json:"decimals"`
	Name     string `json:"name"`
	CoinKey  string `json:"coinKey"`
	LogoURI  string `json:"logoURI"`
	PriceUSD string `json:"priceUSD"`
}

// logoURI is the stand-in's own logo URL for a token, so that a logo in a
// live answer resolves (see serveLogo).
func logoURI(r *http.Request, chain uint64, addr string) string {
	return "http://" + r.Host + "/logos/" + strconv.FormatUint(chain, 10) + "/" + addr + ".svg"
}

func toWire(r *http.Request, t kit.Token) wireToken {
	return wireToken{Address: t.Address, ChainID: t.ChainID, Symbol: t.Symbol, Decimals: t.Decimals, Name: t.Name,
		CoinKey: t.CoinKey, LogoURI: logoURI(r, t.ChainID, t.Address), PriceUSD: strconv.FormatFloat(t.PriceUSD, 'f', -1, 64)}
}

// serveLogo draws a token's logo: a circle with the first letters of its
// address, enough for a browser or a test to see that the URL resolves.
func serveLogo(w http.ResponseWriter, r *http.Request) {
	label := strings.TrimSuffix(r.PathValue("file"), ".svg")
	if len(label) > 6 {
		label = label[:6]
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64"><circle cx="32" cy="32" r="30" fill="#2b6cb0"/><text x="32" y="37" font-size="12" text-anchor="middle" fill="#fff">%s</text></svg>`,
		htmlEscape(label))
}

func htmlEscape(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")
	return r.Replace(s)
}

// tokens answers GET /v1/tokens.
func (s *Server) tokens(w http.ResponseWriter, r *http.Request) {
	want := map[uint64]bool{}
	if q := r.URL.Query().Get("chains"); q != "" {
		for _, f := range strings.Split(q, ",") {
			id, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
			if err != nil {
				writeJSON(w, http.StatusBadRequest, map[string]any{"message": "chains: " + f + " is not a chain id", "code": 1011})
				return
			}
			want[id] = true
		}
	}
	out := map[string][]wireToken{}
	for _, t := range s.prices.Tokens() {
		if len(want) > 0 && !want[t.ChainID] {
			continue
		}
		k := strconv.FormatUint(t.ChainID, 10)
		out[k] = append(out[k], toWire(r, t))
	}
	writeJSON(w, http.StatusOK, map[string]any{"tokens": out})
}

// tools answers GET /v1/tools: the bridges join every pair of priced
// chains, the exchanges work on every priced chain.
func (s *Server) tools(w http.ResponseWriter, r *http.Request) {
	chains := s.prices.Chains()
	type pair struct {
		From uint64 `json:"fromChainId"`
		To   uint64 `json:"toChainId"`
	}
	pairs := make([]pair, 0, len(chains)*len(chains))
	for _, a := range chains {
		for _, b := range chains {
			if a != b {
				pairs = append(pairs, pair{a, b})
			}
		}
	}
	var bs, es []map[string]any
	for _, b := range bridges {
		bs = append(bs, map[string]any{"key": b.key, "name": b.name, "logoURI": "http://" + r.Host + "/logos/tools/" + b.key + ".svg", "supportedChains": pairs})
	}
	for _, e := range exchanges {
		es = append(es, map[string]any{"key": e.key, "name": e.name, "logoURI": "http://" + r.Host + "/logos/tools/" + e.key + ".svg", "supportedChains": chains})
	}
	writeJSON(w, http.StatusOK, map[string]any{"bridges": bs, "exchanges": es})
}

// digest is a deterministic 32-byte fingerprint of parts.
func digest(parts ...string) []byte {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum(nil)
}

func hexBig(v *big.Int) string { return "0x" + v.Text(16) }

// noQuote answers LI.FI's "no available quotes" (HTTP 404, code 1002) with
// one tool error of reason code.
func noQuote(w http.ResponseWriter, tool, code, msg string) {
	writeJSON(w, http.StatusNotFound, map[string]any{
		"message": "No available quotes for the requested transfer", "code": 1002,
		"errors": map[string]any{"filteredOut": []any{}, "failed": []any{map[string]any{
			"overallPath": tool,
			"subpaths": map[string]any{tool: []any{map[string]any{
				"errorType": "NO_QUOTE", "code": code, "tool": tool, "message": msg}}},
		}}},
	})
}

// badRequest answers LI.FI's validation error (HTTP 400, code 1011).
func badRequest(w http.ResponseWriter, msg string) {
	writeJSON(w, http.StatusBadRequest, map[string]any{"message": msg, "code": 1011})
}

// pickTool chooses the route's tool among candidates, honouring the
// allow/deny/prefer lists of the query.
func pickTool(q map[string][]string, kind string, candidates []toolDef) (toolDef, bool) {
	list := func(name string) map[string]bool {
		out := map[string]bool{}
		for _, v := range q[name] {
			for _, k := range strings.Split(v, ",") {
				if k != "" {
					out[k] = true
				}
			}
		}
		return out
	}
	allow, deny, prefer := list("allow"+kind), list("deny"+kind), list("prefer"+kind)
	var ok []toolDef
	for _, t := range candidates {
		if (len(allow) == 0 || allow[t.key]) && !deny[t.key] {
			ok = append(ok, t)
		}
	}
	if len(ok) == 0 {
		return toolDef{}, false
	}
	for _, t := range ok {
		if prefer[t.key] {
			return t, true
		}
	}
	return ok[0], true
}

// quote answers GET /v1/quote: the source amount valued at the price table,
// less the tool's fee and the integrator's, bought in the destination token.
func (s *Server) quote(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.record(q)
	s.answerQuote(w, r, q)
}

// record keeps a quote query when the stand-in records them.
func (s *Server) record(q url.Values) {
	if s.cfg.Record {
		s.mu.Lock()
		s.quotes = append(s.quotes, q)
		s.mu.Unlock()
	}
}

// quoteToAmount answers GET /v1/quote/toAmount, LI.FI's exact-output quote:
// the query of /v1/quote with toAmount instead of fromAmount, answered with
// the Step /v1/quote gives for the least fromAmount whose toAmountMin
// reaches toAmount (found by doubling, then bisection, over the same
// pricing), so that estimate.toAmountMin >= toAmount.
func (s *Server) quoteToAmount(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.record(q)
	want, ok := new(big.Int).SetString(q.Get("toAmount"), 10)
	if !ok || want.Sign() <= 0 || q.Has("fromAmount") {
		badRequest(w, "toAmount must be a positive integer, and fromAmount absent")
		return
	}
	fromChain, err1 := strconv.ParseUint(q.Get("fromChain"), 10, 64)
	toChain, err2 := strconv.ParseUint(q.Get("toChain"), 10, 64)
	from, okFrom := s.prices.Lookup(fromChain, q.Get("fromToken"))
	to, okTo := s.prices.Lookup(toChain, q.Get("toToken"))
	slippage, fee, perr := feeParams(q)
	if err1 != nil || err2 != nil || perr != "" {
		badRequest(w, "fromChain, toChain, slippage and fee must be well formed")
		return
	}
	if !okFrom || !okTo {
		noQuote(w, "lifi", "NO_POSSIBLE_ROUTE", "No route was found for this action: the token is not supported.")
		return
	}
	reaches := func(in *big.Int) bool {
		return priceQuote(from, to, in, fee, slippage).toAmountMin.Cmp(want) >= 0
	}
	hi := big.NewInt(1)
	limit := new(big.Int).Lsh(big.NewInt(1), 256)
	for !reaches(hi) {
		if hi.Cmp(limit) > 0 {
			noQuote(w, "lifi", "INSUFFICIENT_LIQUIDITY", "No amount delivers the requested toAmount.")
			return
		}
		hi.Lsh(hi, 1)
	}
	lo := new(big.Int).Rsh(hi, 1)
	for new(big.Int).Sub(hi, lo).Cmp(big.NewInt(1)) > 0 {
		mid := new(big.Int).Add(lo, hi)
		mid.Rsh(mid, 1)
		if reaches(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	sized := url.Values{}
	for k, v := range q {
		if k != "toAmount" {
			sized[k] = v
		}
	}
	sized.Set("fromAmount", hi.String())
	s.answerQuote(w, r, sized)
}

// feeParams reads the slippage (0.005 by default) and the integrator's fee
// of a quote query, both fractions below 1; bad names what is malformed.
func feeParams(q url.Values) (slippage, fee float64, bad string) {
	slippage = defaultSlippage
	if v := q.Get("slippage"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f >= 1 {
			return 0, 0, "slippage must be a fraction below 1"
		}
		slippage = f
	}
	if v := q.Get("fee"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f >= 1 {
			return 0, 0, "fee must be a fraction below 1"
		}
		fee = f
	}
	return slippage, fee, ""
}

// priced is a quote's arithmetic: the tool's and the integrator's fees
// taken from the input, the rest bought in the destination token, and the
// least output under the slippage.
type priced struct {
	toolFee, integratorFee, rest, toAmount, toAmountMin *big.Int
}

func priceQuote(from, to kit.Token, fromAmount *big.Int, fee, slippage float64) priced {
	var p priced
	p.toolFee = new(big.Int).Sub(fromAmount, kit.Shave(fromAmount, toolFeeBps))
	p.integratorFee = new(big.Int)
	if fee > 0 {
		p.integratorFee = kit.Shave(fromAmount, int64(10_000-fee*10_000+0.5))
	}
	p.rest = new(big.Int).Sub(fromAmount, p.toolFee)
	p.rest.Sub(p.rest, p.integratorFee)
	p.toAmount = kit.Exchange(from, to, p.rest)
	p.toAmountMin = kit.Shave(p.toAmount, int64(slippage*10_000+0.5))
	return p
}

// answerQuote answers a /v1/quote query (q, fromAmount given).
func (s *Server) answerQuote(w http.ResponseWriter, r *http.Request, q url.Values) {
	fromChain, err1 := strconv.ParseUint(q.Get("fromChain"), 10, 64)
	toChain, err2 := strconv.ParseUint(q.Get("toChain"), 10, 64)
	if err1 != nil || err2 != nil {
		badRequest(w, "fromChain and toChain must be chain ids")
		return
	}
	fromAmount, ok := new(big.Int).SetString(q.Get("fromAmount"), 10)
	if !ok || fromAmount.Sign() <= 0 {
		badRequest(w, "fromAmount must be a positive integer")
		return
	}
	fromAddress := q.Get("fromAddress")
	if fromAddress == "" {
		badRequest(w, "fromAddress is required")
		return
	}
	toAddress := q.Get("toAddress")
	if toAddress == "" {
		toAddress = fromAddress
	}
	slippage, fee, bad := feeParams(q)
	if bad != "" {
		badRequest(w, bad)
		return
	}
	from, okFrom := s.prices.Lookup(fromChain, q.Get("fromToken"))
	to, okTo := s.prices.Lookup(toChain, q.Get("toToken"))
	if !okFrom || !okTo || (s.cfg.NoRoute != nil && s.cfg.NoRoute(q)) {
		noQuote(w, "lifi", "NO_POSSIBLE_ROUTE", "No route was found for this action: the token is not supported.")
		return
	}
	kind, cands, stepType := "Bridges", bridges, "cross"
	if fromChain == toChain {
		kind, cands, stepType = "Exchanges", exchanges, "swap"
	}
	tool, ok := pickTool(q, kind, cands)
	if !ok {
		noQuote(w, "lifi", "NO_POSSIBLE_ROUTE", "No route was found for this action with the allowed tools.")
		return
	}

	pq := priceQuote(from, to, fromAmount, fee, slippage)
	toolFee, integratorFee, rest, toAmount, toAmountMin := pq.toolFee, pq.integratorFee, pq.rest, pq.toAmount, pq.toAmountMin
	if toAmount.Sign() <= 0 {
		noQuote(w, tool.key, "AMOUNT_TOO_LOW", "The amount is too low to cover the fees.")
		return
	}

	sum := digest(r.URL.RawQuery)
	id := uuidOf(sum)
	wFrom, wTo := toWire(r, from), toWire(r, to)
	feeCost := func(name, desc string, amount *big.Int, pct float64) map[string]any {
		return map[string]any{"name": name, "description": desc, "token": wFrom, "amount": amount.String(),
			"amountUSD": kit.FormatUSD(kit.USD(from, amount)), "percentage": strconv.FormatFloat(pct, 'f', -1, 64), "included": true}
	}
	feeCosts := []map[string]any{feeCost(tool.name+" fee", "Fee of the "+tool.name+" route", toolFee, toolFeeBps/10_000.0)}
	if integratorFee.Sign() > 0 {
		feeCosts = append(feeCosts, feeCost("Integrator Fee", "Fee charged by the integrator", integratorFee, fee))
	}
	gasPrice := big.NewInt(gasPriceWei)
	gasAmount := new(big.Int).Mul(gasPrice, big.NewInt(gasEstimate))
	nativeAddr, serialized := serializedSources[fromChain]
	if !serialized {
		nativeAddr = "0x0000000000000000000000000000000000000000"
	} else {
		// A Solana or Sui source pays a flat fee in its own coin
		// (lamports, MIST): one unit of gas at that price.
		gasPrice, gasAmount = big.NewInt(serializedFee), big.NewInt(serializedFee)
	}
	native, hasNative := s.prices.Lookup(fromChain, nativeAddr)
	if !hasNative {
		native = kit.Token{ChainID: fromChain, Address: "0x0000000000000000000000000000000000000000", Symbol: "ETH", Name: "ETH", Decimals: 18, CoinKey: "ETH"}
	}
	gasCost := map[string]any{"type": "SEND", "price": gasPrice.String(), "estimate": strconv.Itoa(gasEstimate),
		"limit": strconv.Itoa(gasLimit), "amount": gasAmount.String(), "amountUSD": kit.FormatUSD(kit.USD(native, gasAmount)),
		"token": toWire(r, native)}
	if serialized {
		gasCost["estimate"], gasCost["limit"] = "1", "1"
	}
	duration := 30.0
	if stepType == "cross" {
		duration = 52.4
	}
	value := new(big.Int)
	if isNative(from.Address) {
		value.Set(fromAmount)
	}
	// The calldata starts with the selector of the diamond's
	// swapAndStartBridgeTokensViaAcrossV3 family in LI.FI's shape: 4 bytes,
	// then a 32-byte word that fingerprints the request.
	data := "0x" + hex.EncodeToString(digest("selector", tool.key)[:4]) + hex.EncodeToString(sum)
	estimate := map[string]any{
		"tool": tool.key, "approvalAddress": s.cfg.ApprovalAddress,
		"fromAmount": fromAmount.String(), "toAmount": toAmount.String(), "toAmountMin": toAmountMin.String(),
		"fromAmountUSD": kit.FormatUSD(kit.USD(from, fromAmount)), "toAmountUSD": kit.FormatUSD(kit.USD(to, toAmount)),
		"feeCosts": feeCosts, "gasCosts": []any{gasCost}, "executionDuration": duration,
	}
	step := map[string]any{
		"type": "lifi", "id": id, "tool": tool.key,
		"toolDetails": map[string]any{"key": tool.key, "name": tool.name, "logoURI": "http://" + r.Host + "/logos/tools/" + tool.key + ".svg"},
		"action": map[string]any{"fromChainId": fromChain, "toChainId": toChain, "fromToken": wFrom, "toToken": wTo,
			"fromAmount": fromAmount.String(), "fromAddress": fromAddress, "toAddress": toAddress, "slippage": slippage},
		"estimate": estimate,
		"includedSteps": []any{map[string]any{"id": uuidOf(digest(id, "step")), "type": stepType, "tool": tool.key,
			"toolDetails": map[string]any{"key": tool.key, "name": tool.name},
			"action":      map[string]any{"fromChainId": fromChain, "toChainId": toChain, "fromAmount": rest.String()},
			"estimate": map[string]any{"tool": tool.key, "fromAmount": rest.String(), "toAmount": toAmount.String(),
				"toAmountMin": toAmountMin.String(), "approvalAddress": s.cfg.ApprovalAddress, "executionDuration": duration}}},
		"integrator": q.Get("integrator"),
		"transactionRequest": map[string]any{"to": s.cfg.Router, "from": fromAddress, "data": data,
			"value": hexBig(value), "gasLimit": hexBig(big.NewInt(gasLimit)), "gasPrice": hexBig(gasPrice), "chainId": fromChain},
	}
	if serialized {
		// LI.FI answers a Solana or Sui source with the whole serialized
		// transaction, base64, and nothing of an EVM call; no allowance
		// applies there, so no EVM approval address either.
		step["transactionRequest"] = map[string]any{"data": serializedTx(sum, fromAddress)}
		delete(estimate, "approvalAddress")
		delete(step["includedSteps"].([]any)[0].(map[string]any)["estimate"].(map[string]any), "approvalAddress")
	}
	if f := s.tamper.Load(); f != nil {
		// Through JSON and back, so that the hook edits the Step as a
		// client would decode it (objects as maps, lists as slices).
		b, err := json.Marshal(step)
		if err == nil {
			var m map[string]any
			if err = json.Unmarshal(b, &m); err == nil {
				(*f)(m)
				step = m
			}
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	}
	writeJSON(w, http.StatusOK, step)
}

// serializedSources are the chains (LI.FI's ids) whose transactions LI.FI
// answers serialized, in base64 ({data} alone), by their native coin's
// address: Solana and Sui.
var serializedSources = map[uint64]string{
	1151111081099710: "11111111111111111111111111111111",
	9270000000000000: "0x2::sui::SUI",
}

// serializedFee is a Solana or Sui source's network fee in its smallest
// unit: Solana's base fee of 5000 lamports per signature.
const serializedFee = 5000

// serializedTx is the base64 serialized transaction of a Solana or Sui
// quote: bytes laid out as an unsigned Solana v0 transaction (one empty
// signature slot, the v0 prefix, a header), then the request's
// fingerprint and the sender, so that the same request answers the same
// bytes. Nobody signs it: the stand-in's chains settle nothing on Solana.
func serializedTx(sum []byte, fromAddress string) string {
	b := make([]byte, 0, 1+64+4+len(sum)+len(fromAddress))
	b = append(b, 1)
	b = append(b, make([]byte, 64)...)
	b = append(b, 0x80, 1, 0, 5)
	b = append(b, sum...)
	b = append(b, fromAddress...)
	return base64.StdEncoding.EncodeToString(b)
}

func isNative(addr string) bool {
	return addr == "0x0000000000000000000000000000000000000000" || strings.EqualFold(addr, "native") ||
		addr == "11111111111111111111111111111111" || addr == "bitcoin"
}

// uuidOf formats 16 bytes of sum as a UUID.
func uuidOf(sum []byte) string {
	h := hex.EncodeToString(sum[:16])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// status answers GET /v1/status.
func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	hash := r.URL.Query().Get("txHash")
	if hash == "" {
		badRequest(w, "txHash is required")
		return
	}
	s.mu.Lock()
	tx, ok := s.sent[strings.ToLower(hash)]
	var done bool
	var sent Sent
	var at time.Time
	if ok {
		tx.polls++
		done = tx.polls > s.cfg.StatusPolls && !s.now().Before(tx.at.Add(s.cfg.StatusDelay))
		sent, at = tx.Sent, tx.at
	}
	s.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]any{"status": "NOT_FOUND"})
		return
	}
	tool := sent.Tool
	if tool == "" {
		tool = ToolAcross
	}
	sending := map[string]any{"txHash": hash, "chainId": sent.FromChain, "amount": sent.FromAmount,
		"token": map[string]any{"address": sent.FromToken, "chainId": sent.FromChain}, "timestamp": at.Unix()}
	body := map[string]any{"transactionId": "0x" + hex.EncodeToString(digest("transfer", hash)), "sending": sending,
		"tool": tool, "status": "PENDING", "substatus": "WAIT_DESTINATION_TRANSACTION",
		"substatusMessage": "The bridge is waiting for additional confirmations.", "receiving": map[string]any{"chainId": sent.ToChain}}
	if done {
		body["status"], body["substatus"], body["substatusMessage"] = "DONE", "COMPLETED", "The transfer is complete."
		body["receiving"] = map[string]any{"txHash": "0x" + hex.EncodeToString(digest("receiving", hash)), "chainId": sent.ToChain,
			"amount": sent.ToAmount, "token": map[string]any{"address": sent.ToToken, "chainId": sent.ToChain},
			"timestamp": at.Add(time.Minute).Unix()}
	}
	writeJSON(w, http.StatusOK, body)
}
