package main

import (
	"encoding/base64"
	"encoding/json"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
)

// TestLiveQuoteFromSolanaE2E runs the real server in live mode against
// the upstream stand-ins and quotes SOL on Solana to ETH on Ethereum
// through the aggregator: the quote's transactionRequest is the
// upstream's serialized Solana transaction, {chainId, encoding: "base64",
// data}, with nothing of an EVM call and no approval address. Data that
// is not base64 fails the leg as UPSTREAM_ERROR naming
// transactionRequest.data; an EVM call for the Solana source is a route
// left out, dropped in data.timing with its reason, while 1Click's quote
// is answered. Before, every such leg failed at the adapter
// ("transactionRequest.to: ... is not a valid solana address").
func TestLiveQuoteFromSolanaE2E(t *testing.T) {
	up := startLiveStandins(t)
	rc := newSignedReceiver(t)
	ts := onrampServer(t, rc, func(c *app.Config) {
		up.configure(c)
		// Rows fail the aggregator's leg on purpose: its breaker must not
		// open for the next ones.
		c.Quote.BreakerWindow, c.Quote.BreakerMinCalls = 1000, 1000
	})
	const sol = "11111111111111111111111111111111"
	// /v1/routes: every provider's route, the aggregator's among them
	// (1Click's intents route answers the same pair, and mostly wins the
	// quote).
	routes := "/v1/routes?" + strings.TrimPrefix(quotePath("fromChain", "1151111081099710", "toChain", "1", "fromToken", sol,
		"toToken", zeroAddress, "fromAmount", "2000000000", "fromAddress", solAddress, "toAddress", wallet), "/v1/quote?")
	type leg struct{ Provider, Outcome, Code, Reason string }
	type answer struct {
		Routes []struct {
			Provider string
			Tool     string
			Estimate struct {
				ApprovalAddress *string
			}
			TransactionRequest map[string]json.RawMessage
		}
		Timing struct{ Legs []leg }
	}
	aggLeg := func(t *testing.T, a *answer) leg {
		t.Helper()
		for _, l := range a.Timing.Legs {
			if l.Provider == "aggregator" {
				return l
			}
		}
		t.Fatalf("no aggregator leg in %+v", a.Timing)
		return leg{}
	}

	var a answer
	e := ts.get(routes)
	e.decode(t, &a)
	n := 0
	for _, rt := range a.Routes {
		if rt.Tool != "across" {
			continue
		}
		n++
		tx := rt.TransactionRequest
		if len(tx) != 3 || rt.Estimate.ApprovalAddress != nil {
			t.Fatalf("aggregator route: %s", e.Raw)
		}
		var data, encoding string
		if string(tx["chainId"]) != "1151111081099710" || json.Unmarshal(tx["encoding"], &encoding) != nil || encoding != "base64" ||
			json.Unmarshal(tx["data"], &data) != nil {
			t.Fatalf("transactionRequest: %s", e.Raw)
		}
		if b, err := base64.StdEncoding.Strict().DecodeString(data); err != nil || !strings.HasSuffix(string(b), solAddress) {
			t.Fatalf("data %q is not the stand-in's serialized transaction (%v)", data, err)
		}
	}
	if n != 1 {
		t.Fatalf("%d aggregator routes: %s", n, e.Raw)
	}
	if l := aggLeg(t, &a); l.Outcome != "answered" && l.Outcome != "won" {
		t.Fatalf("aggregator leg %+v", l)
	}

	t.Run("the aggregator's quote, executed", func(t *testing.T) {
		// The stand-in's route made the better one, so that the quote is
		// the aggregator's: execute hands back its serialized transaction
		// as the quote showed it.
		up.agg.SetTamper(func(step map[string]any) {
			est := step["estimate"].(map[string]any)
			for _, k := range []string{"toAmount", "toAmountMin"} {
				v, _ := new(big.Int).SetString(est[k].(string), 10)
				est[k] = v.Mul(v, big.NewInt(2)).String()
			}
			usd, _ := strconv.ParseFloat(est["toAmountUSD"].(string), 64)
			est["toAmountUSD"] = strconv.FormatFloat(2*usd, 'f', 2, 64)
		})
		t.Cleanup(func() { up.agg.SetTamper(nil) })
		var q struct {
			Provider string
			Quote    struct {
				ID                 string
				TransactionRequest map[string]any
			}
		}
		qe := ts.get(strings.Replace(routes, "/v1/routes?", "/v1/quote?", 1))
		qe.decode(t, &q)
		if q.Provider != "aggregator" || q.Quote.TransactionRequest["encoding"] != "base64" {
			t.Fatalf("quote: %s", qe.Raw)
		}
		var ex struct {
			Kind                string
			TransactionRequests []map[string]any
		}
		ts.post("/v1/execute", map[string]string{"quoteId": q.Quote.ID}).decode(t, &ex)
		if ex.Kind != "transaction" || len(ex.TransactionRequests) != 1 || !reflect.DeepEqual(ex.TransactionRequests[0], q.Quote.TransactionRequest) {
			t.Fatalf("execute %+v, quote's transaction %v", ex, q.Quote.TransactionRequest)
		}
	})

	for _, tc := range []struct {
		name                  string
		tx                    map[string]any
		outcome, code, reason string
	}{
		{"data that is not base64", map[string]any{"data": "not base64!"}, "failed", "UPSTREAM_ERROR",
			"the aggregator upstream sent an invalid answer: transactionRequest.data"},
		{"an EVM call for the Solana source", map[string]any{"to": "0x1231DEB6f5749EF6cE6943a275A1D3E7486F4EaE", "data": "0xdeadbeef", "value": "0x0"},
			"dropped", "", "the aggregator's transaction for a Solana source is an EVM call"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up.agg.SetTamper(func(step map[string]any) { step["transactionRequest"] = tc.tx })
			t.Cleanup(func() { up.agg.SetTamper(nil) })
			var a answer
			e := ts.get(routes)
			e.decode(t, &a)
			for _, rt := range a.Routes {
				if rt.Provider == "aggregator" {
					t.Fatalf("the aggregator's route answered: %s", e.Raw)
				}
			}
			if l := aggLeg(t, &a); l.Outcome != tc.outcome || l.Code != tc.code || !strings.HasPrefix(l.Reason, tc.reason) {
				t.Fatalf("aggregator leg %+v, want %s %s %q", l, tc.outcome, tc.code, tc.reason)
			}
		})
	}
}
