package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"math/big"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/sim/sandbox"
	pebblestore "github.com/swapgate/swapgate/store/pebble"
)

const (
	wallet      = "0x8ba1f109551bD432803012645Ac136ddd64DBA72"
	usdcArb     = "0xaf88d065e77c8cC2239327C5EDb3A432268e5831"
	usdcBase    = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
	usdcEth     = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"
	wethArb     = "0x82aF49447D8a07e3bd95BD0d56f35241523fBab1"
	usdch       = "0xa5B0D537CeBE97f087Dc5FE5732d70719caaEc1D"
	tonAddress  = "EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs"
	zeroAddress = "0x0000000000000000000000000000000000000000"
)

// shapeA is the part of a Shape A quote the tests read.
type shapeA struct {
	Quote struct {
		ID, Type, Tool string
		Action         struct {
			FromChainID, ToChainID uint64
			FromAmount, ToAddress  string
			Slippage               float64
		}
		Estimate struct {
			FromAmount, ToAmount, ToAmountMin, ApprovalAddress string
			FromAmountUSD, ToAmountUSD                         string
			ExecutionDuration                                  int
			GasCosts                                           []struct{ Type, Amount, AmountUSD string }
			FeeCosts                                           []struct{ Name, Amount, Percentage string }
		}
		TransactionRequest *struct {
			To, Data, Value, GasLimit string
			ChainID                   uint64
		}
		DepositAddress string
		ExpiresAt      int64
	}
	Provider   string
	FeeBps     int
	IsDryQuote bool
	ExpiresAt  int64
}

func quotePath(kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return "/v1/quote?" + v.Encode()
}

func arbToBase(extra ...string) string {
	return quotePath(append([]string{"fromChain", "42161", "toChain", "8453", "fromToken", usdcArb, "toToken", usdcBase,
		"fromAmount", "1000000000", "fromAddress", wallet, "toAddress", wallet}, extra...)...)
}

func decodeHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.TrimPrefix(s, "0x"))
	if err != nil {
		t.Fatalf("hex %q: %v", s, err)
	}
	return b
}

func bigOf(t *testing.T, s string) *big.Int {
	t.Helper()
	v, ok := new(big.Int).SetString(s, 0)
	if !ok {
		t.Fatalf("not a number: %q", s)
	}
	return v
}

