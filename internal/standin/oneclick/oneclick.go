// Package oneclick is a local stand-in of the NEAR Intents 1Click API, for
// end-to-end tests and the bench: POST /v0/quote, GET /v0/tokens, POST
// /v0/deposit/submit and GET /v0/status in 1Click's wire shapes, answered
// deterministically from the request, a price table and what the test
// drives, each after a configurable latency.
//
// The shapes follow 1Click's public API reference, the fields Swapgate's
// intents adapter reads:
//   - POST /v0/quote takes {dry, swapType (EXACT_INPUT, or EXACT_OUTPUT:
//     amount is then the output, and amountIn the deposit it needs with the
//     slippage on the input side), slippageTolerance (basis
//     points), originAsset, depositType, destinationAsset, amount, refundTo,
//     refundType, recipient, recipientType, deadline, quoteWaitingTimeMs,
//     referral, appFees[{recipient, fee (bps)}]} and answers {timestamp,
//     signature, quoteRequest (the request echoed), quote{amountIn,
//     amountInFormatted, amountInUsd, minAmountIn, amountOut,
//     amountOutFormatted, amountOutUsd, minAmountOut, timeEstimate}, and
//     correlationId}; a quote that is not dry also carries depositAddress,
//     deadline and timeWhenInactive. Errors are {"message"} with HTTP 400
//     (unknown asset, bad amount) or 401 (a missing or wrong JWT).
//   - GET /v0/tokens answers [{assetId, decimals, blockchain, symbol,
//     price, priceUpdatedAt, contractAddress}] (no contractAddress: the
//     chain's native coin).
//   - POST /v0/deposit/submit takes {txHash, depositAddress, memo} and
//     answers the deposit's status, now KNOWN_DEPOSIT_TX.
//   - GET /v0/status?depositAddress= answers {status, updatedAt,
//     swapDetails{amountIn, amountOut, originChainTxHashes,
//     destinationChainTxHashes, refundReason}}, status being
//     PENDING_DEPOSIT → KNOWN_DEPOSIT_TX → PROCESSING → SUCCESS (or
//     INCOMPLETE_DEPOSIT, REFUNDED, FAILED) as the test drives it; an
//     unknown deposit address is 404.
package oneclick

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/mr-tron/base58"

	"github.com/swapgate/swapgate/internal/standin/kit"
	adapter "github.com/swapgate/swapgate/routing/adapters/oneclick"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// Deposit statuses, 1Click's words.
const (
	StatusPendingDeposit    = "PENDING_DEPOSIT"
	StatusKnownDepositTx    = "KNOWN_DEPOSIT_TX"
	StatusIncompleteDeposit = "INCOMPLETE_DEPOSIT"
	StatusProcessing        = "PROCESSING"
	StatusSuccess           = "SUCCESS"
	StatusRefunded          = "REFUNDED"
	StatusFailed            = "FAILED"
)

// solverFeeBps is what the solvers keep of a swap, in the origin asset.
const solverFeeBps = 15

// timeEstimate is the quotes' timeEstimate, in seconds.
const timeEstimate = 18.6

// Asset is one 1Click asset: its id, its blockchain code and contract
// address ("" for the native coin), priced by Token.
type Asset struct {
	AssetID         string
	Blockchain      string
	ContractAddress string
	Token           kit.Token
}

// Config configures the stand-in. Zero fields take the defaults.
type Config struct {
	// Latency delays every answer.
	Latency time.Duration
	// Assets are the assets quoted and listed (RegistryAssets of the
	// embedded registry at kit.DefaultPriceScale when nil).
	Assets []Asset
	// APIKey, when set, is the JWT every request must carry as
	// "Authorization: Bearer <key>".
	APIKey string
	// PriceUpdatedAt is the priceUpdatedAt of every /v0/tokens entry (the
	// time of the request when zero); SetPriceUpdatedAt changes it.
	PriceUpdatedAt time.Time
	// AutoAdvance, when above zero, moves a deposit whose transaction is
	// known one status on (KNOWN_DEPOSIT_TX → PROCESSING → SUCCESS) every
	// AutoAdvance status polls; zero leaves it to SetStatus.
	AutoAdvance int
	// Record keeps the body of every POST /v0/quote, for Quotes (off by
	// default: a bench sends millions).
	Record bool
}

