package main

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/edge/admin"
	"github.com/swapgate/swapgate/internal/standin/signer"
	"github.com/swapgate/swapgate/routing/domain/account"
)

// The steps of an intent's life a kill of TestCrashTxIntentSteps must
// land in, as txStepOf names what `swapgate tx list` shows of an intent.
const (
	stepQueued   = "queued"
	stepSigned   = "signed-not-sent"
	stepSent     = "sent"
	stepReplaced = "replaced"
	stepMined    = "mined-not-confirmed"
)

// txStepOf is the step an intent stands at: a sent intent with more than
// one transaction was replaced.
func txStepOf(in admin.IntentView) string {
	switch in.State {
	case "queued":
		return stepQueued
	case "signed":
		return stepSigned
	case "sent":
		if len(in.Txs) > 1 {
			return stepReplaced
		}
		return stepSent
	case "mined":
		return stepMined
	}
	return in.State
}

// TestCrashTxIntentSteps SIGKILLs the service (the binary as a child, in
// sandbox mode on Pebble) once at each step of a transaction intent's
// life and restarts it on the same data directory. The intents are
// settlement payouts (fee quotes of two partners paid on two chains, then
// settle through the admin listener), signed by a stand-in external
// signer in the test process. Each round holds the intents of one chain
// at a step long enough for a kill at a seeded random moment inside it:
//
//   - queued: the signer refuses, so that nothing can be signed;
//   - signed, not sent: the chain's base fee is raised (and a block mined
//     under it) so far that the operator cannot pay gas limit × max fee:
//     the node refuses the broadcast ("insufficient funds") and the
//     intent stays signed, until the faucet tops the operator up after
//     the restart;
//   - sent: the base fee is raised above the first transactions' max fee,
//     which is also the run's --tx-fee-cap, so that no replacement fits;
//   - replaced: restarted with a higher cap still under the base fee, the
//     manager replaces the waiting transactions, which wait again; the
//     next start has no cap, and the replacements it makes are mined;
//   - mined, not confirmed: --confirmations 3, and the sandbox mines a
//     block only per transaction, so the last intents wait for blocks.
//
// After every kill `swapgate tx list` on the stopped store says which
// steps the intents stood at; every step must have been hit. After the
// last restart the chains mine a few blocks (faucet top-ups), and then
// every intent is confirmed with exactly one mined transaction (its
// other hashes have no receipt on the chain, and the operator's nonce on
// each chain counts exactly the intents there: no intent was signed
// afresh with another nonce), every earning is settled by a mined
// intent's transaction, and each fee wallet received exactly the sum of
// its settled fees.
func TestCrashTxIntentSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills the service several times")
	}
	rng := crashRNG(t, 0x7c5)
	started := time.Now()

	work := t.TempDir()
	linkSwapgate(t, work)
	dir := filepath.Join(work, "data")
	certFile := filepath.Join(work, "none.pem")
	if err := os.WriteFile(certFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	lim := []string{"--heavy", "100000000", "--read", "100000000", "--swap-fee-bps", "30"}
	partners := []crashPartnerKey{crashPartner(t, dir, "StepA", lim...), crashPartner(t, dir, "StepB", lim...)}
	// x is the chain whose fees the rounds move; y pays along unhindered.
	x, y := crashChain{42161, crashUSDCArb}, crashChain{8453, crashUSDCBase}
	chains := []crashChain{x, y}
	// The operator signs through a stand-in external signer in this
	// process, which outlives every run and can refuse to sign.
	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	signerSrv, signerHTTP := signer.Start(key, signer.Web3Signer)
	defer signerHTTP.Close()
	operator := signerSrv.Address().Hex()
	common := []string{"--confirmations", "3", "--tx-bump-after", "1s", "--signer-url", signerHTTP.URL, "--signer-address", operator}
	runs := 0
	serve := func(extra ...string) *crashChild {
		c := crashServe(t, work, dir, certFile, "", runs, append(slices.Clone(common), extra...)...)
		runs++
		return c
	}
	child := serve()
	c := child.client()
	wallets := map[string]string{}
	for i, p := range partners {
		wallets[p.id] = crashEVMAddress(fmt.Sprintf("txsteps/%d", i))
		if s, raw, err := c.do(http.MethodPut, "/v1/partner/me/fee-wallets", crashJSON(map[string]string{"ecosystem": "evm", "address": wallets[p.id]}), p.key); err != nil || s != http.StatusOK {
			t.Fatalf("fee wallet: %d %v %s", s, err, raw)
		}
	}
	before := map[string]*big.Int{}
	for _, p := range partners {
		for _, ch := range chains {
			before[p.id+strconv.FormatUint(ch.id, 10)] = crashBalance(t, c, ch.id, wallets[p.id], ch.usdc)
		}
	}
	var head struct {
		BaseFeePerGas string `json:"baseFeePerGas"`
	}
	rpcCall(t, c, x.id, "eth_getBlockByNumber", []any{"latest", false}, &head)
	var tipHex string
	rpcCall(t, c, x.id, "eth_maxPriorityFeePerGas", []any{}, &tipHex)
	b0, tip := hexBig(t, head.BaseFeePerGas), hexBig(t, tipHex)
	// m0 is a first transaction's max fee at the genesis base fee.
	m0 := new(big.Int).Add(new(big.Int).Mul(b0, big.NewInt(2)), tip)
	if m0.Sign() == 0 {
		m0 = big.NewInt(1_000_000_000)
	}
	c.close()
	t.Logf("chain %d: base fee %s wei, tip %s wei", x.id, b0, tip)

	quotes := func(c *crashClient, round int) {
		for _, p := range partners {
			for i, ch := range chains {
				from := chains[1-i]
				path := crashQuotePath("fromChain", strconv.FormatUint(from.id, 10), "toChain", strconv.FormatUint(ch.id, 10),
					"fromToken", from.usdc, "toToken", ch.usdc, "fromAmount", strconv.Itoa(100_000_000+round*1_000_000+i),
					"fromAddress", crashEVMAddress("payer"))
				if s, raw, err := c.do(http.MethodGet, path, nil, p.key); err != nil || s != http.StatusOK {
					t.Fatalf("quote: %d %v %s", s, err, raw)
				}
			}
		}
	}
	list := func() []admin.IntentView {
		var out []admin.IntentView
		cli(t, &out, "tx", "list", "--data", dir, "--limit", "1000")
		return out
	}
	// waitFor polls the intents (through the running service) until ok.
	waitFor := func(what string, ok func([]admin.IntentView) bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			ins := list()
			if ok(ins) {
				return
			}
			if time.Now().After(deadline) {
				b, _ := json.Marshal(ins)
				t.Fatalf("waited 30 s for %s; the intents: %s", what, b)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	onChain := func(ins []admin.IntentView, id uint64, from int) []admin.IntentView {
		var out []admin.IntentView
		for _, in := range ins[min(from, len(ins)):] {
			if in.ChainID == id {
				out = append(out, in)
			}
		}
		return out
	}
	all := func(ins []admin.IntentView, f func(admin.IntentView) bool) bool {
		for _, in := range ins {
			if !f(in) {
				return false
			}
		}
		return len(ins) > 0
	}
	moving := func(in admin.IntentView) bool {
		return in.State == "queued" || in.State == "signed" || in.State == "sent"
	}
	settled := func(ins []admin.IntentView) bool {
		return !slices.ContainsFunc(ins, moving)
	}
	settle := func() int {
		var out settleOut
		cli(t, &out, "settle", "--data", dir, "--ecosystem", "evm")
		if len(out.Failed) != 0 {
			t.Fatalf("a transfer failed: %+v", out.Failed)
		}
		for _, tr := range out.Transfers {
			if tr.State == "manual" {
				t.Fatalf("settle listed a transfer to make by hand: %+v", tr)
			}
		}
		return len(out.Transfers)
	}
	setBaseFee := func(c *crashClient, fee *big.Int) {
		if s, raw, err := c.do(http.MethodPost, "/v1/sandbox/gas", crashJSON(map[string]any{"chainId": x.id, "baseFeePerGas": fee.String()}), ""); err != nil || s != http.StatusOK {
			t.Fatalf("sandbox gas %s: %d %v %s", fee, s, err, raw)
		}
	}
	faucet := func(c *crashClient, chainID uint64, to string, amount *big.Int) {
		if s, raw, err := c.do(http.MethodPost, "/v1/sandbox/faucet", crashJSON(map[string]any{"chainId": chainID, "address": to,
			"token": "native", "amount": amount.String()}), ""); err != nil || s != http.StatusOK {
			t.Fatalf("faucet: %d %v %s", s, err, raw)
		}
	}
	gwei := func(wei *big.Int) string {
		f, _ := new(big.Float).Quo(new(big.Float).SetInt(wei), big.NewFloat(1e9)).Float64()
		return fmt.Sprintf("%d=%g", x.id, f)
	}
	hit := map[string]int{}
	// kill SIGKILLs the child at a seeded moment within window, then
	// reads which steps the intents stood at.
	kill := func(round string, window time.Duration) {
		t.Helper()
		wait := time.Duration(rng.Int64N(int64(window)))
		time.Sleep(wait)
		child.kill(t)
		steps := map[string]int{}
		for _, in := range list() {
			steps[txStepOf(in)]++
		}
		for s, n := range steps {
			hit[s] += n
		}
		t.Logf("%s: SIGKILL after %v, the intents stood at %v", round, wait.Round(time.Millisecond), steps)
	}

	// Round 1, queued: the signer refuses, so the intents wait queued.
	c = child.client()
	quotes(c, 1)
	c.close()
	signerSrv.Refuse("held by the test")
	mark := len(list())
	if n := settle(); n != len(partners)*len(chains) {
		t.Fatalf("settle planned %d transfers, want %d", n, len(partners)*len(chains))
	}
	waitFor("round 1's intents queued", func(ins []admin.IntentView) bool {
		return len(ins) == mark+len(partners)*len(chains) && all(ins[mark:], func(in admin.IntentView) bool { return in.State == "queued" })
	})
	kill("round 1", 500*time.Millisecond)
	signerSrv.Refuse("")
	child = serve()
	waitFor("round 1's intents mined", settled)
	gas := list()[0].GasLimit

	// Round 2, signed not sent: a base fee the operator cannot pay, with a
	// block mined under it (a faucet top-up), so that the head the manager
	// prices its first transactions from carries it.
	c = child.client()
	quotes(c, 2)
	var balHex string
	rpcCall(t, c, x.id, "eth_getBalance", []any{operator, "latest"}, &balHex)
	bal := hexBig(t, balHex)
	high := new(big.Int).Add(new(big.Int).Div(bal, new(big.Int).SetUint64(gas)), big.NewInt(1))
	setBaseFee(c, high)
	faucet(c, x.id, crashEVMAddress("txsteps/blocks"), big.NewInt(1))
	c.close()
	mark = len(list())
	settle()
	waitFor("round 2's intents signed on the expensive chain", func(ins []admin.IntentView) bool {
		return all(onChain(ins, x.id, mark), func(in admin.IntentView) bool { return in.State == "signed" }) &&
			!slices.ContainsFunc(onChain(ins, y.id, 0), moving)
	})
	kill("round 2", 500*time.Millisecond)
	// The next run caps fees at the first transactions' (m0): a
	// transaction stuck under a raised base fee has no room for a
	// replacement.
	child = serve("--tx-fee-cap", gwei(m0))
	c = child.client()
	faucet(c, x.id, operator, new(big.Int).Mul(bal, big.NewInt(3)))
	setBaseFee(c, b0)
	faucet(c, x.id, crashEVMAddress("txsteps/blocks"), big.NewInt(1))
	c.close()
	waitFor("round 2's intents mined once the operator is topped up", settled)

	// Round 3, sent: a base fee above the cap.
	b1 := new(big.Int).Mul(m0, big.NewInt(4))
	c = child.client()
	setBaseFee(c, b1)
	faucet(c, x.id, crashEVMAddress("txsteps/blocks"), big.NewInt(1))
	quotes(c, 3)
	c.close()
	mark = len(list())
	settle()
	waitFor("round 3's intents sent and waiting", func(ins []admin.IntentView) bool {
		return all(onChain(ins, x.id, mark), func(in admin.IntentView) bool { return in.State == "sent" }) &&
			!slices.ContainsFunc(onChain(ins, y.id, 0), moving)
	})
	kill("round 3", 500*time.Millisecond)

	// Round 4, replaced: a higher cap, still under the base fee.
	child = serve("--tx-fee-cap", gwei(new(big.Int).Mul(m0, big.NewInt(3))))
	c = child.client()
	quotes(c, 4)
	c.close()
	mark = len(list())
	settle()
	waitFor("round 3's intents replaced and round 4's sent", func(ins []admin.IntentView) bool {
		return all(onChain(ins, x.id, mark), func(in admin.IntentView) bool { return in.State == "sent" }) &&
			slices.ContainsFunc(onChain(ins, x.id, 0), func(in admin.IntentView) bool { return txStepOf(in) == stepReplaced }) &&
			!slices.ContainsFunc(onChain(ins, y.id, 0), moving)
	})
	kill("round 4", 500*time.Millisecond)

	// Round 5, mined not confirmed: no cap (the waiting intents are
	// replaced above the base fee and mined), the base fee back.
	child = serve()
	waitFor("the waiting intents replaced and mined", settled)
	c = child.client()
	setBaseFee(c, b0)
	faucet(c, x.id, crashEVMAddress("txsteps/blocks"), big.NewInt(1))
	quotes(c, 5)
	c.close()
	mark = len(list())
	settle()
	waitFor("round 5's intents mined", func(ins []admin.IntentView) bool {
		return all(ins[min(mark, len(ins)):], func(in admin.IntentView) bool { return in.State == "mined" })
	})
	kill("round 5", 500*time.Millisecond)

	var missed []string
	for _, s := range []string{stepQueued, stepSigned, stepSent, stepReplaced, stepMined} {
		if hit[s] == 0 {
			missed = append(missed, s)
		}
	}
	if len(missed) > 0 {
		t.Fatalf("no kill found an intent at %v (hit: %v)", missed, hit)
	}

	// After the last restart: blocks on both chains, until every intent is
	// confirmed and every earning settled.
	child = serve()
	c = child.client()
	for i := 0; i < 3; i++ {
		for _, ch := range chains {
			faucet(c, ch.id, crashEVMAddress("txsteps/blocks"), big.NewInt(1))
		}
	}
	waitFor("every intent confirmed", func(ins []admin.IntentView) bool {
		return all(ins, func(in admin.IntentView) bool { return in.State == "confirmed" })
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if settle() != 0 {
			t.Fatal("a settle run after the last restart planned a transfer: an earning was left unplanned")
		}
		pending := 0
		for _, p := range partners {
			var e earningsView
			if s, raw, err := c.doJSON(http.MethodGet, "/v1/partner/me/earnings", nil, p.key, &e); err != nil || s != http.StatusOK {
				t.Fatalf("earnings: %d %v %s", s, err, raw)
			}
			for _, g := range e.Pending {
				pending += g.RowCount
			}
		}
		if pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d earnings still pending 30 s after every intent was confirmed", pending)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// Exactly one mined transaction per intent, on the chain too.
	ins := list()
	const rounds = 5
	if len(ins) != rounds*len(partners)*len(chains) {
		t.Fatalf("%d intents, want %d", len(ins), rounds*len(partners)*len(chains))
	}
	minedTx := map[string]string{} // intent key → its mined hash
	perChain := map[uint64]int{}
	replaced := 0
	for _, in := range ins {
		perChain[in.ChainID]++
		if len(in.Txs) > 1 {
			replaced++
		}
		mined := 0
		for _, tx := range in.Txs {
			var r *struct {
				Status string `json:"status"`
				From   string `json:"from"`
			}
			rpcCall(t, c, in.ChainID, "eth_getTransactionReceipt", []any{tx.Hash}, &r)
			if r == nil {
				continue
			}
			mined++
			if r.Status != "0x1" || tx.State != admin.TxMined {
				t.Errorf("intent %s's transaction %s: receipt status %s, listed %s", in.ID, tx.Hash, r.Status, tx.State)
			}
			minedTx[in.Key] = strings.ToLower(tx.Hash)
		}
		if mined != 1 {
			t.Errorf("intent %s (%s) has %d mined transactions among %d", in.ID, in.Key, mined, len(in.Txs))
		}
	}
	for id, n := range perChain {
		var nonceHex string
		rpcCall(t, c, id, "eth_getTransactionCount", []any{operator, "latest"}, &nonceHex)
		if got := hexBig(t, nonceHex); got.Cmp(big.NewInt(int64(n))) != 0 {
			t.Errorf("the operator's nonce on chain %d is %s for %d intents", id, got, n)
		}
	}
	if replaced == 0 {
		t.Error("no intent was replaced")
	}

	// Every earning settled by its intent's transaction, each wallet paid
	// the sum of its settled fees once.
	got := map[string]*big.Int{}
	for _, p := range partners {
		for _, ch := range chains {
			k := p.id + strconv.FormatUint(ch.id, 10)
			got[k] = new(big.Int).Sub(crashBalance(t, c, ch.id, wallets[p.id], ch.usdc), before[k])
		}
	}
	c.close()
	child.stop(t)
	if err := child.logProblems(); err != nil {
		t.Error(err)
	}
	hashes := map[string]bool{}
	for _, h := range minedTx {
		hashes[h] = true
	}
	want, rows := map[string]*big.Int{}, 0
	for _, p := range partners {
		for _, a := range storeActivities(t, dir, p.id) {
			e := a.Earning
			if e == nil {
				continue
			}
			rows++
			if e.State != account.EarningSettled || !hashes[strings.ToLower(e.SettledTx)] || e.SettledChainID != a.ToChain {
				t.Fatalf("earning %s of %s: %+v, not settled by a mined intent", a.ID, p.id, e)
			}
			k := p.id + strconv.FormatUint(a.ToChain, 10)
			if want[k] == nil {
				want[k] = new(big.Int)
			}
			want[k].Add(want[k], crashBig(t, e.FeeAmount))
		}
	}
	if rows != rounds*len(partners)*len(chains) {
		t.Fatalf("%d earnings, want %d", rows, rounds*len(partners)*len(chains))
	}
	for k, w := range want {
		if got[k].Cmp(w) != 0 {
			t.Errorf("wallet %s received %s, its settled fees sum to %s", k, got[k], w)
		}
	}
	t.Logf("%d intents (%d replaced), kills hit %v, in %v", len(ins), replaced, hit, time.Since(started).Round(time.Millisecond))
}

// rpcCall sends one JSON-RPC request to the sandbox chain's node and
// decodes its result into v.
func rpcCall(t *testing.T, c *crashClient, chainID uint64, method string, params []any, v any) {
	t.Helper()
	body := crashJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	s, raw, err := c.do(http.MethodPost, fmt.Sprintf("/rpc/%d", chainID), body, "")
	if err != nil || s != http.StatusOK {
		t.Fatalf("%s on %d: %d %v %s", method, chainID, s, err, raw)
	}
	var res struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.Error != nil {
		t.Fatalf("%s on %d: %v %s", method, chainID, err, raw)
	}
	if err := json.Unmarshal(res.Result, v); err != nil {
		t.Fatalf("%s on %d: result %s: %v", method, chainID, res.Result, err)
	}
}

func hexBig(t *testing.T, s string) *big.Int {
	t.Helper()
	v, ok := new(big.Int).SetString(strings.TrimPrefix(s, "0x"), 16)
	if !ok {
		t.Fatalf("%q is not a hex quantity", s)
	}
	return v
}
