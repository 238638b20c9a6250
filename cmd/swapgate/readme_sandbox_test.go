package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/internal/testdeps"
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

// TestReadmePartnerSwapWalkthrough runs the README's partner and webhook
// walkthrough and then its swap walkthrough the way a person does: the
// local receiver and the service are started from the README's own command
// lines, in terminals of their own (bin/swapgate is this test binary, and
// the service trusts the receiver's certificate through SSL_CERT_FILE, as
// written), and the third terminal's scripts run as written with bash and
// curl. The partner's webhook and test event are accepted, the swap quoted
// with the partner's key reaches DONE, and the receiver prints its
// swap.completed with a valid signature.
func TestReadmePartnerSwapWalkthrough(t *testing.T) {
	tools := []string{"sed", "tr", "printf", "seq"}
	needTools(t, tools...)
	dir, rcv, receiverAddr, ts := startReadmeTerminals(t)

	// The third terminal: the partner with its webhook, then the swap.
	script := readmeBlockAfter(t, "In a third, a partner") + "\n" + readmeBlock(t, "## After the quote: execute, status, deposits")
	if !strings.Contains(script, "127.0.0.1:9443") {
		t.Fatal("the walkthrough registers no webhook at the receiver's 127.0.0.1:9443")
	}
	script = strings.ReplaceAll(script, "127.0.0.1:9443", receiverAddr)
	answers := runWalkthroughIn(t, ts, dir, script, tools...)
	if len(answers) != 9 {
		t.Fatalf("%d answers, want 9 (fee wallet, webhook, test event, deliveries, approve, swap, execute, status, balances)", len(answers))
	}
	var hook struct{ ID, URL string }
	answers[1].decode(t, &hook)
	if !strings.HasPrefix(hook.ID, "wh_") || hook.URL != "https://"+receiverAddr+"/hook" {
		t.Fatalf("webhook %+v", hook)
	}
	var approve, sent broadcastAnswer
	answers[4].decode(t, &approve)
	answers[5].decode(t, &sent)
	if approve.Status != "success" || sent.Status != "success" {
		t.Fatalf("approve %+v, swap %+v", approve, sent)
	}
	var st statusBody
	answers[7].decode(t, &st)
	if st.Status != "DONE" || st.Substatus != "COMPLETED" || st.QuoteID == "" || st.Sending.TxHash != sent.TxHash || st.Receiving.ChainID != 8453 {
		t.Fatalf("final status %+v", st)
	}

	// The first terminal shows the test event and then the swap's
	// swap.completed, each with a valid signature.
	type printed struct {
		Event          string
		SignatureValid bool
		Body           struct {
			Event string
			Data  struct {
				TransactionID, Status, SourceTxHash string
				Test                                bool
			}
		}
	}
	var lines []printed
	rcv.waitFor(t, "the receiver prints the swap's swap.completed", func(stdout, _ string) string {
		lines = lines[:0]
		done := ""
		for _, raw := range strings.Split(strings.TrimSpace(stdout), "\n") {
			var p printed
			if json.Unmarshal([]byte(raw), &p) != nil {
				continue
			}
			lines = append(lines, p)
			if p.Event == "swap.completed" && p.Body.Data.TransactionID == st.QuoteID {
				done = "yes"
			}
		}
		return done
	})
	if len(lines) != 2 {
		t.Fatalf("the receiver printed %d deliveries, want the test event and the swap's: %+v", len(lines), lines)
	}
	test, swapped := lines[0], lines[1]
	if test.Event != "swap.completed" || !test.SignatureValid || !test.Body.Data.Test {
		t.Fatalf("test delivery %+v", test)
	}
	if !swapped.SignatureValid || swapped.Body.Event != "swap.completed" || swapped.Body.Data.Test ||
		swapped.Body.Data.Status != "DONE" || swapped.Body.Data.SourceTxHash != sent.TxHash {
		t.Fatalf("the swap's delivery %+v", swapped)
	}
}