type deposit struct {
	status            string
	memo              string
	amountIn          string
	amountOut         string
	txHash            string
	destinationChain  uint64
	polls             int
	updatedAt         time.Time
	refundReason      string
	destinationTxHash string
}

// Server is the stand-in's handler. It is safe for concurrent use.
type Server struct {
	cfg     Config
	latency *kit.Latency
	mux     *http.ServeMux
	assets  map[string]Asset
	list    []Asset
	now     func() time.Time

	mu        sync.Mutex
	priceAt   time.Time
	deposits  map[string]*deposit
	submitted []string
	quotes    []QuoteRequest
}

// New builds the stand-in.
func New(cfg Config) (*Server, error) {
	list := cfg.Assets
	if list == nil {
		reg, err := registry.Load()
		if err != nil {
			return nil, fmt.Errorf("oneclick standin: %w", err)
		}
		list = RegistryAssets(reg, kit.RegistryTable(reg, kit.DefaultPriceScale))
	}
	s := &Server{cfg: cfg, latency: kit.NewLatency(cfg.Latency), assets: map[string]Asset{}, now: time.Now,
		priceAt: cfg.PriceUpdatedAt, deposits: map[string]*deposit{}}
	for _, a := range list {
		if _, dup := s.assets[a.AssetID]; !dup {
			s.assets[a.AssetID] = a
			s.list = append(s.list, a)
		}
	}
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("POST /v0/quote", s.quote)
	s.mux.HandleFunc("GET /v0/tokens", s.tokens)
	s.mux.HandleFunc("POST /v0/deposit/submit", s.submit)
	s.mux.HandleFunc("GET /v0/status", s.status)
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

// RegistryAssets lists, for every chain the intents provider reaches (its
// 1Click blockchain code set), the tokens of prices on it, with the asset
// ids the intents adapter derives (AssetID); tokens whose id cannot be
// derived (non-EVM tokens) get a made-up omft id and their address as
// contractAddress, which the adapter learns from /v0/tokens.
func RegistryAssets(reg *registry.Registry, prices *kit.Table) []Asset {
	var out []Asset
	for _, c := range reg.Chains() {
		if c.IntentsBlockchain == "" {
			continue
		}
		for _, t := range reg.Tokens(c.ID) {
			p, ok := prices.Lookup(c.ID, t.Address)
			if !ok {
				continue
			}
			native := t.IsNative() || strings.EqualFold(t.Address, c.NativeToken.Address)
			a := Asset{Blockchain: c.IntentsBlockchain, Token: p}
			if !native {
				a.ContractAddress = t.Address
				if c.ChainType == registry.EVM {
					a.ContractAddress = strings.ToLower(t.Address)
				}
			}
			id, err := adapter.AssetID(c, t)
			if err != nil {
				sum := sha256.Sum256([]byte(c.IntentsBlockchain + "|" + t.Address))
				id = "nep141:" + c.IntentsBlockchain + "-" + hex.EncodeToString(sum[:20]) + ".omft.near"
			}
			a.AssetID = id
			out = append(out, a)
		}
	}
	return out
}

// ServeHTTP answers after the configured latency, refusing a request
// without the configured JWT.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	kit.Delayed(s.latency, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.APIKey != "" && r.Header.Get("Authorization") != "Bearer "+s.cfg.APIKey {
			writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "Unauthorized"})
			return
		}
		s.mux.ServeHTTP(w, r)
	})).ServeHTTP(w, r)
}

// SetLatency changes the delay of the answers from now on.
func (s *Server) SetLatency(d time.Duration) { s.latency.Set(d) }

// SetPriceUpdatedAt changes the priceUpdatedAt /v0/tokens answers (zero:
// the time of each request), so a test can make the prices stale.
func (s *Server) SetPriceUpdatedAt(t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.priceAt = t
}