func TestQuoteAggregatorShapeA(t *testing.T) {
	ts := startServer(t, nil)
	var q shapeA
	ts.get(arbToBase()).decode(t, &q)
	if q.Provider != "aggregator" || q.FeeBps != 30 || q.IsDryQuote || !strings.HasPrefix(q.Quote.ID, "qt_") {
		t.Fatalf("quote header: %+v", q)
	}
	if d := q.ExpiresAt - time.Now().Unix(); d < 50 || d > 65 || q.Quote.ExpiresAt != q.ExpiresAt {
		t.Fatalf("expiresAt %d (in %ds)", q.ExpiresAt, d)
	}
	e := q.Quote.Estimate
	if bigOf(t, e.ToAmountMin).Cmp(bigOf(t, e.ToAmount)) >= 0 || e.ExecutionDuration <= 0 || len(e.GasCosts) == 0 {
		t.Fatalf("estimate %+v", e)
	}
	// toAmountMin is toAmount less the default 0.5% slippage.
	want := new(big.Int).Mul(bigOf(t, e.ToAmount), big.NewInt(995))
	want.Quo(want, big.NewInt(1000))
	if bigOf(t, e.ToAmountMin).Cmp(want) != 0 {
		t.Fatalf("toAmountMin %s, want %s", e.ToAmountMin, want)
	}
	// The fee is taken out of the output: toAmount + fee is the pre-fee
	// output, and the fee is 30 bps of it, to the base unit.
	var fee *big.Int
	for _, f := range e.FeeCosts {
		if strings.Contains(strings.ToLower(f.Name), "fee") && f.Percentage == "0.003" {
			fee = bigOf(t, f.Amount)
		}
	}
	if fee == nil {
		t.Fatalf("no 30 bps fee in feeCosts %+v", e.FeeCosts)
	}
	pre := new(big.Int).Add(bigOf(t, e.ToAmount), fee)
	expect := new(big.Int).Quo(new(big.Int).Mul(pre, big.NewInt(30)), big.NewInt(10_000))
	if d := new(big.Int).Sub(expect, fee); d.CmpAbs(big.NewInt(1)) > 0 {
		t.Fatalf("fee %s is not 30 bps of pre-fee output %s", fee, pre)
	}
	// ERC-20 source: approve the spender the quote names, which is the
	// sandbox router the transaction calls; the calldata decodes.
	tx := q.Quote.TransactionRequest
	if tx == nil || tx.ChainID != 42161 || !strings.EqualFold(tx.To, e.ApprovalAddress) || tx.Value != "0x0" {
		t.Fatalf("transactionRequest %+v, approval %s", tx, e.ApprovalAddress)
	}
	if !strings.EqualFold(tx.To, sandbox.RouterAddress(42161).Hex()) {
		t.Fatalf("tx.to %s is not the sandbox router", tx.To)
	}
	rabi, err := sandbox.RouterABI()
	if err != nil {
		t.Fatal(err)
	}
	data := decodeHex(t, tx.Data)
	m, err := rabi.MethodById(data[:4])
	if err != nil {
		t.Fatal(err)
	}
	args, err := m.Inputs.Unpack(data[4:])
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]any{}
	for i, in := range m.Inputs {
		named[in.Name] = args[i]
	}
	if named["fromToken"] != common.HexToAddress(usdcArb) || named["fromAmount"].(*big.Int).Cmp(big.NewInt(1_000_000_000)) != 0 {
		t.Fatalf("%s args %v", m.Name, named)
	}
	if mo, ok := named["minAmountOut"].(*big.Int); !ok || mo.Cmp(bigOf(t, e.ToAmountMin)) != 0 {
		t.Fatalf("minAmountOut %v, toAmountMin %s", named["minAmountOut"], e.ToAmountMin)
	}
	if gl := bigOf(t, tx.GasLimit); gl.Sign() <= 0 {
		t.Fatalf("gasLimit %s", tx.GasLimit)
	}
}

func TestQuoteNativeSourceNeedsNoApproval(t *testing.T) {
	ts := startServer(t, nil)
	var q shapeA
	env := ts.get(quotePath("fromChain", "42161", "toChain", "8453", "fromToken", zeroAddress, "toToken", usdcBase,
		"fromAmount", "500000000000000000", "fromAddress", wallet))
	env.decode(t, &q)
	if !bytes.Contains(env.Raw, []byte(`"approvalAddress":null`)) {
		t.Fatalf("a native input's approvalAddress must be null: %s", env.Raw)
	}
	tx := q.Quote.TransactionRequest
	if q.Quote.Estimate.ApprovalAddress != "" || tx == nil || bigOf(t, tx.Value).Cmp(bigOf(t, "500000000000000000")) != 0 {
		t.Fatalf("native source: approval %q, tx %+v", q.Quote.Estimate.ApprovalAddress, tx)
	}
	if !q.IsDryQuote || q.Quote.Action.ToAddress != wallet {
		t.Fatalf("no toAddress: dry quote to fromAddress expected, got %+v", q)
	}
	for _, g := range q.Quote.Estimate.GasCosts {
		if g.Type == "APPROVE" {
			t.Fatal("native source carries an approval gas cost")
		}
	}
}

