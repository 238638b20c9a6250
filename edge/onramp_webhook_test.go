package edge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/swapgate/swapgate/routing/domain/onramp"
)

// receiver answers the provider webhook route as the desk would for the
// signature it was sent, and keeps what it was given.
type receiver struct {
	sig  string
	body []byte
}

func (r *receiver) ProviderWebhook(_ context.Context, signature string, body []byte) error {
	r.sig, r.body = signature, append([]byte(nil), body...)
	switch signature {
	case "good":
		return nil
	case "malformed":
		return fmt.Errorf("x: %w", onramp.ErrMalformedWebhook)
	case "store":
		return errors.New("the store is down")
	}
	return fmt.Errorf("x: %w", onramp.ErrBadSignature)
}

// The provider's webhook route: outside /v1, the signature header and raw
// body handed over as they came, 200 when accepted, 400 naming the header
// for a bad signature, 400 INVALID_BODY for an unreadable body, 500 for the
// service's failure (so that the provider retries); and with a live
// provider the sandbox's checkout pages are not served.
func TestProviderWebhookRoute(t *testing.T) {
	reg, cat := testCatalog(t)
	rc := &receiver{}
	s, err := New(DefaultConfig(), Deps{Registry: reg, Tools: cat, RefData: fixedRefData{}, Partners: noPartners{},
		Onramp: newFakeDesk(t, reg, 0), Idempotency: forgetful{},
		ProviderWebhook: &ProviderWebhookRoute{Path: "/onramp/webhooks/moonpay", SignatureHeader: "Moonpay-Signature-V2", Receiver: rc},
		Logger:          slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		sig, code string
		status    int
		param     string
	}{
		{"good", "", 200, ""},
		{"forged", "INVALID_PARAMS", 400, "Moonpay-Signature-V2"},
		{"", "INVALID_PARAMS", 400, "Moonpay-Signature-V2"},
		{"malformed", "INVALID_BODY", 400, ""},
		{"store", "INTERNAL_ERROR", 500, ""},
	}
	for _, tt := range tests {
		var req fasthttp.Request
		req.Header.SetMethod("POST")
		req.SetRequestURI("/onramp/webhooks/moonpay")
		if tt.sig != "" {
			req.Header.Set("Moonpay-Signature-V2", tt.sig)
		}
		req.SetBodyString(`{"type":"transaction_updated"}`)
		ctx := new(fasthttp.RequestCtx)
		ctx.Init(&req, net.TCPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:4000")), nil)
		s.Handler()(ctx)
		var env struct {
			Data  map[string]bool
			Error *struct {
				Code    string
				Details map[string]any
			}
		}
		if err := json.Unmarshal(ctx.Response.Body(), &env); err != nil {
			t.Fatalf("%s: %v %s", tt.sig, err, ctx.Response.Body())
		}
		if ctx.Response.StatusCode() != tt.status || rc.sig != tt.sig || string(rc.body) != `{"type":"transaction_updated"}` {
			t.Fatalf("%s: %d %s (receiver got %q %s)", tt.sig, ctx.Response.StatusCode(), ctx.Response.Body(), rc.sig, rc.body)
		}
		if tt.code == "" {
			if env.Error != nil || !env.Data["received"] {
				t.Fatalf("%s: %s", tt.sig, ctx.Response.Body())
			}
			continue
		}
		if env.Error == nil || env.Error.Code != tt.code || (tt.param != "" && env.Error.Details["param"] != tt.param) {
			t.Fatalf("%s: %s", tt.sig, ctx.Response.Body())
		}
	}
	for _, r := range s.Routes() {
		if r.Path == "/onramp/webhooks/moonpay" && (r.Bucket != "none" || r.PartnerOnly) {
			t.Fatalf("route %+v", r)
		}
		if strings.HasPrefix(r.Path, onramp.CheckoutPath) {
			t.Fatalf("a live provider's server serves the sandbox checkout page %s", r.Path)
		}
	}
	if _, err := New(DefaultConfig(), Deps{Registry: reg, Tools: cat, RefData: fixedRefData{}, Partners: noPartners{},
		ProviderWebhook: &ProviderWebhookRoute{Path: "/v1/onramp/webhooks", SignatureHeader: "X", Receiver: rc}}); err == nil {
		t.Fatal("a provider webhook route under /v1 was accepted")
	}
}
