package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swapgate/swapgate/actors/cluster"
)

// clusterPartner creates a partner with the CLI on the cluster's store,
// as an operator would (`swapgate partner create … --store`).
func (tc *testCluster) partner(t *testing.T, name string, extra ...string) crashPartnerKey {
	t.Helper()
	return crashPartner(t, tc.dirs[0], name, append([]string{"--store", tc.store}, extra...)...)
}

// kill SIGKILLs node i and checks its log.
func (tc *testCluster) kill(t *testing.T, i int) {
	t.Helper()
	tc.nodes[i].kill(t)
}

// limitTally is what one burst of heavy requests got: the admitted ones
// (2xx) and the refused ones (429), each with its window's reset, and any
// other answer.
type limitTally struct {
	mu                sync.Mutex
	admitted, refused int
	resets            []int64
	other             []string
}

// offer sends n heavy requests (GET /v1/status of a transaction nobody
// follows: admitted, it is a cheap 200) with key to node, from workers
// goroutines, and tallies the answers.
func (lt *limitTally) offer(t *testing.T, wg *sync.WaitGroup, node *crashChild, key string, n, workers int) {
	t.Helper()
	per := n / workers
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := node.client()
			defer c.close()
			for i := range per {
				path := fmt.Sprintf("/v1/status?txHash=0x%064x", w*100000+i)
				s, raw, err := c.do(http.MethodGet, path, nil, key)
				var env struct {
					Meta struct {
						RateLimit struct{ Limit, Remaining, Reset int64 }
					}
				}
				_ = json.Unmarshal(raw, &env)
				lt.mu.Lock()
				switch {
				case err == nil && s == http.StatusOK:
					lt.admitted++
					lt.resets = append(lt.resets, env.Meta.RateLimit.Reset)
				case err == nil && s == http.StatusTooManyRequests:
					lt.refused++
				default:
					lt.other = append(lt.other, fmt.Sprintf("%s: %d %v %.300s", node.base, s, err, raw))
				}
				lt.mu.Unlock()
			}
		}()
	}
}

// oneWindow fails the test unless every admitted request's window reset
// within a few seconds of the others' (the nodes measure the grain's
// window from when they asked): the load fitted one window, so the limit
// bounds what it admitted.
func (lt *limitTally) oneWindow(t *testing.T) {
	t.Helper()
	if len(lt.resets) == 0 {
		return
	}
	lo, hi := slices.Min(lt.resets), slices.Max(lt.resets)
	if hi-lo > 2 {
		t.Fatalf("the admitted requests' resets span %d..%d: the load did not fit one window (a machine far too slow?)", lo, hi)
	}
}