func TestQuoteIntentsToTON(t *testing.T) {
	ts := startServer(t, nil)
	var q shapeA
	ts.get(quotePath("fromChain", "1", "toChain", "900000002", "fromToken", usdcEth, "toToken", "native",
		"fromAmount", "250000000", "fromAddress", wallet, "toAddress", tonAddress)).decode(t, &q)
	if q.Provider != "intents" || q.Quote.DepositAddress == "" || q.Quote.TransactionRequest == nil {
		t.Fatalf("intents quote: %+v", q)
	}
	tx := q.Quote.TransactionRequest
	data := decodeHex(t, tx.Data)
	method, args, err := pulseroute.Decode(data)
	if err != nil || method != pulseroute.MethodTransfer || !strings.EqualFold(tx.To, usdcEth) {
		t.Fatalf("deposit tx %+v: %s %v %v", tx, method, args, err)
	}
	if args[0].(common.Address) != common.HexToAddress(q.Quote.DepositAddress) || args[1].(*big.Int).Cmp(big.NewInt(250000000)) != 0 {
		t.Fatalf("transfer args %v, deposit %s", args, q.Quote.DepositAddress)
	}
	// A dry quote across ecosystems is indicative: no transaction.
	var dry shapeA
	ts.get(quotePath("fromChain", "1", "toChain", "900000002", "fromToken", usdcEth, "toToken", "native",
		"fromAmount", "250000000", "fromAddress", wallet)).decode(t, &dry)
	if !dry.IsDryQuote || dry.Quote.TransactionRequest != nil {
		t.Fatalf("indicative quote: %+v", dry)
	}
}

func TestQuotePulserouteVariants(t *testing.T) {
	ts := startServer(t, nil)
	type direct struct {
		Quote struct {
			ID, Provider, FromAmount, EstimatedOutput, MinOutput, Fee, SenderContract string
			TransactionRequest                                                        struct {
				To, Data, Value string
				ChainID         uint64
			}
			FeeBreakdown struct{ TotalFeeBps int }
		}
		Provider string
		FeeBps   int
	}
	// Direct inbound: USDC on Arbitrum to USDCh on 369, one transaction to
	// the sender contract.
	var in direct
	ts.get(quotePath("fromChain", "42161", "toChain", "369", "fromToken", usdcArb, "toToken", usdch,
		"fromAmount", "1000000000", "fromAddress", wallet, "toAddress", wallet)).decode(t, &in)
	sender, _ := pulseroute.DefaultContracts().SenderContract(42161)
	if in.Provider != "pulseroute" || !strings.EqualFold(in.Quote.SenderContract, sender.Hex()) ||
		!strings.EqualFold(in.Quote.TransactionRequest.To, in.Quote.SenderContract) || in.Quote.TransactionRequest.ChainID != 42161 {
		t.Fatalf("direct inbound: %+v", in)
	}
	if m, _, err := pulseroute.Decode(decodeHex(t, in.Quote.TransactionRequest.Data)); err != nil || m != pulseroute.MethodBridgeAndSwap {
		t.Fatalf("direct inbound calldata: %s %v", m, err)
	}

	// Direct outbound: USDCh to USDC on Base, fee-free 1:1 transferRemote.
	var out direct
	ts.get(quotePath("fromChain", "369", "toChain", "8453", "fromToken", usdch, "toToken", usdcBase,
		"fromAmount", "50000000", "fromAddress", wallet, "toAddress", wallet)).decode(t, &out)
	if out.Quote.FeeBreakdown.TotalFeeBps != 0 || out.Quote.EstimatedOutput != out.Quote.FromAmount || out.FeeBps != 0 {
		t.Fatalf("direct outbound: %+v", out)
	}
	m, args, err := pulseroute.Decode(decodeHex(t, out.Quote.TransactionRequest.Data))
	if err != nil || m != pulseroute.MethodTransferRemote || args[0].(uint32) != 8453 ||
		args[1].([32]byte) != pulseroute.AddressToBytes32(common.HexToAddress(wallet)) || args[2].(*big.Int).Int64() != 50000000 {
		t.Fatalf("transferRemote: %s %v %v", m, args, err)
	}
	if bigOf(t, out.Quote.TransactionRequest.Value).Sign() <= 0 {
		t.Fatal("transferRemote must pay the interchain gas in value")
	}

	// Multi-step inbound: WETH on Arbitrum to native PLS.
	var ms struct {
		Quote struct {
			Type                string
			TotalSteps          int
			SingleSignature     bool
			IntermediateChainID uint64
			Steps               []struct {
				Step               int
				Type               string
				Automated          bool
				TransactionRequest *struct{ To, Data string }
			}
			Instructions struct{ Step1, Step2, Step3 string }
			AfterStep1   struct {
				Action            string
				SignatureRequired bool
				EIP712            struct {
					Domain struct {
						Name, Version string
						ChainID       uint64
					}
					Types       map[string][]struct{ Name, Type string }
					PrimaryType string
				}
			}
		}
		Provider string
	}
	ts.get(quotePath("fromChain", "42161", "toChain", "369", "fromToken", wethArb, "toToken", "native",
		"fromAmount", "1000000000000000000", "fromAddress", wallet, "toAddress", wallet)).decode(t, &ms)
	q := ms.Quote
	if q.Type != "multi-step" || q.TotalSteps != 2 || !q.SingleSignature || len(q.Steps) != 2 ||
		q.Steps[0].Type != "aggregator" || q.Steps[0].TransactionRequest == nil || q.Steps[1].Type != "pulseroute-automatic" || !q.Steps[1].Automated {
		t.Fatalf("multi-step: %+v", q)
	}
	d := q.AfterStep1.EIP712
	if d.Domain.Name != "ServiceInboundReceiver" || d.Domain.Version != "1" || d.Domain.ChainID != 42161 || d.PrimaryType != "RegisterDeposit" ||
		len(d.Types["RegisterDeposit"]) != 4 || !q.AfterStep1.SignatureRequired || q.Instructions.Step3 == "" {
		t.Fatalf("afterStep1: %+v", q.AfterStep1)
	}
}