// SetStatus moves a deposit (known by a non-dry quote) to status; refund
// reasons and destination hashes follow the status. It fails for a deposit
// address no quote gave.
func (s *Server) SetStatus(depositAddress, status string) error {
	switch status {
	case StatusPendingDeposit, StatusKnownDepositTx, StatusIncompleteDeposit, StatusProcessing, StatusSuccess, StatusRefunded, StatusFailed:
	default:
		return fmt.Errorf("oneclick standin: unknown status %q", status)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.deposits[depositAddress]
	if !ok {
		return fmt.Errorf("oneclick standin: no quote gave deposit address %s", depositAddress)
	}
	s.setLocked(depositAddress, d, status)
	return nil
}

func (s *Server) setLocked(addr string, d *deposit, status string) {
	d.status, d.updatedAt, d.polls = status, s.now(), 0
	switch status {
	case StatusSuccess:
		d.destinationTxHash = "0x" + hex.EncodeToString(digest("destination", addr))
	case StatusRefunded:
		d.refundReason = "the quoted amount could not be filled"
	}
}

// Quotes returns the bodies of the POST /v0/quote requests that decoded,
// in order, when Config.Record is set (nil otherwise): a test reads what
// the server asked for (dry or not, the app fee, the recipient).
func (s *Server) Quotes() []QuoteRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]QuoteRequest(nil), s.quotes...)
}

// Submitted lists the transaction hashes POST /v0/deposit/submit was told
// of, in order.
func (s *Server) Submitted() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.submitted...)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func badRequest(w http.ResponseWriter, msg string) {
	writeJSON(w, http.StatusBadRequest, map[string]any{"message": msg})
}

