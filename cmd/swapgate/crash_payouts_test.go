package main

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
)

// TestCrashPayouts kills the service (SIGKILL, the binary as a child
// process on Pebble) while a settlement run goes through its admin
// listener, at seeded random moments: before the run plans, between its
// plan and its intents, while the manager signs, sends and confirms. Fee
// quotes are added between the kills, so that every run has something to
// pay. After the last restart, runs are made until nothing is pending or
// planned; then every earning is settled by exactly one transfer, and each
// fee wallet received, per chain, exactly the sum of its settled fees: an
// earning paid twice, or a transfer mined twice, would show as more.
func TestCrashPayouts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills the service several times")
	}
	rng := crashRNG(t, 0x9a7)

	work := t.TempDir()
	linkSwapgate(t, work)
	dir := filepath.Join(work, "data")
	certFile := filepath.Join(work, "none.pem")
	if err := os.WriteFile(certFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	lim := []string{"--heavy", "100000000", "--read", "100000000", "--swap-fee-bps", "30"}
	partners := []crashPartnerKey{crashPartner(t, dir, "PayA", lim...), crashPartner(t, dir, "PayB", lim...)}
	wallets := map[string]string{}
	child := crashServe(t, work, dir, certFile, "", 0)
	c := child.client()
	for i, p := range partners {
		wallets[p.id] = crashEVMAddress(fmt.Sprintf("payout/%d", i))
		if s, raw, err := c.do(http.MethodPut, "/v1/partner/me/fee-wallets", crashJSON(map[string]string{"ecosystem": "evm", "address": wallets[p.id]}), p.key); err != nil || s != http.StatusOK {
			t.Fatalf("fee wallet: %d %v %s", s, err, raw)
		}
	}
	c.close()
	chains := []crashChain{{42161, crashUSDCArb}, {8453, crashUSDCBase}}
	balance := func(c *crashClient, chain crashChain, holder string) *big.Int {
		var b struct {
			Chains []struct {
				Balances []struct {
					Token  struct{ Address string }
					Amount string
				}
			}
		}
		if s, raw, err := c.doJSON(http.MethodGet, fmt.Sprintf("/v1/balances?address=%s&chains=%d", holder, chain.id), nil, "", &b); err != nil || s != http.StatusOK {
			t.Fatalf("balances: %d %v %s", s, err, raw)
		}
		for _, x := range b.Chains[0].Balances {
			if strings.EqualFold(x.Token.Address, chain.usdc) {
				v, _ := new(big.Int).SetString(x.Amount, 10)
				return v
			}
		}
		t.Fatalf("no USDC in %s's balances on %d", holder, chain.id)
		return nil
	}
	before := map[string]*big.Int{}
	c = child.client()
	for _, p := range partners {
		for _, ch := range chains {
			before[p.id+strconv.FormatUint(ch.id, 10)] = balance(c, ch, wallets[p.id])
		}
	}
	c.close()
	// quotes makes fee-bearing quotes of every partner, paid on each chain.
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

	const rounds = 4
	for round := 1; round <= rounds; round++ {
		c := child.client()
		quotes(c, round)
		c.close()
		wait := time.Duration(rng.Int64N(int64(400 * time.Millisecond)))
		t.Logf("round %d: settle, SIGKILL after %v", round, wait.Round(time.Millisecond))
		done := make(chan struct{})
		go func() {
			defer close(done)
			var out strings.Builder
			run([]string{"settle", "--data", dir, "--ecosystem", "evm"}, &out, &strings.Builder{}) // its outcome is unknown
		}()
		time.Sleep(wait)
		child.kill(t)
		<-done
		child = crashServe(t, work, dir, certFile, "", round)
	}

	// After the last restart: runs until every earning is settled.
	deadline := time.Now().Add(60 * time.Second)
	for {
		var out settleOut
		cli(t, &out, "settle", "--data", dir, "--ecosystem", "evm")
		if len(out.Failed) != 0 {
			t.Fatalf("a transfer failed: %+v", out.Failed)
		}
		pending := 0
		c := child.client()
		for _, p := range partners {
			var e earningsView
			if s, raw, err := c.doJSON(http.MethodGet, "/v1/partner/me/earnings", nil, p.key, &e); err != nil || s != http.StatusOK {
				t.Fatalf("earnings: %d %v %s", s, err, raw)
			}
			for _, g := range e.Pending {
				pending += g.RowCount
			}
		}
		c.close()
		if pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d earnings still pending a minute after the last restart", pending)
		}
		time.Sleep(200 * time.Millisecond)
	}
	c = child.client()
	got := map[string]*big.Int{}
	for _, p := range partners {
		for _, ch := range chains {
			k := p.id + strconv.FormatUint(ch.id, 10)
			got[k] = new(big.Int).Sub(balance(c, ch, wallets[p.id]), before[k])
		}
	}
	c.close()
	child.stop(t)
	if err := child.logProblems(); err != nil {
		t.Error(err)
	}

	// Every earning settled by one transfer, and each wallet paid exactly
	// the sum of its settled fees on each chain.
	want := map[string]*big.Int{}
	rows, txs := 0, map[string]bool{}
	for _, p := range partners {
		for _, a := range storeActivities(t, dir, p.id) {
			e := a.Earning
			if e == nil {
				continue
			}
			rows++
			if e.State != account.EarningSettled || e.SettledTx == "" || e.SettledChainID != a.ToChain {
				t.Fatalf("earning %s of %s: %+v", a.ID, p.id, e)
			}
			txs[e.SettledTx] = true
			k := p.id + strconv.FormatUint(a.ToChain, 10)
			if want[k] == nil {
				want[k] = new(big.Int)
			}
			amt, _ := new(big.Int).SetString(e.FeeAmount, 10)
			want[k].Add(want[k], amt)
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
	b, _ := json.Marshal(map[string]any{"earnings": rows, "transfers": len(txs)})
	t.Logf("settled %s", b)
}