func TestQuoteValidation(t *testing.T) {
	ts := startServer(t, func(c *app.Config) { c.AnonHeavyPerMin = 1000 })
	base := map[string]string{"fromChain": "42161", "toChain": "8453", "fromToken": usdcArb, "toToken": usdcBase,
		"fromAmount": "1000000000", "fromAddress": wallet}
	cases := []struct {
		name, param, value string
	}{
		{"missing fromChain", "fromChain", ""},
		{"bad chain", "fromChain", "arbitrum"},
		{"unknown chain", "toChain", "999999"},
		{"missing fromToken", "fromToken", ""},
		{"malformed token", "fromToken", "0x1234"},
		{"unknown token", "toToken", "0x1111111111111111111111111111111111111111"},
		{"zero amount", "fromAmount", "0"},
		{"negative amount", "fromAmount", "-5"},
		{"decimal amount", "fromAmount", "1.5"},
		{"hex amount", "fromAmount", "0x10"},
		{"too big", "fromAmount", "1" + strings.Repeat("0", 78)},
		{"bad checksum", "fromAddress", "0x8Ba1f109551bD432803012645Ac136ddd64DBA72"},
		{"solana address on EVM", "fromAddress", "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV"},
		{"TON address on Base", "toAddress", tonAddress},
		{"negative slippage", "slippage", "-0.1"},
		{"NaN slippage", "slippage", "NaN"},
		{"huge slippage", "slippage", "6000"},
		{"unknown tool", "tools", "sbx-nope"},
		{"unknown denied tool", "denyTools", "hop"},
		{"unknown preferred tool", "preferredTool", "x"},
		{"bad order", "order", "BEST"},
		{"zero maxWaitMs", "maxWaitMs", "0"},
		{"maxWaitMs past the deadline", "maxWaitMs", "1501"},
		{"fractional maxWaitMs", "maxWaitMs", "1.5"},
		{"negative minWaitMs", "minWaitMs", "-1"},
		{"minWaitMs past the deadline", "minWaitMs", "2000"},
		{"expectedResults not a number", "expectedResults", "all"},
		{"too many expectedResults", "expectedResults", "1001"},
		{"reduceEveryMs past the deadline", "reduceEveryMs", "99999999999999999999999"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var kv []string
			for k, v := range base {
				if k != c.param {
					kv = append(kv, k, v)
				}
			}
			if c.value != "" {
				kv = append(kv, c.param, c.value)
			}
			ts.get(quotePath(kv...)).wantError(t, 400, "INVALID_PARAMS", c.param)
		})
	}
}

