package sandbox

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/apierr"
)

func TestFailureInjectionIsDeterministic(t *testing.T) {
	f := loadFixture(t)
	m := f.market(t, Config{Tools: map[string]ToolConfig{"sbx-arcbridge": {FailureRate: 0.3}}})
	req := f.req(t, 1, "USDC", 10, "USDC", "100")
	failed := 0
	for i := 0; i < 400; i++ {
		req.ID = fmt.Sprintf("q-%d", i)
		_, err1 := m.Aggregator().QuoteLeg(context.Background(), req, "sbx-arcbridge")
		_, err2 := m.Aggregator().QuoteLeg(context.Background(), req, "sbx-arcbridge")
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("%s: answers differ: %v / %v", req.ID, err1, err2)
		}
		if err1 != nil {
			var ae *apierr.Error
			if !errors.As(err1, &ae) || ae.Code != apierr.UpstreamError || ae.Details["tool"] != "sbx-arcbridge" {
				t.Fatalf("error %v is not UPSTREAM_ERROR naming the tool", err1)
			}
			failed++
		}
		if _, err := m.Aggregator().QuoteLeg(context.Background(), req, "sbx-canal"); err != nil {
			t.Fatalf("unconfigured tool failed: %v", err)
		}
	}
	if failed < 80 || failed > 160 {
		t.Errorf("%d of 400 failed at rate 0.3", failed)
	}
}

func TestFails(t *testing.T) {
	for _, c := range []struct {
		rate float64
		want bool
	}{{0, false}, {1, true}, {-1, false}, {2, true}} {
		if got := Fails("q", "t", c.rate); got != c.want {
			t.Errorf("Fails(rate %v) = %v", c.rate, got)
		}
	}
}

func TestHangAndLatencyRespectContext(t *testing.T) {
	f := loadFixture(t)
	m := f.market(t, Config{Tools: map[string]ToolConfig{
		"sbx-arcbridge": {Hang: true},
		"sbx-canal":     {LatencyMs: 60_000},
		"sbx-wormway":   {LatencyMs: 20},
	}})
	req := f.req(t, 1, "USDC", 10, "USDC", "100")
	for _, tool := range []string{"sbx-arcbridge", "sbx-canal"} {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		start := time.Now()
		_, err := m.Aggregator().QuoteLeg(ctx, req, tool)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: err %v, want deadline exceeded", tool, err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: returned after %v", tool, d)
		}
	}
	start := time.Now()
	if _, err := m.Aggregator().QuoteLeg(context.Background(), req, "sbx-wormway"); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 20*time.Millisecond {
		t.Errorf("latency not applied: %v", d)
	}
}

func TestPanicInjection(t *testing.T) {
	f := loadFixture(t)
	m := f.market(t, Config{Tools: map[string]ToolConfig{"sbx-intents": {Panic: true}}})
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	_, _ = m.Intents().QuoteLeg(context.Background(), f.req(t, 1, "USDC", 900000001, "USDC", "100"), "sbx-intents")
}

func TestConfigValidation(t *testing.T) {
	f := loadFixture(t)
	for _, cfg := range []Config{
		{Tools: map[string]ToolConfig{"no-such-tool": {}}},
		{Tools: map[string]ToolConfig{"sbx-canal": {FailureRate: 1.5}}},
		{Tools: map[string]ToolConfig{"sbx-canal": {LatencyMs: -1}}},
	} {
		if _, err := New(f.reg, f.cat, fixedPrices(f.reg), fixedGas, cfg); err == nil {
			t.Errorf("config %+v accepted", cfg)
		}
	}
}
