package main

import (
	"encoding/json"
	"math/big"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	lifistandin "github.com/swapgate/swapgate/internal/standin/lifi"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
)

// TestCrashInboundStepTwo SIGKILLs `serve --mode live` (the binary as a
// child, on Pebble) between step 2's transactions and restarts it on the
// same data directory. Its --evm-rpc and --pulse-rpc nodes are a sandbox
// server's in this process, its operator account (the inbound receiver)
// an external signer's. A deposit to PLSX is killed once after each of
// its first three mined transactions (approve, bridge, swap-approve),
// each kill at a seeded random moment up to 300 ms later, so that the next
// intent may be unsent, sent or mined; a deposit for a token without a
// pool is killed after its bridge, before the fallback. After the last
// restart the first is COMPLETED and the second REFUNDED_USDCH, and the
// chains' logs show exactly one of each: two transferRemotes from the
// operator on Arbitrum and two deliveries to it on 369, one PulseX swap
// paying the user and one USDCh transfer from the operator to the user.
func TestCrashInboundStepTwo(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills the service several times")
	}
	rng := crashRNG(t, 0x529)
	sb := startStepTwoSandbox(t, "swapgate/crash-step2")
	_, aggSrv, err := lifistandin.Start(lifistandin.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(aggSrv.Close)
	work := t.TempDir()
	linkSwapgate(t, work)
	dir := filepath.Join(work, "data")
	certFile := filepath.Join(work, "none.pem")
	if err := os.WriteFile(certFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	op := sb.op.Hex()
	args := []string{"--mode", "live", "--aggregator-url", aggSrv.URL,
		"--evm-rpc", "42161=" + sb.rpc("42161"), "--evm-rpc", "369=" + sb.rpc("369"), "--pulse-rpc", "369=" + sb.rpc("369"),
		"--pulse-inbound-receiver", "42161=" + op, "--signer-url", sb.signerURL, "--signer-address", op, "--confirmations", "1"}
	runs := 0
	serve := func() *crashChild {
		c := crashServe(t, work, dir, certFile, "", runs, args...)
		runs++
		return c
	}
	user := newNodeWallet(t, sb.node, 42161, "swapgate/crash-step2-user")
	user369 := newNodeWallet(t, sb.node, 369, "swapgate/crash-step2-user")
	child := serve()
	status := func(h common.Hash) (stepTwoDeposit, bool) {
		c := child.client()
		defer c.close()
		var d stepTwoDeposit
		s, _, err := c.doJSON(http.MethodGet, "/v1/inbound-receiver/deposits/"+h.Hex(), nil, "", &d)
		return d, err == nil && s == http.StatusOK
	}
	register := func(h common.Hash, output common.Address) {
		t.Helper()
		c := child.client()
		defer c.close()
		body, _ := json.Marshal(stepTwoRegistration(t, user, h, output))
		if s, raw, err := c.do(http.MethodPost, "/v1/inbound-receiver/register", body, ""); err != nil || s != http.StatusOK {
			t.Fatalf("register: %d %v %s", s, err, raw)
		}
	}
	// killAfter kills the service once the deposit lists n mined
	// transactions, a seeded moment later, and starts it again.
	killAfter := func(h common.Hash, n int, r *rand.Rand) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			d, ok := status(h)
			if ok && len(d.Transactions) >= n {
				if len(d.Transactions) > n {
					t.Logf("deposit %s: %d transactions mined before the kill meant after %d", h.Hex(), len(d.Transactions), n)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("deposit %s: waited for %d mined transactions: %+v", h.Hex(), n, d)
			}
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(time.Duration(r.IntN(300)) * time.Millisecond)
		child.kill(t)
		child = serve()
	}
	final := func(h common.Hash) stepTwoDeposit {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			d, ok := status(h)
			if ok && (d.Status == "COMPLETED" || d.Status == "REFUNDED_USDCH" || d.Status == "FAILED") {
				return d
			}
			if time.Now().After(deadline) {
				t.Fatalf("deposit %s did not end: %+v", h.Hex(), d)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	amount := big.NewInt(25_000_000)

	plsx := common.HexToAddress(plsx369)
	h1 := sb.step1(t, user, amount)
	register(h1, plsx)
	for n := 1; n <= 3; n++ {
		killAfter(h1, n, rng)
	}
	d1 := final(h1)
	if d1.Status != "COMPLETED" || d1.steps() != "approve bridge swap-approve swap" {
		t.Fatalf("deposit to PLSX: %+v (steps %q)", d1, d1.steps())
	}
	usdchBefore := user369.tokenBalance(common.HexToAddress(usdch), user.addr)
	h2 := sb.step1(t, user, amount)
	register(h2, common.HexToAddress("0x000000000000000000000000000000000000dEaD"))
	killAfter(h2, 1, rng)
	d2 := final(h2)
	if d2.Status != "REFUNDED_USDCH" || d2.steps() != "bridge fallback" {
		t.Fatalf("deposit without a pool: %+v (steps %q)", d2, d2.steps())
	}
	child.stop(t)

	// Exactly once each, by the chains' logs.
	ev := pulseroute.ABI().Events
	opWord, userWord := common.BytesToHash(sb.op.Bytes()), common.BytesToHash(user.addr.Bytes())
	transfer := common.HexToHash("0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef")
	for _, c := range []struct {
		what  string
		w     *nodeWallet
		topic common.Hash
		index int
		word  common.Hash
		want  int
	}{
		{"transferRemote to the operator on Arbitrum", user, ev["SentTransferRemote"].ID, 2, opWord, 2},
		{"deliveries to the operator on 369", user369, ev["ReceivedTransferRemote"].ID, 2, opWord, 2},
		{"PulseX swaps paying the user", user369, ev["Swap"].ID, 2, userWord, 1},
		{"transfers to the user on 369", user369, transfer, 2, userWord, 2}, // the swap's PLSX, the fallback's USDCh
	} {
		if got := countLogs(t, c.w, c.topic, c.index, c.word); got != c.want {
			t.Errorf("%s: %d logs, want %d", c.what, got, c.want)
		}
	}
	if got := new(big.Int).Sub(user369.tokenBalance(common.HexToAddress(usdch), user.addr), usdchBefore); got.Cmp(amount) != 0 {
		t.Errorf("the user received %s USDCh on 369, want the one fallback's %s", got, amount)
	}
	t.Logf("%d runs, %d kills", runs, runs-1)
}