func TestQuoteNoRouteAndFilters(t *testing.T) {
	ts := startServer(t, func(c *app.Config) { c.AnonHeavyPerMin = 1000 })
	env := ts.get(arbToBase("fromAmount", "10"))
	env.wantError(t, 404, "NO_ROUTE_FOUND", "")
	d := env.Error.Details
	if d["fromChain"] != float64(42161) || d["toChain"] != float64(8453) || d["fromToken"] != usdcArb || d["toToken"] != usdcBase || d["reasons"] == nil {
		t.Fatalf("details %v", d)
	}
	if !strings.Contains(string(env.Raw), "AMOUNT_TOO_LOW") {
		t.Fatalf("no reason given: %s", env.Raw)
	}
	var q shapeA
	ts.get(arbToBase("denyTools", "sbx-canal")).decode(t, &q)
	if q.Quote.Tool == "sbx-canal" {
		t.Fatal("denyTools ignored")
	}
	ts.get(arbToBase("tools", "sbx-wormway")).decode(t, &q)
	if q.Quote.Tool != "sbx-wormway" {
		t.Fatalf("tools=sbx-wormway gave %s", q.Quote.Tool)
	}
	var fast shapeA
	ts.get(arbToBase("order", "FASTEST")).decode(t, &fast)
	var all struct {
		Routes []struct {
			Tool     string
			Tags     []string
			Estimate struct{ ExecutionDuration int }
		}
	}
	ts.get(strings.Replace(arbToBase("sortBy", "speed"), "/v1/quote", "/v1/routes", 1)).decode(t, &all)
	if len(all.Routes) < 2 || all.Routes[0].Tool != fast.Quote.Tool {
		t.Fatalf("routes %+v, fastest quote %s", all.Routes, fast.Quote.Tool)
	}
	tags := map[string]bool{}
	for i, r := range all.Routes {
		for _, tg := range r.Tags {
			tags[tg] = true
		}
		if i > 0 && r.Estimate.ExecutionDuration < all.Routes[i-1].Estimate.ExecutionDuration {
			t.Fatal("sortBy=speed not sorted")
		}
	}
	if !tags["BEST_OUTPUT"] || !tags["FASTEST"] || !tags["CHEAPEST"] {
		t.Fatalf("tags %v", tags)
	}
	ts.get(strings.Replace(arbToBase("sortBy", "age"), "/v1/quote", "/v1/routes", 1)).wantError(t, 400, "INVALID_PARAMS", "sortBy")
}

func TestQuoteDeadlineHangAndPanic(t *testing.T) {
	const deadline = 300 * time.Millisecond
	ts := startServer(t, func(c *app.Config) {
		c.AnonHeavyPerMin = 1000
		c.Quote.Deadline = deadline
		c.Quote.SandboxTools = map[string]sandbox.ToolConfig{
			"sbx-arcbridge": {Hang: true},
			"sbx-wormway":   {Panic: true},
		}
	})
	began := time.Now()
	var q shapeA
	ts.get(arbToBase()).decode(t, &q)
	took := time.Since(began)
	if q.Quote.Tool != "sbx-canal" {
		t.Fatalf("answered by %s; only sbx-canal works", q.Quote.Tool)
	}
	if took < deadline-time.Millisecond || took > deadline+3*time.Second {
		t.Fatalf("quote took %v with a %v deadline and a hanging tool", took, deadline)
	}
	// The panicking tool's worker was restarted: it keeps answering (with
	// an error) and the quote keeps being served.
	for i := 0; i < 3; i++ {
		ts.get(arbToBase()).decode(t, &q)
	}
	// Only the hanging tool left: nothing answers in time.
	ts.get(arbToBase("tools", "sbx-arcbridge")).wantError(t, 504, "UPSTREAM_TIMEOUT", "")
	// Only the panicking tool left: every provider failed.
	ts.get(arbToBase("tools", "sbx-wormway")).wantError(t, 502, "UPSTREAM_ERROR", "")
}

