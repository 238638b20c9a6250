package lifi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// nativeToEth is a request for the source chain's native coin to ETH on
// Ethereum, from a wallet of the source chain.
func nativeToEth(t *testing.T, reg *registry.Registry, from uint64, fromAddress string, amount int64) *quote.Request {
	t.Helper()
	src, ok := reg.Chain(from)
	if !ok {
		t.Fatalf("no chain %d", from)
	}
	eth, _ := reg.Chain(1)
	in, ok := reg.Token(from, src.NativeToken.Address)
	if !ok {
		t.Fatalf("no native token on %d", from)
	}
	out, _ := reg.Token(1, registry.NativeAddressEVM)
	return &quote.Request{ID: "q1", From: src, To: eth, FromToken: in, ToToken: out, FromAmount: big.NewInt(amount),
		FromAddress: fromAddress, ToAddress: "0x552008c0f6870c2f77e5cC1d2eb9bdff03e30Ea0", Slippage: 0.005, Now: time.Now()}
}

// recordedData is the transactionRequest.data of a recorded answer.
func recordedData(t *testing.T, fixture string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", fixture))
	if err != nil {
		t.Fatal(err)
	}
	var step struct {
		TransactionRequest struct {
			Data string `json:"data"`
		} `json:"transactionRequest"`
	}
	if err := json.Unmarshal(raw, &step); err != nil {
		t.Fatal(err)
	}
	return step.TransactionRequest.Data
}

// TestQuoteLegSerializedSourceTx: LI.FI's answers for a Solana and a Sui
// source carry their transaction as {data}, base64, with no to; the route
// keeps it as the serialized transaction of the source chain, with no
// approval (those chains have no ERC-20 allowances). Before, the adapter
// refused both as "transactionRequest.to: missing".
func TestQuoteLegSerializedSourceTx(t *testing.T) {
	for _, tc := range []struct {
		fixture, from string
		chain         uint64
		amount        int64
		toAmount      string
	}{
		{"quote_sol_eth.json", "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM", 1151111081099710, 1_000_000_000, "53127000000000000"},
		{"quote_sui_eth.json", "0x7d20dcdb2bca4f508ea9613994683eb4e76e9c4ed371169677c1be02aaf0b58e", 9270000000000000, 50_000_000_000, "51920000000000000"},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			srv, rec := replay(t, http.StatusOK, tc.fixture, nil)
			c, reg := newClient(t, srv.URL, 5*time.Second)
			r, err := c.QuoteLeg(context.Background(), nativeToEth(t, reg, tc.chain, tc.from, tc.amount), "")
			if err != nil {
				t.Fatal(err)
			}
			if _, q, _ := rec.get(); q.Get("fromAddress") != tc.from {
				t.Errorf("asked for fromAddress %q", q.Get("fromAddress"))
			}
			if r.ToAmount.String() != tc.toAmount || r.Tool != "mayan" {
				t.Errorf("route %s via %s", r.ToAmount, r.Tool)
			}
			if r.ApprovalAddress != "" {
				t.Errorf("approval address %q for a non-EVM source", r.ApprovalAddress)
			}
			tx := r.Tx
			if tx == nil || tx.Encoding != quote.EncodingBase64 || tx.ChainID != tc.chain || tx.To != "" || tx.Value != nil || tx.GasLimit != 0 {
				t.Fatalf("tx %+v", tx)
			}
			if got, want := base64.StdEncoding.EncodeToString(tx.Data), recordedData(t, tc.fixture); got != want {
				t.Fatalf("data re-encodes as %q, upstream sent %q", got, want)
			}
		})
	}
}

