// Package relay is a local stand-in of Relay's API (relay.link), for
// end-to-end tests and the bench: POST /quote/v2, GET /intents/status/v3
// and GET /chains in Relay's wire shapes, answered deterministically from
// the request, a price table and the knobs a test turns, each after a
// configurable latency.
//
// The shapes follow Relay's public API reference, the fields Swapgate's
// Relay adapter reads:
//   - /quote/v2 takes {user, recipient, originChainId, destinationChainId,
//     originCurrency, destinationCurrency, amount, tradeType, refundTo,
//     slippageTolerance, appFees[{recipient, fee}]} (amounts and basis
//     points as decimal strings, a native coin as the zero address) and
//     answers {steps, fees, details}: for an ERC-20 input an "approve" step
//     (the token's approve(router, amount)) and a "deposit" step (one
//     transaction to the router), for a native input the deposit alone,
//     each naming the request id; fees.gas, fees.relayer and fees.app;
//     details.currencyIn and currencyOut with amount, amountUsd and
//     minimumAmount, operation and timeEstimate. Relay's own fee is
//     relayerFeeBps of the input, the app fees come off the input too, the
//     rest is bought at the price table, moved by the edge (Config.EdgeBps)
//     so that a test can make Relay's answer better or worse than another
//     stand-in's for the same pair. EXACT_OUTPUT sizes the least input whose
//     output reaches amount and delivers exactly amount. A refusal is
//     {message, errorCode} with Relay's codes.
//   - /intents/status/v3?requestId= answers {status, inTxHashes, txHashes,
//     updatedAt}: a request's first polls are "waiting", then "pending",
//     then "success" with a destination hash (Config.StatusPolls), unless a
//     test set its status (SetStatus).
//   - /chains answers {chains[{id, name, displayName, disabled, vmType}]}:
//     the registry's EVM chains, Config.Disabled among them disabled.
//
// Every request must carry Config.APIKey as x-api-key when one is set.
package relay

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/swapgate/swapgate/internal/standin/kit"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// DefaultRouter is the address the stand-in's deposits go to and its
// approvals name as spender.
const DefaultRouter = "0xa5f565650890fba1824ee0f21ebbbf660a179934"

// Costs of the stand-in's quotes.
const (
	// relayerFeeBps is Relay's own fee, taken from the input.
	relayerFeeBps = 5
	// defaultSlippageBps applies when the body has no slippageTolerance.
	defaultSlippageBps = 50
	// gasUnits and gasPriceWei are the deposit's gas (0.1 gwei everywhere).
	gasUnits    = 150_000
	gasPriceWei = 100_000_000
)

// nativeAddress is Relay's native coin on EVM chains.
const nativeAddress = "0x0000000000000000000000000000000000000000"

// Config configures the stand-in. Zero fields take the defaults.
type Config struct {
	// Latency delays every answer.
	Latency time.Duration
	// Router is the deposits' to and the approvals' spender (DefaultRouter
	// when empty).
	Router string
	// Prices is the price table quotes are computed from
	// (kit.DefaultTable when nil).
	Prices *kit.Table
	// EdgeBps moves every quote's output by that many basis points (more
	// when positive, less when negative), so that a test can make Relay
	// better or worse than another upstream on the same pair. SetEdgeBps
	// changes it while the stand-in serves. At 0, Relay's output is some
	// 5 bps of the input above the LI.FI stand-in's for the same request
	// (Relay's fee is 5 bps where LI.FI's tool fee is 10): +100 makes Relay
	// clearly the better, −100 clearly the worse.
	EdgeBps int
	// APIKey, when set, must come as x-api-key on every request (401
	// otherwise, as Relay answers a key it refuses).
	APIKey string
	// StatusPolls is how many status answers of a request come before
	// success: the first "waiting", the others "pending". Zero: success at
	// once.
	StatusPolls int
	// Disabled are chains /chains lists as disabled, and quotes refuse.
	Disabled []uint64
	// Tamper, when set, edits every /quote/v2 answer (its JSON object, as
	// decoded into maps and slices) just before it is sent, so that a test
	// can make the stand-in misbehave as a broken or hostile upstream
	// would. SetTamper changes it while the stand-in serves.
	Tamper func(answer map[string]any)
}

