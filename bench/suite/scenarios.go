package suite

import (
	"fmt"
	"net/http"

	"github.com/swapgate/swapgate/bench/loadgen"
)

// Servers a scenario runs against.
const (
	// serverMain is the Swapgate every scenario but one loads.
	serverMain = "main"
	// serverSlow is a second Swapgate whose aggregator tools stall past
	// its quote deadline, its breakers off.
	serverSlow = "slow"
	// serverSlowBreaker is a third, stalled the same way, with the leg
	// breakers as a production server has them: they open on the stalled
	// tools, which are then skipped.
	serverSlowBreaker = "slow-breaker"
	// serverLive is a Swapgate in live mode whose upstreams (aggregator,
	// intents, the JSON-RPC nodes) are the stand-ins of processStandins,
	// each answering after Config.LiveLatency.
	serverLive = "live"
	// serverLiveRouter is the same live server with the chain-369 leg
	// priced by the PulseX router over eth_call (--pulse-reserves-max-age
	// 0): quote-live's before, from the same run.
	serverLiveRouter = "live-router"
	// processStandins is `swapgate standins`, the live server's upstreams.
	processStandins = "standins"
	// serverPostgres is the main Swapgate's twin on the PostgreSQL store
	// (Config.Store), started only when a store is given: the scenarios
	// of postgresScenarios run on it too, right after their run on main.
	serverPostgres = "postgres"
)

// postgresScenarios are the scenarios that also run on serverPostgres:
// those whose requests write the store (analytics records queued, fee
// earnings synced before the answer, durable webhook events), which is
// where the two backends differ.
func postgresScenarios() []string { return []string{"quote-partner", "quote-fee", "webhook-storm"} }

// processNames lists every process a suite may start, in the order they
// stop: the receiver, then the servers.
func processNames() []string {
	return []string{"receiver", "bare", serverMain, serverPostgres, serverSlow, serverSlowBreaker, serverLive, serverLiveRouter, processStandins}
}

// breakerShut is the flag that keeps serverSlow's leg breakers shut:
// every leg is sent, the stalled ones waited for until the deadline.
func breakerShut() []string { return []string{"--no-breakers"} }

// Targets as the table names them.
const (
	targetBare     = "bare"
	targetSwapgate = "swapgate"
	// targetPostgres is Swapgate on the PostgreSQL store (serverPostgres);
	// targetSwapgate's rows are then Pebble's.
	targetPostgres = "postgres"
)

// Keys a scenario sends.
const (
	keyNone  = ""
	keyZero  = "zero"  // a partner with a 0 bps fee
	keyFee   = "fee"   // a partner with a 30 bps fee and fee wallets
	keyHooks = "hooks" // the partner whose webhook receives the storm
)

// scenarioDef is one scenario of the suite.
type scenarioDef struct {
	name, doc string
	server    string
	key       string
	// vsBare runs the scenario against the bare server too (ping only:
	// the bare server answers nothing else).
	vsBare bool
	// searchable tells whether find-max applies.
	searchable bool
	// explicit leaves the scenario out of a run that names no scenarios:
	// it runs only when --scenarios names it.
	explicit bool
	// stream makes the scenario's requests streamed quotes, read to their
	// done event by the suite's own client (stream.go) rather than loadgen.
	stream bool
	// tx makes the scenario a batch of transaction intents worked by a
	// transaction manager against the server's sandbox chain
	// (txthroughput.go) rather than HTTP requests; build is not called.
	tx bool
	// build returns the request mix against server (d.server, or
	// serverPostgres) and the requests to check before the run (method and
	// paths).
	build func(env *environment, server string) (loadgen.Scenario, string, []string, error)
}

// ScenarioInfo is a scenario's name and what it measures.
type ScenarioInfo struct {
	Name string `json:"name"`
	Doc  string `json:"doc"`
}

// Scenarios lists the suite's scenarios in the order a round runs them.
func Scenarios() []ScenarioInfo {
	var out []ScenarioInfo
	for _, d := range scenarioDefs() {
		out = append(out, ScenarioInfo{d.name, d.doc})
	}
	return out
}

// ScenarioNames lists the scenarios' names in run order.
func ScenarioNames() []string {
	var out []string
	for _, d := range scenarioDefs() {
		out = append(out, d.name)
	}
	return out
}