// serveFixture serves a recorded answer with one change made to it, and
// counts the requests.
func serveFixture(t *testing.T, fixture string, change func(step map[string]any)) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", fixture))
	if err != nil {
		t.Fatal(err)
	}
	var step map[string]any
	if err := json.Unmarshal(raw, &step); err != nil {
		t.Fatal(err)
	}
	change(step)
	body, err := json.Marshal(step)
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// TestQuoteLegRefusesBadSerializedTx: a Solana source's data that is not a
// base64 transaction is refused at the boundary as UPSTREAM_ERROR naming
// transactionRequest.data; an EVM call for it (a to) cannot be signed by a
// Solana wallet, and the route is left out with that reason
// (TRANSACTION_UNREPRESENTABLE, shown as dropped in data.timing) rather
// than failing the leg.
func TestQuoteLegRefusesBadSerializedTx(t *testing.T) {
	setTx := func(key string, v any) func(map[string]any) {
		return func(step map[string]any) { step["transactionRequest"].(map[string]any)[key] = v }
	}
	for _, tc := range []struct {
		name   string
		change func(map[string]any)
	}{
		{"data empty", setTx("data", "")},
		{"data absent", func(step map[string]any) { delete(step["transactionRequest"].(map[string]any), "data") }},
		{"data not base64", setTx("data", "not base64!")},
		{"data hex", setTx("data", "0xdeadbeef")},
		{"data whole without padding", setTx("data", "AQID")}, // valid: three bytes
		{"data missing its padding", setTx("data", "AQI")},
		{"data cut short", setTx("data", "AQIDBA=")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := serveFixture(t, "quote_sol_eth.json", tc.change)
			c, reg := newClient(t, srv.URL, 5*time.Second)
			r, err := c.QuoteLeg(context.Background(), nativeToEth(t, reg, 1151111081099710, "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM", 1_000_000_000), "")
			if tc.name == "data whole without padding" {
				// "AQID" is whole base64 (three bytes, no padding needed).
				if err != nil || r.Tx == nil || len(r.Tx.Data) != 3 {
					t.Fatalf("route %+v, %v", r, err)
				}
				return
			}
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.Code != apierr.UpstreamError {
				t.Fatalf("err = %v, want UPSTREAM_ERROR", err)
			}
			if want := "the aggregator upstream sent an invalid answer: transactionRequest.data"; !strings.HasPrefix(ae.Message, want) {
				t.Fatalf("message %q, want it to start %q", ae.Message, want)
			}
		})
	}
	t.Run("an EVM call for a Solana source", func(t *testing.T) {
		srv, _ := serveFixture(t, "quote_sol_eth.json", func(step map[string]any) {
			step["transactionRequest"] = map[string]any{"to": "0x1231DEB6f5749EF6cE6943a275A1D3E7486F4EaE", "data": "0xdeadbeef", "value": "0x0"}
		})
		c, reg := newClient(t, srv.URL, 5*time.Second)
		_, err := c.QuoteLeg(context.Background(), nativeToEth(t, reg, 1151111081099710, "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM", 1_000_000_000), "")
		var nr *quote.NoRoute
		if !errors.As(err, &nr) || nr.Reason != quote.ReasonTxUnrepresentable || !strings.Contains(nr.Message, "Solana wallet cannot sign") {
			t.Fatalf("err = %v, want a NoRoute %s", err, quote.ReasonTxUnrepresentable)
		}
		o := quote.LegOutcome{Provider: Name, Answered: true, Err: err}
		tm := quote.NewTiming([]quote.LegOutcome{o}, quote.RaceEnd{Total: time.Millisecond, Reason: quote.StopExpectedResults}, nil)
		if l := tm.Legs[0]; l.Status != quote.LegDropped || l.Reason != nr.Message {
			t.Fatalf("timing leg %+v", l)
		}
	})
}

// TestQuoteLegUnrepresentableSource: a source whose transactions the
// contract has no shape for (Bitcoin) is not asked about; the leg answers
// at once that the route is left out, with the reason.
func TestQuoteLegUnrepresentableSource(t *testing.T) {
	srv, n := serveFixture(t, "quote_sol_eth.json", func(map[string]any) {})
	c, reg := newClient(t, srv.URL, 5*time.Second)
	req := nativeToEth(t, reg, 20000000000001, "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", 100_000)
	_, err := c.QuoteLeg(context.Background(), req, "")
	var nr *quote.NoRoute
	if !errors.As(err, &nr) || nr.Reason != quote.ReasonTxUnrepresentable || !strings.Contains(nr.Message, "Bitcoin") {
		t.Fatalf("err = %v", err)
	}
	if n.Load() != 0 {
		t.Fatalf("the upstream was asked %d times", n.Load())
	}
}