// Server is the stand-in's handler. It is safe for concurrent use.
type Server struct {
	cfg     Config
	reg     *registry.Registry
	latency *kit.Latency
	prices  *kit.Table
	mux     *http.ServeMux
	edge    atomic.Int64
	tamper  atomic.Pointer[func(map[string]any)]

	mu        sync.Mutex
	lastQuote map[string]any
	quotes    int
	polls     map[string]int
	forced    map[string]string
}

// New builds the stand-in.
func New(cfg Config) (*Server, error) {
	if cfg.Router == "" {
		cfg.Router = DefaultRouter
	}
	reg, err := registry.Load()
	if err != nil {
		return nil, err
	}
	prices := cfg.Prices
	if prices == nil {
		prices = kit.RegistryTable(reg, kit.DefaultPriceScale)
	}
	s := &Server{cfg: cfg, reg: reg, latency: kit.NewLatency(cfg.Latency), prices: prices,
		polls: map[string]int{}, forced: map[string]string{}}
	s.edge.Store(int64(cfg.EdgeBps))
	s.SetTamper(cfg.Tamper)
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("POST /quote/v2", s.quote)
	s.mux.HandleFunc("GET /intents/status/v3", s.status)
	s.mux.HandleFunc("GET /chains", s.chains)
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

// ServeHTTP checks the key and answers after the configured latency.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	kit.Delayed(s.latency, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.APIKey != "" && r.Header.Get("x-api-key") != s.cfg.APIKey {
			refuse(w, http.StatusUnauthorized, "UNAUTHORIZED", "Invalid API key")
			return
		}
		s.mux.ServeHTTP(w, r)
	})).ServeHTTP(w, r)
}

// SetLatency changes the delay of the answers from now on.
func (s *Server) SetLatency(d time.Duration) { s.latency.Set(d) }

// SetEdgeBps changes the edge of the quotes answered from now on (see
// Config.EdgeBps).
func (s *Server) SetEdgeBps(bps int) { s.edge.Store(int64(bps)) }

// SetTamper changes how the /quote/v2 answers are edited from now on (see
// Config.Tamper); nil answers them as they are.
func (s *Server) SetTamper(f func(answer map[string]any)) {
	if f == nil {
		s.tamper.Store(nil)
		return
	}
	s.tamper.Store(&f)
}

// SetStatus makes a request's status answers status from now on (one of
// Relay's: waiting, depositing, pending, submitted, success, delayed,
// refund, failure), whatever its polls.
func (s *Server) SetStatus(requestID, status string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forced[strings.ToLower(requestID)] = status
}

// LastQuote returns the body of the last /quote/v2 request, as decoded
// JSON (nil before the first): a test reads what the server asked Relay
// (tradeType, refundTo, appFees).
func (s *Server) LastQuote() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastQuote == nil {
		return nil
	}
	b, _ := json.Marshal(s.lastQuote)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

// QuoteCount is how many /quote/v2 requests arrived.
func (s *Server) QuoteCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.quotes
}

// Prices returns the price table the stand-in quotes from.
func (s *Server) Prices() *kit.Table { return s.prices }

// RequestID is the request id the stand-in names for a quote request's raw
// body: a digest of it, so that the same request has the same id.
func RequestID(body []byte) string { return "0x" + hex.EncodeToString(digest("request", string(body))) }

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

// refuse answers Relay's error body.
func refuse(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"message": msg, "errorCode": code})
}

func digest(parts ...string) []byte {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum(nil)
}

// chains answers GET /chains.
func (s *Server) chains(w http.ResponseWriter, _ *http.Request) {
	var out []map[string]any
	for _, ch := range s.reg.Chains() {
		if ch.ChainType != registry.EVM {
			continue
		}
		out = append(out, map[string]any{"id": ch.ID, "name": ch.Key, "displayName": ch.Name,
			"disabled": slices.Contains(s.cfg.Disabled, ch.ID), "depositEnabled": true, "vmType": "evm"})
	}
	writeJSON(w, http.StatusOK, map[string]any{"chains": out})
}