// quoteMix builds a quote mix; its check list is every distinct request.
func quoteMix(name, endpoint string, kinds ...string) func(*environment, string) (loadgen.Scenario, string, []string, error) {
	return quoteMixWith(name, endpoint, nil, kinds...)
}

// quoteMixWith is quoteMix with query parameters the environment adds to
// every request (a timing strategy's).
func quoteMixWith(name, endpoint string, query func(*environment) string, kinds ...string) func(*environment, string) (loadgen.Scenario, string, []string, error) {
	return func(env *environment, _ string) (loadgen.Scenario, string, []string, error) {
		q, err := loadgen.NewQuoteMix(name, endpoint, kinds...)
		if err != nil {
			return nil, "", nil, err
		}
		if query != nil {
			q = q.WithQuery(query(env))
		}
		return q, http.MethodGet, q.Paths(), nil
	}
}

// evmSolana are the pairs the slow-provider scenarios quote: the intents
// provider answers them too, so a stalled aggregator still leaves a route.
var evmSolana = []string{loadgen.QuoteEVMToSolana, loadgen.QuoteSolanaToEVM}

// oneCallKinds are the kinds of the quote mix but the multi-step one.
func oneCallKinds() []string {
	var out []string
	for _, k := range loadgen.QuoteKinds() {
		if k != loadgen.QuotePulseMultiStep {
			out = append(out, k)
		}
	}
	return out
}

// strategyQuery is the timing strategy of quote-slow-provider-strategy:
// every leg is given the configured minimum wait, then one route ends the
// race (the intents leg's, in well under the wait).
func strategyQuery(env *environment) string {
	return fmt.Sprintf("&minWaitMs=%d&expectedResults=1", env.cfg.StrategyMinWait.Milliseconds())
}