// startReadmeTerminals starts the first two terminals of the README's
// partner walkthrough from its own command lines: the local webhook
// receiver and the service trusting it. It returns the person's working
// directory (bin/swapgate, ./data, ./receiver.pem), the receiver with its
// address, and the service.
func startReadmeTerminals(t *testing.T) (dir string, rcv *backgroundCommand, receiverAddr string, ts *testServer) {
	t.Helper()
	dir = t.TempDir() // the person's working directory: bin/swapgate, ./data, ./receiver.pem
	linkSwapgate(t, dir)

	// The first terminal: the receiver, on a free port instead of 9443.
	receiverLine := readmeBlock(t, "## Partner accounts and webhooks, step by step")
	if !strings.HasPrefix(receiverLine, "bin/swapgate webhook-receiver ") || !strings.Contains(receiverLine, "--addr 127.0.0.1:9443 ") {
		t.Fatalf("the README's receiver command is not bin/swapgate webhook-receiver --addr 127.0.0.1:9443 …: %q", receiverLine)
	}
	rcv = startCommand(t, dir, nil, strings.Replace(receiverLine, "127.0.0.1:9443", "127.0.0.1:0", 1))
	receiverAddr = rcv.waitFor(t, "the receiver listens", func(_, stderr string) string {
		if m := regexp.MustCompile(`listening on https://([^/]+)/`).FindStringSubmatch(stderr); m != nil {
			return m[1]
		}
		return ""
	})

	// The second terminal: the service, on a free port instead of 8080, its
	// bridges delivering at the tracker's first poll so that the
	// walkthrough's wait is short (the environment, as SWAPGATE_<FLAG>,
	// leaves the README's command line as it is).
	serveLine := readmeBlockAfter(t, "In another, the service")
	if !strings.HasPrefix(serveLine, "SSL_CERT_FILE=") || !strings.Contains(serveLine, " bin/swapgate serve ") ||
		!strings.Contains(serveLine, "--allow-loopback-webhooks") {
		t.Fatalf("the README's serve command does not trust the receiver and allow loopback webhooks: %q", serveLine)
	}
	srv := startCommand(t, dir, []string{"SWAPGATE_ADDR=127.0.0.1:0", "SWAPGATE_SANDBOX_BRIDGE_SCALE=0"}, serveLine)
	serveAddr := srv.waitFor(t, "the service serves", func(_, stderr string) string { return loggedAddr(stderr, "swapgate serving") })
	ts = &testServer{t: t, base: "http://" + serveAddr, dir: filepath.Join(dir, "data")}

	return dir, rcv, receiverAddr, ts
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

// needTools ends the test when a tool a README script runs is missing
// (bash and curl always, and tools): a skip on a developer's machine, a
// failure under CI=true, where scripts/test-deps has installed them.
func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range append([]string{"bash", "curl"}, tools...) {
		testdeps.LookPath(t, tool)
	}
}

// runWalkthrough runs a README script as written, with bash, against ts
// (the README's 127.0.0.1:8080 replaced by its address), and decodes what
// it printed as a stream of envelopes, none of them an error.
func runWalkthrough(t *testing.T, ts *testServer, script string, tools ...string) []envelope {
	t.Helper()
	return runWalkthroughIn(t, ts, "", script, tools...)
}

// runWalkthroughIn is runWalkthrough in the working directory dir (the
// test's own when empty), where the script finds what it names by a
// relative path, as a person's shell would.
func runWalkthroughIn(t *testing.T, ts *testServer, dir, script string, tools ...string) []envelope {
	t.Helper()
	needTools(t, tools...)
	script = strings.ReplaceAll(script, "127.0.0.1:8080", strings.TrimPrefix(ts.base, "http://"))
	cmd := exec.Command("bash", "-eu", "-o", "pipefail", "-c", script)
	cmd.Dir = dir
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

// backgroundCommand is a README command line that runs in a terminal of
// its own while the walkthrough goes on (the receiver, the service): bash
// runs it in dir, in a process group of its own so that stopping it stops
// what it started, with its output kept for the test to read.
type backgroundCommand struct {
	line           string
	stdout, stderr syncBuffer
	exited         chan struct{}
	err            error // set before exited closes
}

// startCommand starts line in dir with the test's environment, less any
// SWAPGATE_ setting and SSL_CERT_FILE (so that only what the test or the
// line says applies), plus env; the command gets SIGTERM, as Ctrl-C in its
// terminal would stop it, when the test ends.
func startCommand(t *testing.T, dir string, env []string, line string) *backgroundCommand {
	t.Helper()
	c := &backgroundCommand{line: line, exited: make(chan struct{})}
	cmd := exec.Command("bash", "-c", line)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SWAPGATE_") && !strings.HasPrefix(kv, "SSL_CERT_FILE=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = &c.stdout, &c.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %q: %v", line, err)
	}
	go func() {
		c.err = cmd.Wait()
		close(c.exited)
	}()
	t.Cleanup(func() {
		pgid := cmd.Process.Pid // the group's id is its leader's
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-c.exited:
		case <-time.After(20 * time.Second):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-c.exited
			t.Errorf("%q did not stop on SIGTERM within 20 s\nstderr: %s", line, c.stderr.String())
		}
	})
	return c
}

// waitFor waits until found, given what the command printed so far, returns
// something other than "", and returns that; the command exiting first, or
// 30 seconds passing, fails the test with its output.
func (c *backgroundCommand) waitFor(t *testing.T, what string, found func(stdout, stderr string) string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if v := found(c.stdout.String(), c.stderr.String()); v != "" {
			return v
		}
		select {
		case <-c.exited:
			t.Fatalf("waiting until %s: %q exited: %v\nstdout: %s\nstderr: %s", what, c.line, c.err, c.stdout.String(), c.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s\n%q printed\nstdout: %s\nstderr: %s", what, c.line, c.stdout.String(), c.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
