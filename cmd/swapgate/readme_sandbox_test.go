package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/routing/swap"
)

// readmeBlock returns the first sh block after a README heading.
func readmeBlock(t *testing.T, heading string) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("README has no %q", heading)
	}
	s = s[i:]
	start := strings.Index(s, "```sh\n")
	if start < 0 {
		t.Fatalf("no sh block after %q", heading)
	}
	s = s[start+len("```sh\n"):]
	end := strings.Index(s, "\n```")
	if end < 0 {
		t.Fatal("unterminated sh block")
	}
	return s[:end]
}

// TestReadmeSandboxWalkthrough runs the README's sandbox walkthrough, every
// command as written, with bash and curl against a fresh server: the
// broadcast before the approval reverts with the allowance reason, the
// approval and the swap succeed, the receipt and balances read back, and
// the faucet tops the wallet up.
func TestReadmeSandboxWalkthrough(t *testing.T) {
	script := readmeBlock(t, "## Playing the wallet (sandbox mode)")
	if !strings.Contains(script, "127.0.0.1:8080") {
		t.Fatal("the walkthrough does not talk to 127.0.0.1:8080")
	}
	ts := startServer(t, nil) // the defaults of make run: sandbox mode, default limits
	answers := runWalkthrough(t, ts, script, "sed", "tr", "printf")
	if len(answers) != 6 {
		t.Fatalf("%d answers, want 6 (revert, approve, swap, receipt, balances, faucet)", len(answers))
	}
	var revert, approve, swap broadcastAnswer
	answers[0].decode(t, &revert)
	answers[1].decode(t, &approve)
	answers[2].decode(t, &swap)
	if revert.Status != "reverted" || revert.RevertReason != "ERC20: insufficient allowance" || revert.BlockNumber != 1 {
		t.Errorf("first broadcast %+v", revert)
	}
	if approve.Status != "success" || swap.Status != "success" || swap.BlockNumber != 3 {
		t.Errorf("approve %+v, swap %+v", approve, swap)
	}
	var rc receiptAnswer
	answers[3].decode(t, &rc)
	if rc.TxHash != swap.TxHash || rc.Status != "success" || !hasTopic(rc, bridgeSentTopic) {
		t.Errorf("receipt %+v", rc)
	}
	var bal struct {
		Chains []struct {
			ChainID  uint64
			Balances []struct {
				Token  struct{ Symbol string }
				Amount string
			}
		}
	}
	answers[4].decode(t, &bal)
	if len(bal.Chains) != 2 || bal.Chains[0].ChainID != 42161 || bal.Chains[1].ChainID != 8453 ||
		bal.Chains[0].Balances[1].Token.Symbol != "USDC" || bal.Chains[0].Balances[1].Amount != "900000000" {
		t.Errorf("balances %+v", bal)
	}
	var f struct{ Status, Balance string }
	answers[5].decode(t, &f)
	if f.Status != "success" || f.Balance != "5900000000" {
		t.Errorf("faucet %+v", f)
	}
	if got := ts.balance(t, 42161, wallet, usdcArb); got.Cmp(big.NewInt(5_900_000_000)) != 0 {
		t.Errorf("the wallet holds %s USDC base units on Arbitrum, want 5900000000", got)
	}
}

// TestReadmeExecuteWalkthrough runs the sandbox walkthrough and then the
// README's execute walkthrough, as written, in one shell: the swap it
// broadcast is reported and reaches DONE.
func TestReadmeExecuteWalkthrough(t *testing.T) {
	script := readmeBlock(t, "## Playing the wallet (sandbox mode)") + "\n" +
		readmeBlock(t, "## After the quote: execute, status, deposits")
	ts := startServer(t, func(c *app.Config) {
		c.SandboxBridgeScale = 0.01 // the walkthrough as written, a hundredth of the quoted time
		c.SwapSchedule = swap.Schedule{First: 50 * time.Millisecond, Max: 200 * time.Millisecond, Horizon: time.Hour}
	})
	answers := runWalkthrough(t, ts, script, "sed", "tr", "printf", "seq")
	if len(answers) != 9 {
		t.Fatalf("%d answers, want 9 (the sandbox walkthrough's 6, execute, status, balances)", len(answers))
	}
	var st struct{ Status, Substatus, QuoteID string }
	answers[7].decode(t, &st)
	if st.Status != "DONE" || st.Substatus != "COMPLETED" || st.QuoteID == "" {
		t.Fatalf("final status %+v", st)
	}
}