func digest(parts ...string) []byte {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum(nil)
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// tokens answers GET /v0/tokens.
func (s *Server) tokens(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	at := s.priceAt
	s.mu.Unlock()
	if at.IsZero() {
		at = s.now()
	}
	out := make([]adapter.TokenInfo, 0, len(s.list))
	for _, a := range s.list {
		out = append(out, adapter.TokenInfo{AssetID: a.AssetID, Decimals: a.Token.Decimals, Blockchain: a.Blockchain,
			Symbol: a.Token.Symbol, Price: a.Token.PriceUSD, PriceUpdatedAt: stamp(at), ContractAddress: a.ContractAddress})
	}
	writeJSON(w, http.StatusOK, out)
}

// QuoteRequest is the body of POST /v0/quote.
type QuoteRequest struct {
	Dry                bool   `json:"dry"`
	SwapType           string `json:"swapType"`
	SlippageTolerance  int    `json:"slippageTolerance"`
	OriginAsset        string `json:"originAsset"`
	DepositType        string `json:"depositType"`
	DestinationAsset   string `json:"destinationAsset"`
	Amount             string `json:"amount"`
	RefundTo           string `json:"refundTo"`
	RefundType         string `json:"refundType"`
	Recipient          string `json:"recipient"`
	RecipientType      string `json:"recipientType"`
	Deadline           string `json:"deadline"`
	DepositMode        string `json:"depositMode,omitempty"`
	QuoteWaitingTimeMs int    `json:"quoteWaitingTimeMs"`
	Referral           string `json:"referral,omitempty"`
	AppFees            []struct {
		Recipient string `json:"recipient"`
		Fee       int    `json:"fee"`
	} `json:"appFees,omitempty"`
}

// quote answers POST /v0/quote: the amount in, less the solvers' fee and
// the app fees, bought in the destination asset at the price table.
func (s *Server) quote(w http.ResponseWriter, r *http.Request) {
	var req QuoteRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		badRequest(w, "body is not a quote request: "+err.Error())
		return
	}
	if s.cfg.Record {
		s.mu.Lock()
		s.quotes = append(s.quotes, req)
		s.mu.Unlock()
	}
	if req.SwapType != "EXACT_INPUT" && req.SwapType != "EXACT_OUTPUT" {
		badRequest(w, "swapType "+req.SwapType+" is not supported")
		return
	}
	origin, ok := s.assets[req.OriginAsset]
	if !ok {
		badRequest(w, "tokenIn is not valid")
		return
	}
	dest, ok := s.assets[req.DestinationAsset]
	if !ok {
		badRequest(w, "tokenOut is not valid")
		return
	}
	amount, ok := new(big.Int).SetString(req.Amount, 10)
	if !ok || amount.Sign() <= 0 {
		badRequest(w, "amount must be a positive integer")
		return
	}
	if req.SlippageTolerance < 0 || req.SlippageTolerance >= 10_000 {
		badRequest(w, "slippageTolerance must be between 0 and 9999 basis points")
		return
	}
	if !req.Dry && (req.Recipient == "" || req.RefundTo == "") {
		badRequest(w, "recipient and refundTo are required for a quote that is not dry")
		return
	}
	bps := int64(solverFeeBps)
	for _, f := range req.AppFees {
		if f.Fee < 0 || f.Fee >= 10_000 {
			badRequest(w, "appFees fee must be basis points")
			return
		}
		bps += int64(f.Fee)
	}
	out := func(in *big.Int) *big.Int { return kit.Exchange(origin.Token, dest.Token, kit.Shave(in, bps)) }
	// EXACT_INPUT: amount is the deposit, the output less the slippage its
	// minimum. EXACT_OUTPUT: amount is the output; minAmountIn is the least
	// deposit that buys it and amountIn that plus the slippage (it applies
	// to the input side), the excess of a larger deposit going back to
	// refundTo.
	amountIn, minAmountIn, amountOut := amount, amount, out(amount)
	minAmountOut := kit.Shave(amountOut, int64(req.SlippageTolerance))
	if req.SwapType == "EXACT_OUTPUT" {
		minAmountIn, ok = leastInput(out, amount)
		if !ok {
			badRequest(w, "Amount is too high for the available liquidity")
			return
		}
		amountIn = new(big.Int).Mul(minAmountIn, big.NewInt(10_000+int64(req.SlippageTolerance)))
		amountIn.Add(amountIn, big.NewInt(9_999))
		amountIn.Quo(amountIn, big.NewInt(10_000))
		amountOut, minAmountOut = new(big.Int).Set(amount), new(big.Int).Set(amount)
	}
	if amountOut.Sign() <= 0 {
		badRequest(w, "Amount is too low for bridge, try at least 1000000")
		return
	}
	now := s.now()
	q := map[string]any{
		"amountIn": amountIn.String(), "amountInFormatted": kit.FormatUnits(amountIn, origin.Token.Decimals),
		"amountInUsd": kit.FormatUSD(kit.USD(origin.Token, amountIn)), "minAmountIn": minAmountIn.String(),
		"amountOut": amountOut.String(), "amountOutFormatted": kit.FormatUnits(amountOut, dest.Token.Decimals),
		"amountOutUsd": kit.FormatUSD(kit.USD(dest.Token, amountOut)),
		"minAmountOut": minAmountOut.String(),
		"timeEstimate": timeEstimate,
	}
	if !req.Dry {
		addr := depositAddress(origin, req)
		deadline := now.Add(24 * time.Hour)
		q["depositAddress"] = addr
		q["deadline"], q["timeWhenInactive"] = stamp(deadline), stamp(deadline)
		memo := ""
		if req.DepositMode == "MEMO" {
			memo = fmt.Sprintf("%d", new(big.Int).SetBytes(digest("memo", addr)[:6]))
			q["depositMemo"] = memo
		}
		s.mu.Lock()
		if _, known := s.deposits[addr]; !known {
			s.deposits[addr] = &deposit{status: StatusPendingDeposit, memo: memo, amountIn: amountIn.String(),
				amountOut: amountOut.String(), destinationChain: dest.Token.ChainID, updatedAt: now}
		}
		s.mu.Unlock()
	}
	raw, _ := json.Marshal(req)
	writeJSON(w, http.StatusCreated, map[string]any{
		"timestamp": stamp(now), "signature": "ed25519:" + base58.Encode(digest("signature", string(raw))),
		"quoteRequest": json.RawMessage(raw), "quote": q, "correlationId": uuidOf(digest("correlation", string(raw))),
	})
}