// TestClusterPartnerLimits runs three nodes on one store: a partner's heavy
// limit (300 a minute) offered twice over through all three nodes at once
// admits between 0.99 L and L; the same Idempotency-Key POSTed to two
// nodes at once acts once; killing the node that hosts a partner's grain
// mid-window keeps that window's admissions at most L, the grain's new
// activation loading what the old one granted.
func TestClusterPartnerLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three service processes")
	}
	tc := startCluster(t, 3)
	// Nodes restarted in a subtest belong to the whole test: a process is
	// stopped by the cleanup of the test that started it.
	whole := t
	members := slices.Sorted(slices.Values(tc.binds))
	tc.waitMembers(t, members)
	const limit = 300

	t.Run("limits exact across nodes", func(t *testing.T) {
		p := tc.partner(t, "Limits", "--heavy", fmt.Sprint(limit))
		var lt limitTally
		var wg sync.WaitGroup
		for _, node := range tc.nodes {
			lt.offer(t, &wg, node, p.key, 2*limit, 4)
		}
		wg.Wait()
		if len(lt.other) > 0 {
			t.Fatalf("%d answers neither admitted nor refused, first: %s", len(lt.other), lt.other[0])
		}
		lt.oneWindow(t)
		t.Logf("offered %d through 3 nodes: %d admitted, %d refused", 3*2*limit, lt.admitted, lt.refused)
		if lt.admitted > limit || lt.admitted*100 < 99*limit {
			t.Fatalf("admitted %d of a limit of %d; want between %d and %d", lt.admitted, limit, (99*limit+99)/100, limit)
		}
		// Any node's GET /v1/partner/usage shows the partner's window, the
		// grain's, not the node's own share of it.
		for i, node := range tc.nodes {
			var usage struct {
				Buckets []struct {
					Bucket                 string
					Limit, Used, Remaining int
				}
			}
			s, raw, err := node.client().doJSON(http.MethodGet, "/v1/partner/usage", nil, p.key, &usage)
			if err != nil || s != http.StatusOK || len(usage.Buckets) == 0 {
				t.Fatalf("usage on node %d: %d %v %s", i, s, err, raw)
			}
			h := usage.Buckets[0]
			if h.Bucket != "heavy" || h.Limit != limit || h.Used*100 < 99*limit || h.Used > limit || h.Remaining != limit-h.Used {
				t.Fatalf("usage on node %d: heavy %+v; want the window's %d of %d used", i, h, lt.admitted, limit)
			}
		}
		s, raw, err := tc.nodes[0].client().do(http.MethodGet, "/metrics", nil, "")
		if err != nil || s != http.StatusOK || !strings.Contains(string(raw), "swapgate_partner_limiter_acquires_total") {
			t.Fatalf("metrics %d %v: no partner limiter figures", s, err)
		}
	})

	t.Run("one Idempotency-Key, two nodes, one action", func(t *testing.T) {
		p := tc.partner(t, "Idem")
		for round := range 4 {
			body := crashJSON(map[string]any{"fiatCurrency": "USD", "fiatAmount": 100, "cryptoAsset": "USDC", "chainId": 1,
				"walletAddress": crashEVMAddress(fmt.Sprint("cluster-idem/", round)), "redirectUrl": "https://shop.example/done"})
			key := fmt.Sprint("cluster-idem-", round)
			type got struct {
				status   int
				raw      []byte
				replayed bool
				err      error
			}
			answers := make([]got, 2)
			var wg sync.WaitGroup
			for i, node := range []*crashChild{tc.nodes[round%3], tc.nodes[(round+1)%3]} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					c := node.client()
					defer c.close()
					s, raw, h, err := c.doHeader(http.MethodPost, "/v1/onramp/checkout", body, p.key, "Idempotency-Key", key)
					answers[i] = got{s, raw, h.Get("Idempotent-Replayed") == "true", err}
				}()
			}
			wg.Wait()
			var uids []string
			replays := 0
			for _, a := range answers {
				var env struct {
					Data struct {
						OrderUID string `json:"orderUid"`
					}
				}
				if a.err != nil || a.status != http.StatusOK || json.Unmarshal(a.raw, &env) != nil || env.Data.OrderUID == "" {
					t.Fatalf("round %d: %d %v %s", round, a.status, a.err, a.raw)
				}
				uids = append(uids, env.Data.OrderUID)
				if a.replayed {
					replays++
				}
			}
			if uids[0] != uids[1] || replays != 1 || string(answers[0].raw) != string(answers[1].raw) {
				t.Fatalf("round %d: orders %v, %d replays; want one order, acted once and replayed once byte for byte", round, uids, replays)
			}
		}
	})

	t.Run("killing the grain's host keeps the window within the limit", func(t *testing.T) {
		p := tc.partner(t, "Failover", "--heavy", fmt.Sprint(limit))
		owner := cluster.Owner(members, "partner/"+p.id)
		host := slices.Index(tc.binds, owner)
		if host < 0 {
			t.Fatalf("the grain's owner %s is none of %v", owner, tc.binds)
		}
		var lt limitTally
		var wg sync.WaitGroup
		// Before: about half the limit through all three nodes.
		for _, node := range tc.nodes {
			lt.offer(t, &wg, node, p.key, limit/6, 2)
		}
		wg.Wait()
		before := lt.admitted
		tc.kill(t, host)
		tc.nodes[host] = nil
		tc.waitMembers(t, slices.DeleteFunc(slices.Clone(members), func(m string) bool { return m == owner }))
		// After: twice the limit through the two that are left. The new
		// activation continues the window from the grants persisted.
		for _, node := range tc.nodes {
			if node != nil {
				lt.offer(t, &wg, node, p.key, limit, 4)
			}
		}
		wg.Wait()
		lt.oneWindow(t)
		t.Logf("before the kill %d admitted; in all %d admitted, %d refused, %d neither", before, lt.admitted, lt.refused, len(lt.other))
		for _, o := range lt.other {
			t.Logf("neither admitted nor refused: %s", o)
		}
		if before < limit/3 || lt.admitted > limit || lt.admitted <= before {
			t.Fatalf("admitted %d before the kill and %d in all; want a share before, more after, at most %d in the window", before, lt.admitted, limit)
		}
		if len(lt.other) > 0 {
			t.Fatalf("%d answers neither admitted nor refused", len(lt.other))
		}
		tc.nodes[host] = tc.serve(whole, host)
		tc.waitMembers(t, members)
	})

	t.Run("ledger rows fenced by the grain's epoch, none lost or doubled", func(t *testing.T) {
		p := tc.partner(t, "Ledger", "--swap-fee-bps", "0")
		owner := slices.Index(tc.binds, cluster.Owner(members, "partner/"+p.id))
		a, b := (owner+1)%3, (owner+2)%3
		var ids []string
		byNode := map[string]int{}
		quote := func(i int, n int) {
			t.Helper()
			c := tc.nodes[i].client()
			defer c.close()
			for range n {
				from := crashEVMAddress(fmt.Sprint("cluster-ledger/", len(ids)))
				var q crashQuote
				s, raw, err := c.doJSON(http.MethodGet, crashQuotePath("fromChain", "42161", "toChain", "8453", "fromToken", crashUSDCArb,
					"toToken", crashUSDCBase, "fromAmount", "50000000", "fromAddress", from, "toAddress", from), nil, p.key, &q)
				if err != nil || s != http.StatusOK || q.Quote.ID == "" {
					log := tc.nodes[i].log.String()
					t.Fatalf("quote on node %d: %d %v %.300s\n%s", i, s, err, raw, log[max(0, len(log)-6000):])
				}
				ids = append(ids, q.Quote.ID)
				byNode[q.Quote.ID] = i
			}
		}
		// waitRows waits until node i lists every quote's row, once.
		waitRows := func(i int) {
			t.Helper()
			c := tc.nodes[i].client()
			defer c.close()
			began := time.Now()
			polls := 0
			deadline := began.Add(30 * time.Second)
			for {
				var page struct {
					Transactions []struct{ ID string }
				}
				s, raw, err := c.doJSON(http.MethodGet, "/v1/partner/transactions?limit=100", nil, p.key, &page)
				if err != nil || s != http.StatusOK {
					t.Fatalf("transactions: %d %v %s", s, err, raw)
				}
				var got []string
				for _, tx := range page.Transactions {
					got = append(got, tx.ID)
				}
				slices.Sort(got)
				want := slices.Sorted(slices.Values(ids))
				if slices.Equal(got, want) {
					t.Logf("node %d lists the %d rows after %v", i, len(want), time.Since(began).Round(time.Millisecond))
					return
				}
				if polls++; polls == 1 {
					for _, id := range want {
						if !slices.Contains(got, id) {
							t.Logf("first poll: %s of node %d missing", id, byNode[id])
						}
					}
				}
				if len(got) > len(want) || time.Now().After(deadline) {
					t.Fatalf("transactions %v, want the %d quotes %v", got, len(want), want)
				}
				time.Sleep(200 * time.Millisecond)
			}
		}
		// Every node holds a lease of the partner's grain (epoch 1). A
		// fee-free quote's row is committed after its answer, and a killed
		// node loses those it had not committed yet: the rows are waited
		// for before the kill.
		for i := range 3 {
			quote(i, 3)
		}
		waitRows(owner)
		// The grain's host dies; a read on node a activates the grain on
		// its next owner, which bumps the epoch: node b's lease is stale,
		// so its next ledger batch is refused, its lease refreshed and the
		// rows sent again.
		tc.kill(t, owner)
		tc.nodes[owner] = nil
		tc.waitMembers(t, slices.DeleteFunc(slices.Clone(members), func(m string) bool { return m == tc.binds[owner] }))
		ca := tc.nodes[a].client()
		if s, raw, err := ca.do(http.MethodGet, "/v1/partner/me", nil, p.key); err != nil || s != http.StatusOK {
			t.Fatalf("partner/me on node %d: %d %v %s", a, s, err, raw)
		}
		ca.close()
		quote(b, 3)
		quote(a, 3)
		// Its host back, the grain moves again (another epoch); every node
		// quotes once more.
		tc.nodes[owner] = tc.serve(whole, owner)
		tc.waitMembers(t, members)
		for i := range 3 {
			quote(i, 2)
		}
		// Every quote's row, once, whichever node recorded it.
		waitRows(a)
		s, raw, err := tc.nodes[b].client().do(http.MethodGet, "/metrics", nil, "")
		if err != nil || s != http.StatusOK {
			t.Fatalf("metrics: %d %v", s, err)
		}
		for _, line := range strings.Split(string(raw), "\n") {
			if strings.HasPrefix(line, "swapgate_partner_") {
				t.Logf("node %d: %s", b, line)
			}
		}
		if !strings.Contains(string(raw), "swapgate_partner_ledger_stale_batches_total ") ||
			strings.Contains(string(raw), "swapgate_partner_ledger_stale_batches_total 0\n") {
			t.Errorf("node %d's ledger never met a stale epoch, though its lease was one", b)
		}
	})
}

