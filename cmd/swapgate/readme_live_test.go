package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestReadmeLiveWalkthrough runs the README's offline live-mode
// walkthrough the way a person does: the stand-ins and the live service
// (its operator account made first and named as the inbound receiver)
// from the README's own command lines (each on a free port: the service's
// through SWAPGATE_ADDR, the stand-ins' replaced in both lines), then the
// third terminal's curls as written. The tools are the upstreams' own, the
// price is the stand-ins', and the quotes carry LI.FI's diamond and the
// configured sender contract.
func TestReadmeLiveWalkthrough(t *testing.T) {
	needTools(t)
	dir := t.TempDir()
	linkSwapgate(t, dir)

	standinsLine := readmeBlockAfter(t, "`swapgate standins` serves local stand-ins")
	if !strings.HasPrefix(standinsLine, "bin/swapgate standins ") || !strings.Contains(standinsLine, "127.0.0.1:8090") {
		t.Fatalf("the README's stand-ins command is not bin/swapgate standins --addr 127.0.0.1:8090: %q", standinsLine)
	}
	up := startCommand(t, dir, nil, strings.Replace(standinsLine, "127.0.0.1:8090", "127.0.0.1:0", 1))
	upAddr := up.waitFor(t, "the stand-ins serve", func(stdout, stderr string) string { return loggedAddr(stdout+stderr, "standins serving") })

	// The operator account made first, then the service whose inbound
	// receiver it is (a start refused otherwise).
	serveLine := readmeBlockAfter(t, "In another, Swapgate in live mode against them")
	if !strings.HasPrefix(serveLine, "bin/swapgate operator-key create --data ./data-live\nbin/swapgate serve --mode live ") ||
		!strings.Contains(serveLine, "--pulse-inbound-receiver 42161=$(bin/swapgate operator-key show --data ./data-live") {
		t.Fatalf("the README's live serve commands: %q", serveLine)
	}
	srv := startCommand(t, dir, []string{"SWAPGATE_ADDR=127.0.0.1:0"}, strings.ReplaceAll(serveLine, "127.0.0.1:8090", upAddr))
	serveAddr := srv.waitFor(t, "the service serves", func(_, stderr string) string { return loggedAddr(stderr, "swapgate serving") })
	ts := &testServer{t: t, base: "http://" + serveAddr, dir: dir}

	answers := runWalkthroughIn(t, ts, dir, readmeBlockAfter(t, "In a third, the upstreams' tools"))
	if len(answers) != 4 {
		t.Fatalf("%d answers, want 4 (tools, tokens, two quotes)", len(answers))
	}
	var tl struct{ Tools []struct{ Key string } }
	answers[0].decode(t, &tl)
	var keys []string
	for _, tool := range tl.Tools {
		keys = append(keys, tool.Key)
	}
	if got := strings.Join(keys, ","); got != "across,stargateV2,1inch,sushiswap,near-intents,hyperlane-warp,pulsex" {
		t.Fatalf("live tools %s", got)
	}
	var tok struct {
		Tokens map[string][]struct{ Symbol, PriceUSD string }
	}
	answers[1].decode(t, &tok)
	if usdc := tok.Tokens["42161"]; len(usdc) == 0 || usdc[0].Symbol != "USDC" || usdc[0].PriceUSD != "1.01" {
		t.Fatalf("USDC on Arbitrum: %+v", tok.Tokens)
	}
	var a shapeA
	answers[2].decode(t, &a)
	if a.Provider != "aggregator" || a.Quote.TransactionRequest == nil || !strings.EqualFold(a.Quote.TransactionRequest.To, "0x1231DEB6f5749EF6cE6943a275A1D3E7486F4EaE") {
		t.Fatalf("aggregator quote %+v", a)
	}
	var b struct {
		Quote struct {
			Tool, SenderContract string
			TransactionRequest   struct{ To, Value string }
		}
		Provider string
	}
	answers[3].decode(t, &b)
	if b.Provider != "pulseroute" || b.Quote.Tool != "hyperlane-warp" || !strings.EqualFold(b.Quote.TransactionRequest.To, "0x5ce0c2f6b6b33f36b17e4fd3dda2b1c16f0e3a01") ||
		b.Quote.TransactionRequest.Value == "" || b.Quote.TransactionRequest.Value == "0x0" {
		t.Fatalf("pulseroute quote %+v", b)
	}
	for _, e := range answers {
		if strings.Contains(string(e.Raw), "sbx-") {
			t.Fatalf("a sandbox tool in a live answer: %s", e.Raw)
		}
	}
}

// loggedAddr finds the addr of the JSON log line whose msg is msg.
func loggedAddr(log, msg string) string {
	for _, line := range strings.Split(log, "\n") {
		var l struct{ Msg, Addr string }
		if json.Unmarshal([]byte(line), &l) == nil && l.Msg == msg {
			return l.Addr
		}
	}
	return ""
}