// readmeBlockAfter returns the first sh block after a line of the README
// that starts with marker.
func readmeBlockAfter(t *testing.T, marker string) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "\n"+marker)
	if i < 0 {
		t.Fatalf("README has no %q", marker)
	}
	s = s[i:]
	start := strings.Index(s, "```sh\n")
	end := strings.Index(s[start+len("```sh\n"):], "\n```")
	if start < 0 || end < 0 {
		t.Fatalf("no sh block after %q", marker)
	}
	return s[start+len("```sh\n"):][:end]
}

// TestReadmeMultiStepWalkthrough runs the README's multi-step walkthrough
// as written: the registration is signed by ethers from the npm registry,
// and the deposit reaches COMPLETED.
func TestReadmeMultiStepWalkthrough(t *testing.T) {
	ts := startServer(t, func(c *app.Config) { c.SandboxBridgeScale = 0.01 })
	answers := runWalkthrough(t, ts, readmeBlockAfter(t, "A multi-step deposit, from WETH"), "node", "npm", "tr", "printf", "seq")
	if len(answers) != 3 {
		t.Fatalf("%d answers, want 3 (approve, register, final deposit)", len(answers))
	}
	var reg, final struct{ Status, AmountOut string }
	answers[1].decode(t, &reg)
	answers[2].decode(t, &final)
	if reg.Status != "RECEIVED" || final.Status != "COMPLETED" || final.AmountOut == "" {
		t.Fatalf("registered %+v, final %+v", reg, final)
	}
}

// TestReadmeIntentsWalkthrough runs the README's intents deposit
// walkthrough as written: the deposit is submitted and reaches SUCCESS.
func TestReadmeIntentsWalkthrough(t *testing.T) {
	ts := startServer(t, func(c *app.Config) { c.SandboxBridgeScale = 0.01 })
	answers := runWalkthrough(t, ts, readmeBlockAfter(t, "An intents deposit, 300 USDC"), "sed", "seq")
	if len(answers) != 2 {
		t.Fatalf("%d answers, want 2 (submit, final status)", len(answers))
	}
	var submitted, final struct{ Status string }
	answers[0].decode(t, &submitted)
	answers[1].decode(t, &final)
	if submitted.Status != "KNOWN_DEPOSIT_TX" || final.Status != "SUCCESS" {
		t.Fatalf("submitted %+v, final %+v", submitted, final)
	}
}

// runWalkthrough runs a README script as written, with bash, against ts
// (the README's 127.0.0.1:8080 replaced by its address), and decodes what
// it printed as a stream of envelopes, none of them an error.
func runWalkthrough(t *testing.T, ts *testServer, script string, tools ...string) []envelope {
	t.Helper()
	for _, tool := range append([]string{"bash", "curl"}, tools...) {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: %v", tool, err)
		}
	}
	script = strings.ReplaceAll(script, "127.0.0.1:8080", strings.TrimPrefix(ts.base, "http://"))
	cmd := exec.Command("bash", "-eu", "-o", "pipefail", "-c", script)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("walkthrough: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	var answers []envelope
	dec := json.NewDecoder(&stdout)
	for {
		var e envelope
		if err := dec.Decode(&e); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("output is not a stream of envelopes: %v\n%s", err, stdout.String())
		}
		if e.Error != nil {
			t.Fatalf("the walkthrough got an error: %+v", e.Error)
		}
		answers = append(answers, e)
	}
	return answers
}