// heavyOnce sends one heavy request (as offer does) with key through c and
// returns its status and the limit its meta.rateLimit names.
func heavyOnce(t *testing.T, c *crashClient, key string, seq int) (status int, limit int64, raw []byte) {
	t.Helper()
	s, raw, err := c.do(http.MethodGet, fmt.Sprintf("/v1/status?txHash=0x%064x", 900000000+seq), nil, key)
	if err != nil || (s != http.StatusOK && s != http.StatusTooManyRequests) {
		t.Fatalf("heavy request: %d %v %.300s", s, err, raw)
	}
	var env struct {
		Meta struct {
			RateLimit struct{ Limit int64 }
		}
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		t.Fatalf("heavy request: %v %.300s", err, raw)
	}
	return s, env.Meta.RateLimit.Limit, raw
}

// TestClusterPartnerLimitsFollowTheOperator runs three nodes on one store:
// limits the operator raises with `partner set-limits` (through node 0's
// admin listener) apply on every node within 2 s, the partner's grain
// active and its old limit spent, and every node admits past the old
// limit; a block a node stopped spending comes back to the window, so
// another node is admitted up to the window's limit.
func TestClusterPartnerLimitsFollowTheOperator(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three service processes")
	}
	tc := startCluster(t, 3)
	tc.waitMembers(t, slices.Sorted(slices.Values(tc.binds)))

	t.Run("set-limits reaches every node within 2 s", func(t *testing.T) {
		const before, after = 5, 50
		p := tc.partner(t, "Raised", "--heavy", fmt.Sprint(before))
		var lt limitTally
		var wg sync.WaitGroup
		for _, node := range tc.nodes {
			lt.offer(t, &wg, node, p.key, 4, 1)
		}
		wg.Wait()
		if lt.admitted != before || len(lt.other) > 0 {
			t.Fatalf("under the old limit: %d admitted, %d refused, other %v; want %d admitted", lt.admitted, lt.refused, lt.other, before)
		}
		var res struct{ ID string }
		cli(t, &res, "partner", "set-limits", "--data", tc.dirs[0], "--store", tc.store, "--id", p.id, "--heavy", fmt.Sprint(after))
		changed := time.Now()
		admitted, seq := 0, 0
		for i, node := range tc.nodes {
			c := node.client()
			for {
				seq++
				s, limit, raw := heavyOnce(t, c, p.key, seq)
				if s == http.StatusOK && limit == after {
					admitted++
					break
				}
				if time.Since(changed) > 2*time.Second {
					t.Fatalf("node %d answers %d with limit %d %v after set-limits: %.300s", i, s, limit, time.Since(changed).Round(time.Millisecond), raw)
				}
				time.Sleep(50 * time.Millisecond)
			}
			c.close()
			t.Logf("node %d admits under the new limit %v after set-limits", i, time.Since(changed).Round(time.Millisecond))
		}
		var more limitTally
		for _, node := range tc.nodes {
			more.offer(t, &wg, node, p.key, 2*after/3, 2)
		}
		wg.Wait()
		if len(more.other) > 0 {
			t.Fatalf("%d answers neither admitted nor refused, first: %s", len(more.other), more.other[0])
		}
		total := before + admitted + more.admitted
		t.Logf("the window admitted %d of %d (%d after the change, %d refused)", total, after, admitted+more.admitted, more.refused)
		if total > after || total*10 < 9*after {
			t.Fatalf("the window admitted %d; want at most %d and at least %d", total, after, 9*after/10)
		}
	})

	t.Run("a block a node stopped spending comes back", func(t *testing.T) {
		const limit = 30
		p := tc.partner(t, "Returned", "--heavy", fmt.Sprint(limit))
		// Node 0 takes a block (half the window shared among the three
		// members: 5) and spends one of it, then its traffic stops.
		c0 := tc.nodes[0].client()
		if s, _, raw := heavyOnce(t, c0, p.key, 0); s != http.StatusOK {
			t.Fatalf("node 0: %d %.300s", s, raw)
		}
		c0.close()
		// Node 1 is admitted up to the rest of the window: what node 0
		// holds unspent comes back once its lease ends.
		c1 := tc.nodes[1].client()
		defer c1.close()
		began := time.Now()
		admitted, refused := 0, 0
		for seq := 1; admitted < limit-1 && time.Since(began) < 20*time.Second; seq++ {
			switch s, _, _ := heavyOnce(t, c1, p.key, seq); s {
			case http.StatusOK:
				admitted++
			default:
				refused++
				time.Sleep(100 * time.Millisecond)
			}
		}
		t.Logf("node 1: %d admitted, %d refused, in %v", admitted, refused, time.Since(began).Round(time.Millisecond))
		if admitted != limit-1 {
			t.Fatalf("node 1 admitted %d of the %d the window had left after node 0's one: node 0's unspent block never came back", admitted, limit-1)
		}
		if s, _, raw := heavyOnce(t, c1, p.key, 1000); s != http.StatusTooManyRequests {
			t.Fatalf("past the window's limit: %d %.300s", s, raw)
		}
	})
}