// quoteRequest is the body of /quote/v2 as the stand-in reads it.
type quoteRequest struct {
	User                string          `json:"user"`
	Recipient           string          `json:"recipient"`
	OriginChainID       uint64          `json:"originChainId"`
	DestinationChainID  uint64          `json:"destinationChainId"`
	OriginCurrency      string          `json:"originCurrency"`
	DestinationCurrency string          `json:"destinationCurrency"`
	Amount              string          `json:"amount"`
	TradeType           string          `json:"tradeType"`
	RefundTo            string          `json:"refundTo"`
	SlippageTolerance   string          `json:"slippageTolerance"`
	AppFees             []appFeeRequest `json:"appFees"`
}

type appFeeRequest struct {
	Recipient string `json:"recipient"`
	Fee       string `json:"fee"`
}

var evmAddress = regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`)

// priced is a quote's arithmetic for an input.
type priced struct {
	relayerFee, appFee, toAmount *big.Int
}

// price takes Relay's fee and the app fees off the input, buys the rest at
// the table and moves it by the edge.
func (s *Server) price(from, to kit.Token, in *big.Int, appBps int64) priced {
	var p priced
	p.relayerFee = new(big.Int).Sub(in, kit.Shave(in, relayerFeeBps))
	p.appFee = new(big.Int).Sub(in, kit.Shave(in, appBps))
	rest := new(big.Int).Sub(in, p.relayerFee)
	rest.Sub(rest, p.appFee)
	if rest.Sign() <= 0 {
		p.toAmount = new(big.Int)
		return p
	}
	out := kit.Exchange(from, to, rest)
	out.Mul(out, big.NewInt(10_000+s.edge.Load()))
	p.toAmount = out.Quo(out, big.NewInt(10_000))
	return p
}

// quote answers POST /quote/v2.
func (s *Server) quote(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		refuse(w, http.StatusBadRequest, "INVALID_REQUEST", "unreadable body")
		return
	}
	var asked map[string]any
	_ = json.Unmarshal(raw, &asked)
	s.mu.Lock()
	s.lastQuote, s.quotes = asked, s.quotes+1
	s.mu.Unlock()
	var q quoteRequest
	if err := json.Unmarshal(raw, &q); err != nil {
		refuse(w, http.StatusBadRequest, "INVALID_REQUEST", "body: "+err.Error())
		return
	}
	if !evmAddress.MatchString(q.User) || (q.Recipient != "" && !evmAddress.MatchString(q.Recipient)) ||
		(q.RefundTo != "" && !evmAddress.MatchString(q.RefundTo)) {
		refuse(w, http.StatusBadRequest, "INVALID_ADDRESS", "user, recipient and refundTo must be EVM addresses")
		return
	}
	amount, ok := new(big.Int).SetString(q.Amount, 10)
	if !ok || amount.Sign() <= 0 {
		refuse(w, http.StatusBadRequest, "INVALID_REQUEST", "amount must be a positive integer string")
		return
	}
	slippage := int64(defaultSlippageBps)
	if q.SlippageTolerance != "" {
		if slippage, err = strconv.ParseInt(q.SlippageTolerance, 10, 64); err != nil || slippage < 0 || slippage >= 10_000 {
			refuse(w, http.StatusBadRequest, "INVALID_SLIPPAGE_TOLERANCE", "slippageTolerance must be basis points as an integer string")
			return
		}
	}
	var appBps int64
	for _, f := range q.AppFees {
		bps, err := strconv.ParseInt(f.Fee, 10, 64)
		if err != nil || bps < 0 || !evmAddress.MatchString(f.Recipient) {
			refuse(w, http.StatusBadRequest, "INVALID_REQUEST", "appFees: fee must be basis points and recipient an address")
			return
		}
		appBps += bps
	}
	if appBps >= 10_000-relayerFeeBps {
		refuse(w, http.StatusBadRequest, "INVALID_REQUEST", "appFees: more than the input")
		return
	}
	for _, id := range []uint64{q.OriginChainID, q.DestinationChainID} {
		ch, ok := s.reg.Chain(id)
		if !ok || ch.ChainType != registry.EVM || slices.Contains(s.cfg.Disabled, id) {
			refuse(w, http.StatusBadRequest, "CHAIN_DISABLED", "chain "+strconv.FormatUint(id, 10)+" is disabled or not supported")
			return
		}
	}
	from, okFrom := s.prices.Lookup(q.OriginChainID, q.OriginCurrency)
	to, okTo := s.prices.Lookup(q.DestinationChainID, q.DestinationCurrency)
	if !okFrom || !okTo {
		refuse(w, http.StatusBadRequest, "UNSUPPORTED_CURRENCY", "the currency is not supported")
		return
	}
	var in *big.Int
	var p priced
	minOut := new(big.Int)
	switch q.TradeType {
	case "EXACT_INPUT":
		in, p = amount, s.price(from, to, amount, appBps)
		minOut = kit.Shave(p.toAmount, slippage)
	case "EXACT_OUTPUT", "EXPECTED_OUTPUT":
		if in = s.size(from, to, amount, appBps); in == nil {
			refuse(w, http.StatusBadRequest, "INSUFFICIENT_LIQUIDITY", "no input delivers the requested amount")
			return
		}
		p = s.price(from, to, in, appBps)
		// Relay fills the exact output exactly or refunds.
		p.toAmount, minOut = new(big.Int).Set(amount), new(big.Int).Set(amount)
	default:
		refuse(w, http.StatusBadRequest, "INVALID_REQUEST", "tradeType must be EXACT_INPUT, EXPECTED_OUTPUT or EXACT_OUTPUT")
		return
	}
	if p.toAmount.Sign() <= 0 {
		refuse(w, http.StatusBadRequest, "AMOUNT_TOO_LOW", "Amount is too low to cover fees")
		return
	}
	answer := s.answer(q, RequestID(raw), from, to, in, p, minOut)
	if f := s.tamper.Load(); f != nil {
		// Through JSON and back, so that the hook edits the answer as a
		// client would decode it (objects as maps, lists as slices).
		b, err := json.Marshal(answer)
		var m map[string]any
		if err == nil {
			err = json.Unmarshal(b, &m)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		(*f)(m)
		answer = m
	}
	writeJSON(w, http.StatusOK, answer)
}

// size finds the least input whose output reaches want (doubling, then
// bisection over the same pricing); nil when none does.
func (s *Server) size(from, to kit.Token, want *big.Int, appBps int64) *big.Int {
	reaches := func(in *big.Int) bool { return s.price(from, to, in, appBps).toAmount.Cmp(want) >= 0 }
	hi := big.NewInt(1)
	limit := new(big.Int).Lsh(big.NewInt(1), 255)
	for !reaches(hi) {
		if hi.Cmp(limit) > 0 {
			return nil
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
	return hi
}

func wireCurrency(t kit.Token) map[string]any {
	return map[string]any{"chainId": t.ChainID, "address": t.Address, "symbol": t.Symbol, "name": t.Name, "decimals": t.Decimals,
		"metadata": map[string]any{"verified": true, "isNative": strings.EqualFold(t.Address, nativeAddress)}}
}

func wireAmount(t kit.Token, amount, minimum *big.Int) map[string]any {
	return map[string]any{"currency": wireCurrency(t), "amount": amount.String(), "amountFormatted": kit.FormatUnits(amount, t.Decimals),
		"amountUsd": kit.FormatUSD(kit.USD(t, amount)), "minimumAmount": minimum.String()}
}

func wireFee(t kit.Token, amount *big.Int) map[string]any {
	return map[string]any{"currency": wireCurrency(t), "amount": amount.String(), "amountFormatted": kit.FormatUnits(amount, t.Decimals),
		"amountUsd": kit.FormatUSD(kit.USD(t, amount))}
}

// word is v as a 32-byte ABI word in hex.
func word(v *big.Int) string {
	h := v.Text(16)
	return strings.Repeat("0", 64-len(h)) + h
}

// answer builds the /quote/v2 answer.
func (s *Server) answer(q quoteRequest, requestID string, from, to kit.Token, in *big.Int, p priced, minOut *big.Int) map[string]any {
	user := q.User
	tx := func(to, data string, value *big.Int, gas int) map[string]any {
		return map[string]any{"from": user, "to": to, "data": data, "value": value.String(), "chainId": q.OriginChainID,
			"gas": strconv.Itoa(gas), "maxFeePerGas": strconv.Itoa(gasPriceWei), "maxPriorityFeePerGas": "1000000"}
	}
	check := map[string]any{"endpoint": "/intents/status/v3?requestId=" + requestID, "method": "GET"}
	native := strings.EqualFold(from.Address, nativeAddress)
	value := new(big.Int)
	if native {
		value.Set(in)
	}
	// The deposit's calldata: a selector, the request id and the amount,
	// as Relay's depository deposits name their order.
	deposit := "0x" + hex.EncodeToString(digest("deposit")[:4]) + requestID[2:] + word(in)
	var steps []any
	if !native {
		spender, _ := new(big.Int).SetString(s.cfg.Router[2:], 16)
		steps = append(steps, map[string]any{"id": "approve", "action": "Confirm transaction in your wallet",
			"description": "Sign an approval for " + from.Symbol, "kind": "transaction", "requestId": requestID,
			"items": []any{map[string]any{"status": "incomplete",
				"data": tx(from.Address, "0x095ea7b3"+word(spender)+word(in), new(big.Int), 60_000)}}})
	}
	steps = append(steps, map[string]any{"id": "deposit", "action": "Confirm transaction in your wallet",
		"description": "Depositing funds to the relayer", "kind": "transaction", "requestId": requestID,
		"items": []any{map[string]any{"status": "incomplete", "data": tx(s.cfg.Router, deposit, value, gasUnits), "check": check}}})
	gasToken, ok := s.prices.Lookup(q.OriginChainID, nativeAddress)
	if !ok {
		gasToken = kit.Token{ChainID: q.OriginChainID, Address: nativeAddress, Symbol: "ETH", Name: "Ether", Decimals: 18}
	}
	operation, seconds := "bridge", 10
	if q.OriginChainID == q.DestinationChainID {
		operation, seconds = "swap", 2
	}
	return map[string]any{
		"steps": steps,
		"fees": map[string]any{
			"gas":     wireFee(gasToken, new(big.Int).Mul(big.NewInt(gasUnits), big.NewInt(gasPriceWei))),
			"relayer": wireFee(from, p.relayerFee),
			"app":     wireFee(from, p.appFee),
		},
		"details": map[string]any{
			"operation": operation, "sender": user, "recipient": q.Recipient, "timeEstimate": seconds,
			"currencyIn":  wireAmount(from, in, in),
			"currencyOut": wireAmount(to, p.toAmount, minOut),
		},
	}
}

var requestIDPattern = regexp.MustCompile(`^0x[0-9a-fA-F]{1,128}$`)

// status answers GET /intents/status/v3: every well-formed request id is
// known (the stand-in keeps no quotes, so that a bench's millions cost
// nothing), its polls counted from the first.
func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	id := strings.ToLower(r.URL.Query().Get("requestId"))
	if !requestIDPattern.MatchString(id) {
		refuse(w, http.StatusBadRequest, "INVALID_REQUEST", "requestId must be 0x-prefixed hex")
		return
	}
	s.mu.Lock()
	s.polls[id]++
	n := s.polls[id]
	status, forced := s.forced[id]
	s.mu.Unlock()
	if !forced {
		switch {
		case n > s.cfg.StatusPolls:
			status = "success"
		case n == 1:
			status = "waiting"
		default:
			status = "pending"
		}
	}
	in, out := []string{}, []string{}
	if status != "waiting" {
		in = append(in, "0x"+hex.EncodeToString(digest("in", id)))
	}
	switch status {
	case "success", "submitted":
		out = append(out, "0x"+hex.EncodeToString(digest("out", id)))
	case "refund":
		out = append(out, "0x"+hex.EncodeToString(digest("refund", id)))
	}
	body := map[string]any{"status": status, "inTxHashes": in, "txHashes": out, "updatedAt": time.Now().UnixMilli()}
	if status == "failure" {
		body["details"] = "Unsuccessful fill"
	}
	writeJSON(w, http.StatusOK, body)
}