func TestPartnerQuoteFeesAndLedger(t *testing.T) {
	ts := startServer(t, nil)
	id, key := ts.createPartner("Feeco", "--swap-fee-bps", "25")
	ts.get(arbToBase(), withKey(key)).wantError(t, 400, "PARTNER_WALLET_NOT_REGISTERED", "")

	// Register the fee wallet directly in the store the server reads: stop,
	// write, restart on the same directory.
	dir := ts.dir
	ts.stop()
	seedStore(t, dir, func(st *pebblestore.Store) {
		if err := st.PutFeeWallet(context.Background(), id, "evm", wallet); err != nil {
			t.Fatal(err)
		}
	})
	ts = startServer(t, func(c *app.Config) { c.DataDir = dir })

	var q shapeA
	env := ts.get(arbToBase(), withKey(key))
	env.decode(t, &q)
	if q.FeeBps != 25 || env.Meta.RateLimit == nil || env.Meta.RateLimit.Limit != 2000 {
		t.Fatalf("partner quote: feeBps %d, rate %+v", q.FeeBps, env.Meta.RateLimit)
	}
	// The operator CLI refuses a fee above the platform maximum; a partner
	// stored above it (a record from before the CLI enforced it) has its
	// fee-bearing quotes refused.
	var stdout, stderr bytes.Buffer
	if code := run([]string{"partner", "set-fees", "--data", dir, "--id", id, "--swap-fee-bps", "600"}, &stdout, &stderr); code != 2 ||
		!strings.Contains(stderr.String(), "platform maximum") {
		t.Fatalf("set-fees 600: exit %d, %s", code, stderr.String())
	}
	ts.stop()
	seedStore(t, dir, func(st *pebblestore.Store) {
		if _, err := st.UpdatePartner(context.Background(), id, func(p *account.Partner) error {
			p.SwapFeeBps = 600
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	})
	ts = startServer(t, func(c *app.Config) { c.DataDir = dir })
	ts.get(arbToBase(), withKey(key)).wantError(t, 400, "PARTNER_FEE_EXCEEDS_MAX", "")
	// The fee-free direct outbound bridge is still served.
	var out struct{ FeeBps int }
	ts.get(quotePath("fromChain", "369", "toChain", "8453", "fromToken", usdch, "toToken", usdcBase,
		"fromAmount", "50000000", "fromAddress", wallet), withKey(key)).decode(t, &out)
	if out.FeeBps != 0 {
		t.Fatalf("outbound bridge fee %d", out.FeeBps)
	}
	// Both quotes are in the partner's transactions, newest first; only
	// the first carried a fee, which the earnings show as pending. The
	// fee-free quote's row is written just after its answer (see package
	// ledger), so the list is read until it shows up.
	var txs struct {
		Transactions []struct{ ID, Kind, FeeUsd string }
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		txs.Transactions = nil
		ts.get("/v1/partner/transactions", withKey(key)).decode(t, &txs)
		if len(txs.Transactions) == 2 || time.Now().After(deadline) {
			break
		}
	}
	if len(txs.Transactions) != 2 || txs.Transactions[1].ID != q.Quote.ID || txs.Transactions[1].Kind != "quote" ||
		txs.Transactions[1].FeeUsd == "0" || txs.Transactions[0].FeeUsd != "0.00" && txs.Transactions[0].FeeUsd != "0" {
		t.Fatalf("transactions %+v", txs)
	}
	var earn struct {
		Pending []struct {
			Ecosystem, TotalUsd string
			RowCount            int
		}
	}
	ts.get("/v1/partner/me/earnings", withKey(key)).decode(t, &earn)
	if len(earn.Pending) != 1 || earn.Pending[0].Ecosystem != "evm" || earn.Pending[0].RowCount != 1 {
		t.Fatalf("earnings %+v", earn)
	}
	ts.stop()

	// The returned quote's earnings row is on disk.
	st, err := pebblestore.Open(dir, pebblestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var rows []*account.Activity
	if err := st.EachActivity(context.Background(), id, time.Time{}, time.Time{}, func(a *account.Activity) bool {
		if a.Earning != nil {
			rows = append(rows, a)
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].ID != q.Quote.ID || rows[0].Earning.Ecosystem != "evm" || rows[0].FeeMicroUSD <= 0 || rows[0].Earning.State != "pending" {
		t.Fatalf("ledger rows %+v for quote %s", rows, q.Quote.ID)
	}
}