// scenarioDefs is the suite; a function so that the table is nobody's
// mutable state. webhook-storm comes last in a round: its retries drain
// before the next round's bare ping.
func scenarioDefs() []scenarioDef {
	return []scenarioDef{
		{name: "ping", server: serverMain, vsBare: true, searchable: true,
			doc: "GET /v1/ping without a key, against the bare server and Swapgate: the HTTP floor and Swapgate's cost on top of it (routing, envelope, metrics)",
			build: func(*environment, string) (loadgen.Scenario, string, []string, error) {
				return loadgen.NewStaticScenario("ping", "/v1/ping"), http.MethodGet, []string{"/v1/ping"}, nil
			}},
		{name: "tokens", server: serverMain, key: keyZero, searchable: true,
			doc: "GET /v1/tokens?chains=1 with a partner key: a cached reference read with authentication and the read bucket",
			build: func(*environment, string) (loadgen.Scenario, string, []string, error) {
				return loadgen.NewStaticScenario("tokens", "/v1/tokens?chains=1"), http.MethodGet, []string{"/v1/tokens?chains=1"}, nil
			}},
		{name: "quote-partner", server: serverMain, key: keyZero, searchable: true,
			doc:   "GET /v1/quote with a 0 bps partner's key over the quote mix (all three providers: EVM to EVM, both ways to Solana, to TON, pulseroute direct inbound, outbound and multi-step); its records are analytics, queued without the quote waiting",
			build: quoteMix("quote-partner", "/v1/quote")},
		{name: "quote-fee", server: serverMain, key: keyFee, searchable: true,
			doc:   "the same mix with a 30 bps partner with fee wallets: every quote's earnings row is written durably (synced) before it is answered",
			build: quoteMix("quote-fee", "/v1/quote")},
		{name: "quote-anon", server: serverMain, key: keyNone, searchable: true,
			doc:   "the same mix without a key: anonymous limits (raised for the suite) and the anonymous fee",
			build: quoteMix("quote-anon", "/v1/quote")},
		{name: "routes", server: serverMain, key: keyZero, searchable: true,
			doc:   "GET /v1/routes over the quote mix: every candidate route, tagged, instead of the best one",
			build: quoteMix("routes", "/v1/routes")},
		{name: "quote-stream", server: serverMain, key: keyZero, stream: true,
			doc:   "GET /v1/quote/stream over the quote mix with a 0 bps partner's key, read to its done event (latency: to done); the notes give the time to the first route event against the time its leg took in the race (the best event's timing): what the stream adds to the leg",
			build: quoteMix("quote-stream", "/v1/quote/stream")},
		{name: "mixed", server: serverMain, key: keyZero, searchable: true,
			doc: "an integrator's day in one mix: per 20 requests 1 chains, 3 tokens and 2 gas-prices reads, 8 quotes and 6 status polls (GET /v1/status?txHash= of real sandbox swaps, and one hash not followed)",
			build: func(env *environment, _ string) (loadgen.Scenario, string, []string, error) {
				m := loadgen.NewMixedScenario(env.txHashes)
				return m, http.MethodGet, m.Paths(), nil
			}},
		{name: "quote-evm-solana", server: serverMain, key: keyZero,
			doc:   "the slow-provider scenarios' pairs (EVM chains to and from Solana) on the Swapgate whose tools all answer: the reference of quote-slow-provider-breaker",
			build: quoteMix("quote-evm-solana", "/v1/quote", evmSolana...)},
		{name: "quote-slow-provider", server: serverSlow, key: keyZero, searchable: true,
			doc:   "a second Swapgate whose aggregator tools stall past its --quote-deadline, its breakers off (--no-breakers); quotes between EVM chains and Solana, which the intents provider also answers, come back at the deadline: p99 against the deadline + 2 ms",
			build: quoteMix("quote-slow-provider", "/v1/quote", evmSolana...)},
		{name: "quote-slow-provider-breaker", server: serverSlowBreaker, key: keyZero,
			doc:   "the same stall on a third Swapgate with the default leg breakers, open on the stalled tools once the first quotes timed out: p99 against quote-evm-solana's (no stall) + 2 ms",
			build: quoteMix("quote-slow-provider-breaker", "/v1/quote", evmSolana...)},
		{name: "quote-slow-provider-strategy", server: serverSlow, key: keyZero,
			doc:   "quote-slow-provider's requests with a timing strategy that ends early (minWaitMs, expectedResults=1: the intents route is in long before the wait ends): p99 against minWaitMs + 2 ms",
			build: quoteMixWith("quote-slow-provider-strategy", "/v1/quote", strategyQuery, evmSolana...)},
		{name: "quote-live", server: serverLive, key: keyZero,
			doc:   "the quote mix with a 0 bps partner's key on a Swapgate in live mode (--aggregator-url, --intents-url, --pulse-rpc) whose upstreams are local stand-ins of LI.FI, 1Click and the JSON-RPC nodes (swapgate standins), each answering after --live-latency; offered at --live-rate: the notes give the pools' saturation refusals and the server's and the stand-ins' CPU and resident memory",
			build: quoteMix("quote-live", "/v1/quote")},
		{name: "quote-live-one-call", server: serverLive, key: keyZero, explicit: true,
			doc:   "quote-live without the multi-step pairs (step 1's route, then the chain-369 leg priced from it): every quote here waits for one upstream call at a time, so p99 is measured against --live-latency + 50 ms (run only when --scenarios names it)",
			build: quoteMix("quote-live-one-call", "/v1/quote", oneCallKinds()...)},
		{name: "quote-live-router", server: serverLiveRouter, key: keyZero, explicit: true,
			doc:   "quote-live on a second live server against the same stand-ins whose chain-369 leg the PulseX router prices over eth_call (--pulse-reserves-max-age 0), as before the reserves snapshot: a multi-step quote waits for two upstream answers in turn; run beside quote-live, it gives the before and after of one run (run only when --scenarios names it)",
			build: quoteMix("quote-live-router", "/v1/quote")},
		{name: "tx-throughput", server: serverMain, tx: true, explicit: true,
			doc: "a batch of transaction intents (native transfers) submitted to a transaction manager (actors/txm, Pebble, a fresh funded key, one confirmation) against the sandbox chain 42161 of the main Swapgate through POST /rpc/42161 over loopback: intents confirmed per second from one account, and each intent's time to inclusion (stored to its receipt recorded) as the latency (run only when --scenarios names it)"},
		{name: "webhook-storm", server: serverMain, key: keyHooks,
			doc: "POST /v1/partner/webhooks/{id}/test at a fixed rate: each a durable event delivered over HTTPS to a local receiver that answers a share with 500, forcing retries; reports deliveries per second seen at the receiver, retries included",
			build: func(env *environment, server string) (loadgen.Scenario, string, []string, error) {
				id := env.webhookIDs[server]
				if id == "" {
					return nil, "", nil, fmt.Errorf("webhook-storm: no webhook registered on %s", server)
				}
				p := "/v1/partner/webhooks/" + id + "/test"
				return loadgen.NewPostScenario("webhook-storm", p), http.MethodPost, []string{p}, nil
			}},
	}
}