// leastInput is the least input whose output reaches want, by doubling and
// bisection over out, which never decreases as its input grows; false when
// no input below 2^256 reaches it.
func leastInput(out func(*big.Int) *big.Int, want *big.Int) (*big.Int, bool) {
	limit := new(big.Int).Lsh(big.NewInt(1), 256)
	hi := big.NewInt(1)
	for out(hi).Cmp(want) < 0 {
		if hi.Cmp(limit) > 0 {
			return nil, false
		}
		hi.Lsh(hi, 1)
	}
	lo := new(big.Int).Rsh(hi, 1)
	for new(big.Int).Sub(hi, lo).Cmp(big.NewInt(1)) > 0 {
		mid := new(big.Int).Add(lo, hi)
		mid.Rsh(mid, 1)
		if out(mid).Cmp(want) >= 0 {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, true
}

// depositAddress derives the deposit address of a firm quote from the
// request, as a valid address of the origin chain (addresses.go).
func depositAddress(origin Asset, req QuoteRequest) string {
	sum := digest("deposit", req.OriginAsset, req.DestinationAsset, req.Amount, req.Recipient, req.RefundTo, req.Deadline)
	return chainAddress(origin.Blockchain, sum)
}

func uuidOf(sum []byte) string {
	h := hex.EncodeToString(sum[:16])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// submit answers POST /v0/deposit/submit.
func (s *Server) submit(w http.ResponseWriter, r *http.Request) {
	var body struct {
		TxHash         string `json:"txHash"`
		DepositAddress string `json:"depositAddress"`
		Memo           string `json:"memo"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.TxHash == "" || body.DepositAddress == "" {
		badRequest(w, "txHash and depositAddress are required")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.deposits[body.DepositAddress]
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "Deposit address not found"})
		return
	}
	s.submitted = append(s.submitted, body.TxHash)
	d.txHash = body.TxHash
	if d.status == StatusPendingDeposit {
		s.setLocked(body.DepositAddress, d, StatusKnownDepositTx)
	}
	writeJSON(w, http.StatusOK, s.statusBody(d))
}

// status answers GET /v0/status.
func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	addr := r.URL.Query().Get("depositAddress")
	if addr == "" {
		badRequest(w, "depositAddress is required")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.deposits[addr]
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "Deposit address not found"})
		return
	}
	body := s.statusBody(d)
	if n := s.cfg.AutoAdvance; n > 0 {
		d.polls++
		if d.polls >= n {
			switch d.status {
			case StatusKnownDepositTx:
				s.setLocked(addr, d, StatusProcessing)
			case StatusProcessing:
				s.setLocked(addr, d, StatusSuccess)
			}
		}
	}
	writeJSON(w, http.StatusOK, body)
}

func (s *Server) statusBody(d *deposit) map[string]any {
	details := map[string]any{"originChainTxHashes": []any{}, "destinationChainTxHashes": []any{}}
	if d.txHash != "" {
		details["originChainTxHashes"] = []any{map[string]any{"hash": d.txHash, "explorerUrl": ""}}
	}
	switch d.status {
	case StatusProcessing, StatusSuccess, StatusRefunded, StatusFailed, StatusIncompleteDeposit:
		details["amountIn"] = d.amountIn
	}
	switch d.status {
	case StatusSuccess:
		details["amountOut"] = d.amountOut
		details["destinationChainTxHashes"] = []any{map[string]any{"hash": d.destinationTxHash, "explorerUrl": ""}}
	case StatusRefunded:
		details["refundReason"] = d.refundReason
		details["refundedAmount"] = d.amountIn
	}
	return map[string]any{"status": d.status, "updatedAt": stamp(d.updatedAt), "swapDetails": details}
}
