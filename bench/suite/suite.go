package suite

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/swapgate/swapgate/bench/loadgen"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/tools"
)

// environment is one suite run's servers, accounts and records.
type environment struct {
	cfg      Config
	origin   time.Time
	dir      string
	tmp      string
	out      io.Writer
	cores    int
	children map[string]*child
	apis     map[string]*api
	partners map[string]partner // by key role; slow-server partners prefixed "slow-"
	samplers []*Sampler

	// webhookIDs are the storm's webhook on each server that has one.
	webhookIDs    map[string]string
	webhookSecret string
	txHashes      []string
	stalled       []string
	deliveries    deliveryLog

	runs     []RunRecord
	searches []SearchRecord
	notes    []string

	// clusterNodes are the node children of each cluster server
	// (cluster-N), clusterStores its database; extraProcs every node, for
	// the samplers and the stop; dropClusterDBs removes the databases.
	clusterNodes   map[string][]string
	clusterStores  map[string]string
	extraProcs     []string
	dropClusterDBs func()
	// clusterOnlySearch is set when clusterSearched is searched for the
	// clusters' comparison alone: its other targets are not searched.
	clusterOnlySearch bool
}

// RunRecord is one fixed-rate run.
type RunRecord struct {
	Scenario string `json:"scenario"`
	Target   string `json:"target"`
	Round    int    `json:"round"`
	// StartSec and EndSec are seconds since the suite started.
	StartSec float64          `json:"startSec"`
	EndSec   float64          `json:"endSec"`
	Offered  float64          `json:"offeredRate"`
	Summary  *loadgen.Summary `json:"summary"`
	Timeline []loadgen.Line   `json:"timeline"`
	// GenCPU and ServerCPU are shares of all cores over the run.
	GenCPU    float64        `json:"generatorCpu"`
	ServerCPU float64        `json:"serverCpu"`
	Webhook   *WebhookFigure `json:"webhook,omitempty"`
	// Stream is what a streamed-quote run measured besides its summary.
	Stream *StreamFigure `json:"stream,omitempty"`
	// Breaker is what the server's leg breakers did during the run, on the
	// slow-provider servers.
	Breaker *BreakerFigure `json:"breaker,omitempty"`
	// Live is what quote-live's run did on the live server and the
	// stand-ins.
	Live *LiveFigure `json:"live,omitempty"`
	// Ledger is what the server's quote ledger committed during the run,
	// on both stores' servers when the run has a PostgreSQL store.
	Ledger *LedgerFigure `json:"ledger,omitempty"`
	// Tx is what a tx-throughput run measured.
	Tx *TxFigure `json:"tx,omitempty"`
}

// LedgerFigure is what a server's quote ledger did during a run or a
// search, read from its /metrics before and after: commits, the partner
// quote records they held, and the time they took (synced and unsynced
// together). Rows per commit is how well the ledger batches the quotes
// waiting on it; the time of a commit is the store's sync.
type LedgerFigure struct {
	Commits   float64 `json:"commits"`
	Rows      float64 `json:"rows"`
	CommitSec float64 `json:"commitSeconds"`
}

// RowsPerCommit is the mean batch.
func (f LedgerFigure) RowsPerCommit() float64 { return f.Rows / max(f.Commits, 1) }

// MeanCommit is the mean commit's time in microseconds.
func (f LedgerFigure) MeanCommit() float64 { return 1e6 * f.CommitSec / max(f.Commits, 1) }

func (f LedgerFigure) minus(g LedgerFigure) *LedgerFigure {
	return &LedgerFigure{Commits: f.Commits - g.Commits, Rows: f.Rows - g.Rows, CommitSec: f.CommitSec - g.CommitSec}
}

// Series of the ledger's figures.
const (
	seriesLedgerCommits   = "swapgate_ledger_commits_total"
	seriesLedgerRows      = "swapgate_ledger_rows_total"
	seriesLedgerCommitSum = "swapgate_ledger_commit_seconds_sum"
)

// ledgerReading reads the ledger's counters of d's server on target when
// the run has a PostgreSQL store and d is one of its quote scenarios (the
// ledger holds partner quote records; webhook events are not its); ok is
// false otherwise, and when /metrics cannot be read.
func (env *environment) ledgerReading(ctx context.Context, d scenarioDef, target string) (LedgerFigure, bool) {
	if env.cfg.Store == "" || d.name == "webhook-storm" || !slices.Contains(postgresScenarios(), d.name) || isClusterTarget(target) {
		return LedgerFigure{}, false
	}
	server := env.serverOf(d, target)
	a, ok := env.apis[server]
	if !ok {
		return LedgerFigure{}, false
	}
	m, err := a.metricsSum(ctx, seriesLedgerCommits, seriesLedgerRows, seriesLedgerCommitSum)
	if err != nil {
		env.printf("  (%s: no ledger figures: %v)\n", server, err)
		return LedgerFigure{}, false
	}
	return LedgerFigure{Commits: m[seriesLedgerCommits], Rows: m[seriesLedgerRows], CommitSec: m[seriesLedgerCommitSum]}, true
}

// fmtLedger is a ledger figure as the progress lines print it.
func fmtLedger(f *LedgerFigure) string {
	return fmt.Sprintf("ledger: %.0f commits, %.1f rows a commit, %s a commit", f.Commits, f.RowsPerCommit(), fmtUs(f.MeanCommit()))
}

// LiveFigure is what quote-live's run did besides its summary: the legs
// the live server's provider pools ran and refused (saturated), and the
// resident memory of the server and of the stand-ins at the end of the
// run, and the stand-ins' share of the cores over it.
type LiveFigure struct {
	Legs        float64 `json:"legs"`
	Refusals    float64 `json:"saturationRefusals"`
	ServerRSS   int64   `json:"serverRssBytes"`
	StandinsRSS int64   `json:"standinsRssBytes"`
	StandinsCPU float64 `json:"standinsCpu"`
	standinsCPU time.Duration
}

// BreakerFigure is what a server's leg breakers did during one run, read
// from its /metrics before and after: the breakers that opened, and the
// legs skipped (not sent, their breaker open) and sent.
type BreakerFigure struct {
	Opens   float64 `json:"opens"`
	Skipped float64 `json:"skippedLegs"`
	Legs    float64 `json:"legs"`
}

// WebhookFigure is what the receiver saw of a webhook-storm run.
type WebhookFigure struct {
	// Events is the test events Swapgate accepted in the measured part.
	Events int64 `json:"events"`
	// Deliveries and Failed are the attempts the receiver got in the
	// measured part, and those it answered 500.
	Deliveries int `json:"deliveries"`
	Failed     int `json:"failed"`
	// PerSec is Deliveries over the measured part's length.
	PerSec float64 `json:"deliveriesPerSec"`
	// Drained tells whether the retries had stopped within the drain
	// bound; DrainSec is how long that took after the run.
	Drained  bool    `json:"drained"`
	DrainSec float64 `json:"drainSec"`
}

// SearchRecord is one find-max search.
type SearchRecord struct {
	Scenario string        `json:"scenario"`
	Target   string        `json:"target"`
	Round    int           `json:"round"`
	StartSec float64       `json:"startSec"`
	EndSec   float64       `json:"endSec"`
	GenCPU   float64       `json:"generatorCpu"`
	Result   FindMaxResult `json:"result"`
	// Ledger is what the server's ledger committed over the search, as
	// for RunRecord.
	Ledger *LedgerFigure `json:"ledger,omitempty"`
}

// ServerInfo describes a process the suite started.
type ServerInfo struct {
	Name string   `json:"name"`
	PID  int      `json:"pid"`
	Addr string   `json:"addr"`
	Args []string `json:"args"`
	Log  string   `json:"log"`
}

// Machine is where the run happened; the load average says how busy the
// machine was with other work, which every figure depends on.
type Machine struct {
	Cores        int    `json:"cores"`
	GOOS         string `json:"goos"`
	GOARCH       string `json:"goarch"`
	GoVersion    string `json:"goVersion"`
	Kernel       string `json:"kernel,omitempty"`
	LoadAvgStart string `json:"loadAvgStart,omitempty"`
	LoadAvgEnd   string `json:"loadAvgEnd,omitempty"`
}

// Report is the run's results.json, and what the HTML report is drawn from.
type Report struct {
	Preset    string         `json:"preset"`
	Started   time.Time      `json:"started"`
	Finished  time.Time      `json:"finished"`
	Dir       string         `json:"dir"`
	Machine   Machine        `json:"machine"`
	Config    Config         `json:"config"`
	Scenarios []ScenarioInfo `json:"scenarios"`
	Servers   []ServerInfo   `json:"servers"`
	// Stalled lists the tools the slow-provider server stalls.
	Stalled []string `json:"stalledTools,omitempty"`
	Table   []Row    `json:"table"`
	Notes   []string `json:"notes"`
	// TableText is the table as printed.
	TableText string         `json:"tableText"`
	Runs      []RunRecord    `json:"runs"`
	Searches  []SearchRecord `json:"findMax,omitempty"`
	// Processes are the servers' CPU and memory over time, and the
	// generator's (this process).
	Processes []ProcSeries `json:"processes"`
	// DeliveriesPerSec counts receiver deliveries per second of the run.
	DeliveriesPerSec []int `json:"deliveriesPerSec,omitempty"`
}

// Run runs the suite as cfg says, printing progress and the table to out,
// and writes results.json, report.html and table.txt to a new folder under
// cfg.ResultsDir. Everything it starts, it stops, on every path.
func Run(ctx context.Context, cfg Config, out io.Writer) (*Report, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("bench suite: %w", err)
	}
	if cfg.Search.Start == 0 {
		cfg.Search.Start = cfg.Rate
	}
	if cfg.Store != "" {
		cfg.Postgres = true
		if !slices.Contains(cfg.FindMax, "all") && !slices.Contains(cfg.FindMax, postgresSearched) {
			cfg.FindMax = append(slices.Clone(cfg.FindMax), postgresSearched)
		}
	}
	clusterOnly := false // clusterSearched searched for the clusters alone
	if cfg.Cluster > 0 {
		if cfg.ClusterCores == 0 {
			cfg.ClusterCores = 1
		}
		if !slices.Contains(cfg.FindMax, "all") && !slices.Contains(cfg.FindMax, clusterSearched) {
			cfg.FindMax = append(slices.Clone(cfg.FindMax), clusterSearched)
			clusterOnly = true
		}
	}
	env := &environment{cfg: cfg, origin: time.Now(), out: out, cores: runtime.NumCPU(),
		children: map[string]*child{}, apis: map[string]*api{}, partners: map[string]partner{}, webhookIDs: map[string]string{},
		clusterNodes: map[string][]string{}, clusterStores: map[string]string{}, clusterOnlySearch: clusterOnly}
	env.dir = filepath.Join(cfg.ResultsDir, env.origin.UTC().Format("20060102-150405Z"))
	if err := os.MkdirAll(filepath.Join(env.dir, "logs"), 0o755); err != nil {
		return nil, fmt.Errorf("bench suite: %w", err)
	}
	tmp, err := os.MkdirTemp("", "swapgate-bench-")
	if err != nil {
		return nil, fmt.Errorf("bench suite: %w", err)
	}
	env.tmp = tmp
	defer os.RemoveAll(tmp)
	machine := Machine{Cores: env.cores, GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, GoVersion: runtime.Version(),
		Kernel: readTrim("/proc/sys/kernel/osrelease"), LoadAvgStart: readTrim("/proc/loadavg")}
	env.printf("bench suite (%s): results in %s; %d cores, load average %s\n", cfg.Preset, env.dir, env.cores, machine.LoadAvgStart)

	servers, procs, runErr := env.run(ctx)
	machine.LoadAvgEnd = readTrim("/proc/loadavg")
	rep := &Report{
		Preset: cfg.Preset, Started: env.origin, Finished: time.Now(), Dir: env.dir, Machine: machine, Config: cfg,
		Scenarios: env.selectedInfo(), Servers: servers, Stalled: env.stalled, Runs: env.runs, Searches: env.searches,
		Processes: procs, DeliveriesPerSec: env.deliveries.perSecond(env.origin),
	}
	if runErr != nil {
		rep.Notes = append(rep.Notes, "the run stopped early: "+runErr.Error())
	}
	rep.Table = env.rows()
	rep.Notes = append(rep.Notes, env.summaryNotes(rep.Table)...)
	var tb strings.Builder
	if err := WriteTable(&tb, rep.Table); err != nil {
		return rep, err
	}
	rep.TableText = tb.String()
	if err := writeReport(rep); err != nil {
		return rep, errors.Join(runErr, err)
	}
	env.printf("\n%s\n", rep.TableText)
	for _, n := range rep.Notes {
		env.printf("%s\n", n)
	}
	env.printf("\nwrote %s, %s and %s\n", filepath.Join(env.dir, "results.json"), filepath.Join(env.dir, "report.html"), filepath.Join(env.dir, "table.txt"))
	return rep, runErr
}

// run starts the servers, provisions them, runs the rounds and stops
// everything; it returns what it started and the samples even when it
// fails half way.
func (env *environment) run(ctx context.Context) (servers []ServerInfo, procs []ProcSeries, err error) {
	gen := StartSampler("generator", os.Getpid(), env.origin, env.cfg.SampleInterval)
	defer func() {
		procs = append(procs, gen.Stop())
		for _, s := range env.samplers {
			procs = append(procs, s.Stop())
		}
		// Stop every child at once: each drains for a moment, and waiting
		// for them in turn would add those moments up.
		names := append(processNames(), env.extraProcs...)
		stopped := make([]chan error, len(names))
		for i, name := range names {
			c, ok := env.children[name]
			if !ok {
				continue
			}
			servers = append(servers, ServerInfo{Name: name, PID: c.pid(), Addr: c.addr, Args: hideSecret(c.cmd.Args[1:]), Log: filepath.Join("logs", name+".log")})
			stopped[i] = make(chan error, 1)
			go func() { stopped[i] <- c.stop(20 * time.Second) }()
		}
		for i, name := range names {
			if stopped[i] == nil {
				continue
			}
			if serr := <-stopped[i]; serr != nil && err == nil && name != "receiver" {
				err = fmt.Errorf("stop %w (see logs/%s.log)", serr, name)
			}
		}
		env.stage("stopped every process\n")
		if env.dropClusterDBs != nil {
			env.dropClusterDBs()
		}
	}()
	if err := env.start(ctx); err != nil {
		return nil, nil, err
	}
	if err := env.provision(ctx); err != nil {
		return nil, nil, err
	}
	for round := 1; round <= env.cfg.Rounds; round++ {
		if err := env.round(ctx, round); err != nil {
			return nil, nil, err
		}
	}
	return nil, nil, nil
}

func (env *environment) printf(format string, args ...any) {
	fmt.Fprintf(env.out, format, args...)
}

// stage prints a line prefixed with the time since the suite started, so
// that a slow step (a start, the provisioning, a drain) shows.
func (env *environment) stage(format string, args ...any) {
	env.printf("[%6.1fs] "+format, append([]any{env.since()}, args...)...)
}

// selected lists the scenarios the config selects, ping always first.
func (env *environment) selected() []scenarioDef {
	var out []scenarioDef
	for _, d := range scenarioDefs() {
		if d.name == "ping" || (len(env.cfg.Scenarios) == 0 && !d.explicit) || slices.Contains(env.cfg.Scenarios, d.name) {
			out = append(out, d)
		}
	}
	return out
}

func (env *environment) selectedInfo() []ScenarioInfo {
	var out []ScenarioInfo
	for _, d := range env.selected() {
		out = append(out, ScenarioInfo{d.name, d.doc})
	}
	return out
}

func (env *environment) wants(name string) bool {
	return slices.ContainsFunc(env.selected(), func(d scenarioDef) bool { return d.name == name })
}

// searched tells whether find-max runs for d.
func (env *environment) searched(d scenarioDef) bool {
	return d.searchable && (slices.Contains(env.cfg.FindMax, "all") || slices.Contains(env.cfg.FindMax, d.name))
}

// start starts the receiver (its certificate must exist before the main
// server starts, which trusts it through SSL_CERT_FILE), then the bare
// server and the Swapgates together.
func (env *environment) start(ctx context.Context) error {
	log := func(name string) string { return filepath.Join(env.dir, "logs", name+".log") }
	limits := []string{"--anon-heavy-per-min", fmt.Sprint(unlimited), "--anon-read-per-min", fmt.Sprint(unlimited)}
	var mainEnv []string
	var mainArgs []string
	if env.wants("webhook-storm") {
		secret := make([]byte, 16)
		_, _ = rand.Read(secret)
		env.webhookSecret = "whsec_" + hex.EncodeToString(secret)
		cert := filepath.Join(env.tmp, "receiver.pem")
		rc, err := startChild(ctx, env.cfg.Binary, childSpec{
			name: "receiver", logPath: log("receiver"), env: childEnv(), addrOf: receiverAddr, onStdout: env.deliveries.add,
			args: []string{"webhook-receiver", "--addr", "127.0.0.1:0", "--secret", env.webhookSecret,
				"--cert-out", cert, "--fail-share", fmt.Sprint(env.cfg.WebhookFailShare)},
		}, env.cfg.StartTimeout)
		if err != nil {
			return err
		}
		env.children["receiver"] = rc
		mainEnv = append(mainEnv, "SSL_CERT_FILE="+cert)
		mainArgs = append(mainArgs, "--allow-loopback-webhooks", "--webhook-retry-base", env.cfg.WebhookRetryBase.String())
	}
	specs := []childSpec{
		{name: "bare", args: []string{"bench-bare", "--addr", "127.0.0.1:0"}, addrOf: jsonAddr("bench-bare serving")},
		{name: "main", args: append(append([]string{"serve", "--addr", "127.0.0.1:0", "--data", filepath.Join(env.tmp, "main")}, limits...), mainArgs...),
			env: mainEnv, addrOf: jsonAddr("swapgate serving")},
	}
	if env.onPostgres() {
		// The main server's twin on PostgreSQL: the same flags, its
		// store named in its environment (as an operator's
		// SWAPGATE_STORE), so that no URL shows in the report's
		// command lines.
		specs = append(specs, childSpec{name: serverPostgres, addrOf: jsonAddr("swapgate serving"),
			args: append(append([]string{"serve", "--addr", "127.0.0.1:0", "--data", filepath.Join(env.tmp, serverPostgres)}, limits...), mainArgs...),
			env:  append(slices.Clone(mainEnv), env.storeEnv(serverPostgres)...)})
	}
	if slow, breaker := env.wants("quote-slow-provider") || env.wants("quote-slow-provider-strategy"), env.wants("quote-slow-provider-breaker"); slow || breaker {
		stalled, err := providerTools(registry.ProviderAggregator)
		if err != nil {
			return err
		}
		env.stalled = stalled
		inject := map[string]map[string]int64{}
		for _, t := range stalled {
			inject[t] = map[string]int64{"latencyMs": env.cfg.StallLatency.Milliseconds()}
		}
		b, _ := json.Marshal(inject)
		stall := func(name string, extra ...string) childSpec {
			return childSpec{name: name, addrOf: jsonAddr("swapgate serving"),
				args: append(append([]string{"serve", "--addr", "127.0.0.1:0", "--data", filepath.Join(env.tmp, name),
					"--quote-deadline", env.cfg.QuoteDeadline.String(), "--sandbox-tools", string(b)}, limits...), extra...)}
		}
		if slow {
			specs = append(specs, stall(serverSlow, breakerShut()...))
		}
		if breaker {
			specs = append(specs, stall(serverSlowBreaker))
		}
	}
	if live, router := env.wants("quote-live") || env.wants("quote-live-one-call"), env.wants("quote-live-router"); live || router {
		spec, err := env.startStandins(ctx, log(processStandins), limits)
		if err != nil {
			return err
		}
		if live {
			specs = append(specs, spec)
		}
		if router {
			rs, err := env.routerSpec(ctx, spec)
			if err != nil {
				return err
			}
			specs = append(specs, rs)
		}
	}
	type started struct {
		c   *child
		err error
	}
	results := make([]chan started, len(specs))
	for i, spec := range specs {
		spec.logPath = log(spec.name)
		spec.env = childEnv(spec.env...)
		results[i] = make(chan started, 1)
		go func() {
			c, err := startChild(ctx, env.cfg.Binary, spec, env.cfg.StartTimeout)
			results[i] <- started{c, err}
		}()
	}
	var errs []error
	for i, spec := range specs {
		r := <-results[i]
		if r.err != nil {
			errs = append(errs, r.err)
			continue
		}
		env.children[spec.name] = r.c
		env.stage("started %-8s pid %-7d on %s\n", spec.name, r.c.pid(), r.c.addr)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if env.cfg.Cluster > 0 {
		if err := env.startClusters(ctx, append(slices.Clone(limits), mainArgs...), mainEnv); err != nil {
			return err
		}
	}
	for name, c := range env.children {
		// The suite loads loopback only, as loadgen does: a child that
		// reported anything else is refused before any request.
		if _, err := loadgen.ResolveTarget(ctx, net.DefaultResolver, "http://"+c.addr); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	for _, name := range append(processNames()[1:], env.extraProcs...) {
		if c, ok := env.children[name]; ok {
			env.apis[name] = newAPI("http://" + c.addr)
			env.samplers = append(env.samplers, StartSampler(name, c.pid(), env.origin, env.cfg.SampleInterval))
		}
	}
	for server, nodes := range env.clusterNodes {
		// A cluster is provisioned through its first node; any answers.
		env.apis[server] = env.apis[nodes[0]]
	}
	return nil
}

// The bench's stand-in for Swapgate's own sender contract. Its inbound
// receiver is the live server's operator account, as live mode requires
// (made with swapgate operator-key create before the server starts).
const benchSenderContract = "0x5ce0c2f6b6b33f36b17e4fd3dda2b1c16f0e3a01"

// startStandins starts the upstream stand-ins (swapgate standins) and
// returns the spec of the live server that quotes against them: both
// upstreams and the JSON-RPC nodes of pulseroute's chains configured, so
// that no provider of the mix falls back to the sandbox.
func (env *environment) startStandins(ctx context.Context, logPath string, limits []string) (childSpec, error) {
	sc, err := startChild(ctx, env.cfg.Binary, childSpec{name: processStandins, logPath: logPath, env: childEnv(),
		addrOf: jsonAddr("standins serving"),
		args:   []string{"standins", "--addr", "127.0.0.1:0", "--latency", env.cfg.LiveLatency.String()}}, env.cfg.StartTimeout)
	if err != nil {
		return childSpec{}, err
	}
	env.children[processStandins] = sc
	env.stage("started %-8s pid %-7d on %s (every upstream answering after %s)\n", processStandins, sc.pid(), sc.addr, env.cfg.LiveLatency)
	base := "http://" + sc.addr
	dataDir := filepath.Join(env.tmp, serverLive)
	operator, err := env.operatorAccount(ctx, dataDir)
	if err != nil {
		return childSpec{}, err
	}
	var rpcs, senders, receivers []string
	for _, id := range []string{"369", "1", "42161", "8453"} {
		rpcs = append(rpcs, id+"="+base+"/rpc/"+id)
		if id != "369" {
			// Swapgate's own pulseroute contracts on the source chains, which
			// live mode quotes only where configured; quoting reads none of
			// their state, so any address serves.
			senders = append(senders, id+"="+benchSenderContract)
			receivers = append(receivers, id+"="+operator)
		}
	}
	return childSpec{name: serverLive, addrOf: jsonAddr("swapgate serving"),
		args: append([]string{"serve", "--mode", "live", "--addr", "127.0.0.1:0", "--data", dataDir,
			"--aggregator-url", base + "/lifi", "--intents-url", base + "/oneclick", "--pulse-rpc", strings.Join(rpcs, ","),
			"--pulse-sender-contract", strings.Join(senders, ","), "--pulse-inbound-receiver", strings.Join(receivers, ",")}, limits...)}, nil
}

// operatorAccount makes the operator account of a live server's data
// directory (swapgate operator-key create) and returns its address, which
// live mode requires as the inbound receiver.
func (env *environment) operatorAccount(ctx context.Context, dataDir string) (string, error) {
	out, err := cli(ctx, env.cfg.Binary, nil, "operator-key", "create", "--data", dataDir)
	if err != nil {
		return "", err
	}
	var operator struct {
		Address string `json:"address"`
	}
	if err := json.Unmarshal(out, &operator); err != nil || operator.Address == "" {
		return "", fmt.Errorf("operator-key create: unexpected output %q (%v)", out, err)
	}
	return operator.Address, nil
}

// routerSpec is the live server's spec as serverLiveRouter: its own data
// and operator account (its inbound receivers), and the chain-369 leg
// priced by the router (--pulse-reserves-max-age 0).
func (env *environment) routerSpec(ctx context.Context, live childSpec) (childSpec, error) {
	s := live
	s.name = serverLiveRouter
	s.args = slices.Clone(live.args)
	dataDir := filepath.Join(env.tmp, serverLiveRouter)
	operator, err := env.operatorAccount(ctx, dataDir)
	if err != nil {
		return childSpec{}, err
	}
	for i := 0; i+1 < len(s.args); i++ {
		switch s.args[i] {
		case "--data":
			s.args[i+1] = dataDir
		case "--pulse-inbound-receiver":
			receivers := strings.Split(s.args[i+1], ",")
			for k, r := range receivers {
				id, _, _ := strings.Cut(r, "=")
				receivers[k] = id + "=" + operator
			}
			s.args[i+1] = strings.Join(receivers, ",")
		}
	}
	s.args = append(s.args, "--pulse-reserves-max-age", "0")
	return s, nil
}

// providerTools lists the sandbox tools of a provider from the catalog, so
// that the stall follows the catalog if tools are added.
func providerTools(provider string) ([]string, error) {
	reg, err := registry.Load()
	if err != nil {
		return nil, err
	}
	cat, err := tools.Load(reg)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, t := range cat.All() {
		if t.Provider == provider {
			out = append(out, t.Key)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no sandbox tool of provider %q", provider)
	}
	return out, nil
}

// provision creates the partners through the CLI, registers fee wallets
// and the webhook over HTTP, makes the swaps the status polls follow, and
// checks every distinct request of every scenario once.
func (env *environment) provision(ctx context.Context) error {
	if err := env.createPartners(ctx); err != nil {
		return err
	}
	for _, server := range env.mainServers() {
		a := env.apis[server]
		if err := registerFeeWallets(ctx, a, env.partnerOf(server, keyFee).APIKey); err != nil {
			return fmt.Errorf("%s: %w", server, err)
		}
		if rc, ok := env.children["receiver"]; ok {
			id, err := createWebhook(ctx, a, env.partnerOf(server, keyHooks).APIKey, "https://"+rc.addr+"/hook", env.webhookSecret)
			if err != nil {
				return fmt.Errorf("%s: %w", server, err)
			}
			env.webhookIDs[server] = id
		}
	}
	main := env.apis[serverMain]
	if env.wants("mixed") {
		hashes, err := makeSwaps(ctx, main, env.partners[keyZero].APIKey, env.cfg.StatusSwaps)
		if err != nil {
			return fmt.Errorf("swaps for the status polls: %w", err)
		}
		env.txHashes = hashes
	}
	for _, d := range env.selected() {
		if d.tx {
			continue
		}
		for _, t := range env.targetsOf(d) {
			server := env.serverOf(d, t)
			_, method, paths, err := d.build(env, server)
			if err != nil {
				return err
			}
			check := preflight
			if d.stream {
				check = preflightStreams
			}
			if err := check(ctx, env.apis[server], env.key(d, t), method, paths); err != nil {
				return fmt.Errorf("%s@%s: %w", d.name, t, err)
			}
		}
	}
	if rc := env.children["receiver"]; rc != nil {
		// The checks' test events must have arrived, and their retries
		// (if the receiver failed them) ended, before anything is
		// measured.
		if !env.deliveries.waitFor(ctx, len(env.webhookIDs), env.cfg.WebhookDrain) {
			return fmt.Errorf("webhook-storm: the receiver got no delivery of the test event within %s (see logs/main.log)", env.cfg.WebhookDrain)
		}
		env.deliveries.waitQuiet(ctx, time.Second, env.cfg.WebhookDrain)
	}
	env.stage("provisioned: partners with 0 and 30 bps, fee wallets, webhook %s, %d swaps for the status polls; every request checked\n",
		env.webhookIDs[serverMain], len(env.txHashes))
	return nil
}

// createPartners creates the partners of both Swapgates through the CLI,
// the partners side by side (each one's three commands in order), since
// every command is a process start.
func (env *environment) createPartners(ctx context.Context) error {
	type want struct {
		role, server string
		fee          int
	}
	var wants []want
	for _, server := range env.mainServers() {
		prefix := ""
		if server != serverMain {
			prefix = server + "-"
		}
		wants = append(wants, want{prefix + keyZero, server, 0}, want{prefix + keyFee, server, 30}, want{prefix + keyHooks, server, 0})
	}
	for _, name := range []string{serverSlow, serverSlowBreaker, serverLive, serverLiveRouter} {
		if _, ok := env.children[name]; ok {
			wants = append(wants, want{name + "-" + keyZero, name, 0})
		}
	}
	type made struct {
		p   partner
		err error
	}
	results := make([]chan made, len(wants))
	for i, w := range wants {
		results[i] = make(chan made, 1)
		go func() {
			p, err := createPartner(ctx, env.cfg.Binary, env.storeEnv(w.server), env.dataDir(w.server), "bench-"+w.role, w.fee)
			results[i] <- made{p, err}
		}()
	}
	var errs []error
	for i, w := range wants {
		m := <-results[i]
		errs = append(errs, m.err)
		env.partners[w.role] = m.p
	}
	return errors.Join(errs...)
}

// key is the API key scenario d sends to target.
func (env *environment) key(d scenarioDef, target string) string {
	if d.key == keyNone {
		return ""
	}
	return env.partnerOf(env.serverOf(d, target), d.key).APIKey
}

// partnerOf is the partner of role on server.
func (env *environment) partnerOf(server, role string) partner {
	if server != serverMain {
		return env.partners[server+"-"+role]
	}
	return env.partners[role]
}

// onPostgres tells whether the run has a PostgreSQL store and runs a
// scenario on it.
func (env *environment) onPostgres() bool {
	return env.cfg.Store != "" && slices.ContainsFunc(postgresScenarios(), env.wants)
}

// mainServers are main, its twin on PostgreSQL where it runs, and the
// clusters.
func (env *environment) mainServers() []string {
	out := []string{serverMain}
	if env.onPostgres() {
		out = append(out, serverPostgres)
	}
	for k := 1; k <= env.cfg.Cluster; k++ {
		out = append(out, clusterTargetName(k))
	}
	return out
}

// dataDir is the data directory of server's process, where the partner
// CLI finds its secrets.key (and the server's admin listener): a
// cluster's first node's.
func (env *environment) dataDir(server string) string {
	if nodes, ok := env.clusterNodes[server]; ok {
		return filepath.Join(env.tmp, nodes[0])
	}
	return filepath.Join(env.tmp, server)
}

// storeEnv is the extra environment of server's processes and of the CLI
// run against it: the PostgreSQL store of serverPostgres.
func (env *environment) storeEnv(server string) []string {
	if dsn, ok := env.clusterStores[server]; ok {
		return []string{"SWAPGATE_STORE=" + dsn}
	}
	if server != serverPostgres {
		return nil
	}
	return []string{"SWAPGATE_STORE=" + env.cfg.Store}
}

// targetsOf lists the Swapgate targets d runs against: Swapgate, and
// Swapgate on PostgreSQL where it runs d.
func (env *environment) targetsOf(d scenarioDef) []string {
	out := []string{targetSwapgate}
	if env.onPostgres() && slices.Contains(postgresScenarios(), d.name) {
		out = append(out, targetPostgres)
	}
	if slices.Contains(clusterScenarios(), d.name) {
		for k := 1; k <= env.cfg.Cluster; k++ {
			out = append(out, clusterTargetName(k))
		}
	}
	return out
}

// serverOf is the server d's requests go to on target.
func (env *environment) serverOf(d scenarioDef, target string) string {
	switch target {
	case targetBare:
		return "bare"
	case targetPostgres:
		return serverPostgres
	}
	if isClusterTarget(target) {
		return target
	}
	return d.server
}

// round runs every selected scenario once, then the searches. The bare and
// Swapgate pings swap order every round, so that neither always runs on a
// machine the other just warmed or tired.
func (env *environment) round(ctx context.Context, round int) error {
	targets := []string{targetBare, targetSwapgate}
	if round%2 == 0 {
		slices.Reverse(targets)
	}
	for _, d := range env.selected() {
		if d.vsBare {
			for _, t := range append(slices.Clone(targets), env.clusterTargetsOf(d)...) {
				if err := env.fixedRun(ctx, d, t, round); err != nil {
					return err
				}
			}
			continue
		}
		for _, t := range env.targetsOf(d) {
			if err := env.fixedRun(ctx, d, t, round); err != nil {
				return err
			}
		}
	}
	for _, d := range env.selected() {
		if !env.searched(d) {
			continue
		}
		ts := env.targetsOf(d)
		if d.vsBare {
			ts = targets
		}
		if d.name == clusterSearched && env.clusterOnlySearch {
			ts = slices.DeleteFunc(slices.Clone(ts), func(t string) bool { return !isClusterTarget(t) })
		}
		for _, t := range ts {
			if err := env.search(ctx, d, t, round); err != nil {
				return err
			}
		}
	}
	return nil
}

// loadConfig is the loadgen configuration of d against target, without
// rate or durations.
func (env *environment) loadConfig(d scenarioDef, target string) (loadgen.Config, error) {
	server := env.serverOf(d, target)
	sc, _, _, err := d.build(env, server)
	if err != nil {
		return loadgen.Config{}, err
	}
	procs := []string{server}
	if nodes, ok := env.clusterNodes[server]; ok {
		procs = nodes
	}
	var urls []string
	for _, name := range procs {
		c, ok := env.children[name]
		if !ok || !c.alive() {
			return loadgen.Config{}, fmt.Errorf("%s: the %s server is not running (see logs/%s.log)", d.name, name, name)
		}
		urls = append(urls, "http://"+c.addr)
	}
	return loadgen.Config{BaseURL: urls[0], SpreadURLs: urls[1:], Scenario: sc, Workers: env.cfg.Workers, APIKey: env.key(d, target),
		Timeout: env.cfg.Timeout, Interval: env.cfg.Interval, MaxRequests: math.MaxInt64}, nil
}

// Series of a Swapgate's /metrics that say what its leg breakers did.
const (
	seriesBreakerOpens = "swapgate_quote_leg_breaker_opens_total"
	seriesLegsSkipped  = "swapgate_quote_leg_skipped_total"
	seriesLegsAnswered = "swapgate_quote_leg_seconds_count"
)

// breakerReading reads the leg breakers' counters of d's server when it
// is one of the stalled ones; ok is false for the others, and when its
// /metrics cannot be read.
func (env *environment) breakerReading(ctx context.Context, d scenarioDef) (BreakerFigure, bool) {
	if d.server != serverSlow && d.server != serverSlowBreaker {
		return BreakerFigure{}, false
	}
	a, ok := env.apis[d.server]
	if !ok {
		return BreakerFigure{}, false
	}
	m, err := a.metricsSum(ctx, seriesBreakerOpens, seriesLegsSkipped, seriesLegsAnswered)
	if err != nil {
		env.printf("  (%s: no breaker figures: %v)\n", d.server, err)
		return BreakerFigure{}, false
	}
	return BreakerFigure{Opens: m[seriesBreakerOpens], Skipped: m[seriesLegsSkipped],
		Legs: m[seriesLegsAnswered] + m[seriesLegsSkipped]}, true
}

// Series of the live server's /metrics that quote-live reports.
const seriesPoolRefusals = "swapgate_provider_pool_saturation_refusals_total"

// liveReading reads the live server's legs and pool refusals and the
// memory of it and the stand-ins, for quote-live; ok is false for other
// scenarios and when the figures cannot be read.
func (env *environment) liveReading(ctx context.Context, d scenarioDef) (LiveFigure, bool) {
	if d.server != serverLive && d.server != serverLiveRouter {
		return LiveFigure{}, false
	}
	a, okA := env.apis[d.server]
	sc, okS := env.children[processStandins]
	if !okA || !okS {
		return LiveFigure{}, false
	}
	m, err := a.metricsSum(ctx, seriesPoolRefusals, seriesLegsAnswered)
	if err != nil {
		env.printf("  (%s: no pool figures: %v)\n", d.server, err)
		return LiveFigure{}, false
	}
	f := LiveFigure{Refusals: m[seriesPoolRefusals], Legs: m[seriesLegsAnswered]}
	f.ServerRSS, _ = ProcRSS(env.children[d.server].pid())
	f.StandinsRSS, _ = ProcRSS(sc.pid())
	f.standinsCPU, _ = ProcCPU(sc.pid())
	return f, true
}

// pids are the processes a target of d runs in: its server, or a
// cluster's nodes.
func (env *environment) pids(d scenarioDef, target string) []int {
	server := env.serverOf(d, target)
	if nodes, ok := env.clusterNodes[server]; ok {
		var out []int
		for _, name := range nodes {
			out = append(out, env.children[name].pid())
		}
		return out
	}
	return []int{env.children[server].pid()}
}

func (env *environment) since() float64 { return time.Since(env.origin).Seconds() }

// progress prints one interval line: what runs, the rate, errors, p50, p99.
func (env *environment) progress(label string, l loadgen.Line) {
	warm := ""
	if l.Warmup {
		warm = "  (warm-up)"
	}
	env.printf("  %-40s %6.1fs  rate %8s/s  err %-5d p50 %-8s p99 %-8s%s\n", label, l.ElapsedSec, fmtRate(l.RPS), l.Errors,
		fmtUs(float64(l.Latency.P50)), fmtUs(float64(l.Latency.P99)), warm)
}

// fixedRun runs d against target at the fixed rate (webhook-storm: at its
// event rate) and records it.
func (env *environment) fixedRun(ctx context.Context, d scenarioDef, target string, round int) error {
	if d.tx {
		return env.txRun(ctx, d, target, round)
	}
	lc, err := env.loadConfig(d, target)
	if err != nil {
		return err
	}
	rate := env.cfg.Rate
	switch d.name {
	case "webhook-storm":
		rate = env.cfg.WebhookRate
	}
	if d.server == serverLive || d.server == serverLiveRouter {
		rate, lc.Workers = env.cfg.LiveRate, env.cfg.LiveWorkers
	}
	label := fmt.Sprintf("r%d %s@%s %s/s", round, d.name, target, fmtRate(rate))
	env.stage("%s\n", label)
	rec := RunRecord{Scenario: d.name, Target: target, Round: round, Offered: rate}
	lc.Rate, lc.Arrival = rate, loadgen.ArrivalFixed
	lc.Warmup, lc.Duration = env.cfg.Warmup, env.cfg.Warmup+env.cfg.Measure
	if d.server == serverLive || d.server == serverLiveRouter {
		// A live server meets its upstreams cold: at the full rate at
		// once, its first second's legs run past their deadlines and open
		// the breakers, which then refuse a share of the measured part
		// for reasons the steady state does not have. The warm-up ramps
		// up to the rate instead, as traffic reaches a new node.
		lc.RampUp = lc.Warmup
	}
	lc.OnInterval = func(l loadgen.Line) {
		rec.Timeline = append(rec.Timeline, l)
		env.progress(label, l)
	}
	pids := env.pids(d, target)
	breaker0, watchBreakers := env.breakerReading(ctx, d)
	live0, watchLive := env.liveReading(ctx, d)
	ledger0, watchLedger := env.ledgerReading(ctx, d, target)
	srv0 := procsCPU(pids)
	gen0, _ := SelfCPU()
	start := time.Now()
	rec.StartSec = env.since()
	var sum *loadgen.Summary
	if d.stream {
		sum, rec.Stream, err = runStreams(ctx, streamLoad{base: lc.BaseURL, key: lc.APIKey, paths: lc.Scenario.(*loadgen.QuoteScenario).Paths(),
			rate: rate, warmup: lc.Warmup, duration: lc.Duration, workers: lc.Workers, timeout: lc.Timeout, interval: lc.Interval}, lc.OnInterval)
	} else {
		sum, err = loadgen.Run(ctx, lc, io.Discard)
	}
	if sum == nil {
		return fmt.Errorf("%s: %w", label, err)
	}
	wall := time.Since(start)
	rec.EndSec = env.since()
	srv1 := procsCPU(pids)
	gen1, _ := SelfCPU()
	rec.Summary = sum
	rec.GenCPU = CPUShare(gen1-gen0, wall, env.cores)
	rec.ServerCPU = CPUShare(srv1-srv0, wall, env.cores)
	if watchBreakers {
		if b1, ok := env.breakerReading(ctx, d); ok {
			rec.Breaker = &BreakerFigure{Opens: b1.Opens - breaker0.Opens, Skipped: b1.Skipped - breaker0.Skipped, Legs: b1.Legs - breaker0.Legs}
			env.printf("  %-40s leg breakers: %.0f opened, %.0f of %.0f legs skipped\n", label, rec.Breaker.Opens, rec.Breaker.Skipped, rec.Breaker.Legs)
		}
	}
	if watchLedger {
		if l1, ok := env.ledgerReading(ctx, d, target); ok {
			rec.Ledger = l1.minus(ledger0)
			env.printf("  %-40s %s\n", label, fmtLedger(rec.Ledger))
		}
	}
	if watchLive {
		if l1, ok := env.liveReading(ctx, d); ok {
			rec.Live = &LiveFigure{Refusals: l1.Refusals - live0.Refusals, Legs: l1.Legs - live0.Legs,
				ServerRSS: l1.ServerRSS, StandinsRSS: l1.StandinsRSS,
				StandinsCPU: CPUShare(l1.standinsCPU-live0.standinsCPU, wall, env.cores)}
			env.printf("  %-40s %.0f legs, %.0f pool saturation refusals; resident memory: server %s, stand-ins %s; stand-ins CPU %s\n", label,
				rec.Live.Legs, rec.Live.Refusals, fmtBytes(rec.Live.ServerRSS), fmtBytes(rec.Live.StandinsRSS), fmt.Sprintf("%.1f%%", 100*rec.Live.StandinsCPU))
		}
	}
	if f := rec.Stream; f != nil {
		env.printf("  %-40s first route event %s after the request (its leg: %s into the race): gap p50 %s, p99 %s\n", label,
			fmtUs(float64(f.FirstRoute.P50)), fmtUs(float64(f.FirstLeg.P50)), fmtUs(float64(f.Gap.P50)), fmtUs(float64(f.Gap.P99)))
	}
	if d.name == "webhook-storm" {
		measuredFrom := start.Add(env.cfg.Warmup)
		end := time.Now()
		drainStart := time.Now()
		drained := env.deliveries.waitQuiet(ctx, time.Second, env.cfg.WebhookDrain)
		n, failed := env.deliveries.count(measuredFrom, end)
		rec.Webhook = &WebhookFigure{Events: sum.Class["2xx"], Deliveries: n, Failed: failed,
			PerSec: float64(n) / end.Sub(measuredFrom).Seconds(), Drained: drained,
			DrainSec: max(0, time.Since(drainStart).Seconds()-1)}
		env.printf("  %-40s receiver: %d deliveries (%.1f/s, %d answered 500), retries drained: %v\n", label, n, rec.Webhook.PerSec, failed, drained)
	}
	env.runs = append(env.runs, rec)
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("%s: %w", label, err)
	}
	return ctx.Err()
}

// search runs find-max for d against target, starting from the previous
// round's result when there is one, so that later rounds spend their steps
// near the limit.
func (env *environment) search(ctx context.Context, d scenarioDef, target string, round int) error {
	lc, err := env.loadConfig(d, target)
	if err != nil {
		return err
	}
	cfg := env.cfg.Search
	if d.name == "quote-slow-provider" {
		// Its answers wait for the deadline by design: the bound is the
		// deadline plus the usual allowance.
		cfg.P99Bound += env.cfg.QuoteDeadline
	}
	for i := len(env.searches) - 1; i >= 0; i-- {
		s := env.searches[i]
		if s.Scenario == d.name && s.Target == target && s.Result.MaxRate > 0 && !s.Result.Capped {
			cfg.Start = math.Max(cfg.MinRate, math.Min(cfg.MaxRate, math.Round(s.Result.MaxRate*0.7)))
			break
		}
	}
	label := fmt.Sprintf("r%d find-max %s@%s", round, d.name, target)
	env.stage("%s (p99 bound %s)\n", label, cfg.P99Bound)
	probe := LoadProbe(lc, env.cfg.StepWarmup, env.cfg.StepMeasure, env.pids(d, target), func(rate float64, l loadgen.Line) {
		env.progress(fmt.Sprintf("%s step %s/s", label, fmtRate(rate)), l)
	})
	rec := SearchRecord{Scenario: d.name, Target: target, Round: round, StartSec: env.since()}
	ledger0, watchLedger := env.ledgerReading(ctx, d, target)
	gen0, _ := SelfCPU()
	start := time.Now()
	res, err := FindMax(ctx, cfg, probe)
	gen1, _ := SelfCPU()
	if watchLedger {
		if l1, ok := env.ledgerReading(ctx, d, target); ok {
			rec.Ledger = l1.minus(ledger0)
			env.printf("  %-40s %s\n", label, fmtLedger(rec.Ledger))
		}
	}
	rec.EndSec, rec.Result = env.since(), res
	rec.GenCPU = CPUShare(gen1-gen0, time.Since(start), env.cores)
	env.searches = append(env.searches, rec)
	if err != nil {
		return fmt.Errorf("%s: %w", label, err)
	}
	capped := ""
	if res.Capped {
		capped = " (the ceiling: the limit is higher)"
	}
	at := ""
	if res.AtMax != nil {
		at = fmt.Sprintf(" (there the generator used %s and the server %s of the cores)", fmtShare(one(res.AtMax.GenCPU)), fmtShare(one(res.AtMax.ServerCPU)))
	}
	env.printf("  %s: %s/s sustained%s after %d steps%s\n", label, fmtRate(res.MaxRate), capped, len(res.Steps), at)
	return nil
}

// rows aggregates the runs into the table: per scenario and target, the
// median and range of each figure over the rounds, and of its per-round
// ratio to the bare ping.
func (env *environment) rows() []Row {
	bareRPS, bareP50, bareP99 := map[int]float64{}, map[int]float64{}, map[int]float64{}
	bareMax := map[int]float64{}
	bareOffered := 0.0
	for _, r := range env.runs {
		if r.Scenario == "ping" && r.Target == targetBare {
			bareRPS[r.Round], bareP50[r.Round], bareP99[r.Round] = r.Summary.RPS, float64(r.Summary.Latency.P50), float64(r.Summary.Latency.P99)
			bareOffered = r.Offered
		}
	}
	for _, s := range env.searches {
		if s.Scenario == "ping" && s.Target == targetBare {
			bareMax[s.Round] = s.Result.MaxRate
		}
	}
	var rows []Row
	for _, d := range env.selected() {
		targets := env.targetsOf(d)
		if d.vsBare {
			targets = append([]string{targetBare, targetSwapgate}, env.clusterTargetsOf(d)...)
		}
		for _, t := range targets {
			row := Row{Scenario: d.name, Target: t}
			if env.cfg.Store != "" && t != targetBare {
				row.Backend = "pebble"
				if t == targetPostgres || isClusterTarget(t) {
					row.Backend = "postgres"
				}
			}
			rps, p50, p99 := map[int]float64{}, map[int]float64{}, map[int]float64{}
			var gen, srv []float64
			for _, r := range env.runs {
				if r.Scenario != d.name || r.Target != t {
					continue
				}
				row.Offered = r.Offered
				rps[r.Round], p50[r.Round], p99[r.Round] = r.Summary.RPS, float64(r.Summary.Latency.P50), float64(r.Summary.Latency.P99)
				row.Errors += r.Summary.Errors
				row.Requests += r.Summary.Requests
				gen, srv = append(gen, r.GenCPU), append(srv, r.ServerCPU)
			}
			if len(rps) == 0 {
				continue
			}
			row.RPS = Figure{Value: SpreadOf(valuesOf(rps))}
			row.P50 = Figure{Value: SpreadOf(valuesOf(p50))}
			row.P99 = Figure{Value: SpreadOf(valuesOf(p99))}
			// Ratios compare equal loads only: webhook-storm offers its own
			// event rate, which the bare ping was not measured at.
			if row.Offered == bareOffered {
				row.RPS.Ratio = SpreadOf(Ratios(rps, bareRPS))
				row.P50.Ratio = SpreadOf(Ratios(p50, bareP50))
				row.P99.Ratio = SpreadOf(Ratios(p99, bareP99))
			}
			row.GenCPU, row.ServerCPU = SpreadOf(gen), SpreadOf(srv)
			maxes := map[int]float64{}
			for _, s := range env.searches {
				if s.Scenario == d.name && s.Target == t {
					maxes[s.Round] = s.Result.MaxRate
				}
			}
			if len(maxes) > 0 {
				row.MaxRate = &Figure{SpreadOf(valuesOf(maxes)), SpreadOf(Ratios(maxes, bareMax))}
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// summaryNotes are the lines printed under the table: how it was measured,
// and the figures that are not ratios (the slow provider's p99 against its
// deadline, the webhook deliveries).
func (env *environment) summaryNotes(rows []Row) []string {
	c := env.cfg
	notes := []string{fmt.Sprintf("Each figure: median over %d round(s) of open-loop runs at %s/s offered (fixed arrivals, latency from the intended send time), %s warm-up excluded, %s measured; ×bare: median (min–max) of per-round ratios to the bare server's ping at the same rate in the same round. CPU: share of all %d cores (generator: getrusage of this process; server: /proc).",
		c.Rounds, fmtRate(c.Rate), c.Warmup, c.Measure, env.cores)}
	if len(c.FindMax) > 0 {
		notes = append(notes, fmt.Sprintf("max/s: highest offered rate with no error, p99 within %s and at least %.0f%% of it completed (find-max: ×%g steps of %s + %s warm-up, %d bisections); ×bare: per-round ratio to the bare ping's.",
			c.Search.P99Bound, 100*max(c.Search.MinAchieved, 0.95), c.Search.Factor, c.StepMeasure, c.StepWarmup, c.Search.Refine))
	}
	// The floor every latency target stands on: the bare server's ping,
	// the same open loop on the same machine, answering at once.
	floor := ""
	for _, r := range rows {
		if r.Scenario == "ping" && r.Target == targetBare {
			floor = fmt.Sprintf(" (the bare server's ping, this machine's floor: p50 %s, p99 %s)", fmtMs(r.P50.Value.Median), fmtMs(r.P99.Value.Median))
		}
	}
	if c.Store != "" {
		notes = append(notes, env.postgresNotes()...)
	}
	if c.Cluster > 0 {
		notes = append(notes, env.clusterNotes()...)
	}
	for _, r := range rows {
		if r.MaxRate != nil {
			var gen, srv []float64
			for _, s := range env.searches {
				if s.Scenario == r.Scenario && s.Target == r.Target && s.Result.AtMax != nil {
					gen, srv = append(gen, s.Result.AtMax.GenCPU), append(srv, s.Result.AtMax.ServerCPU)
				}
			}
			if len(gen) > 0 {
				notes = append(notes, fmt.Sprintf("max/s %s@%s: %s/s (rounds %s–%s); at it the generator used %s and the server %s of the %d cores%s.",
					r.Scenario, r.Target, fmtRate(r.MaxRate.Value.Median), fmtRate(r.MaxRate.Value.Min), fmtRate(r.MaxRate.Value.Max),
					fmtShare(SpreadOf(gen)), fmtShare(SpreadOf(srv)), env.cores, machineBound(SpreadOf(gen).Median, SpreadOf(srv).Median)))
			}
		}
		switch r.Scenario {
		case "quote-slow-provider":
			opens, _, _ := env.breakerTotals(r.Scenario)
			notes = append(notes, fmt.Sprintf("quote-slow-provider: p99 %s against --quote-deadline %s + 2 ms: %s (×%.2f of the deadline); p50 %s%s. Stalled for %s: %s; breakers off (%.0f openings).",
				fmtMs(r.P99.Value.Median), c.QuoteDeadline, verdict(r.P99.Value.Median, float64((c.QuoteDeadline+2*time.Millisecond).Microseconds())),
				r.P99.Value.Median/float64(c.QuoteDeadline.Microseconds()),
				fmtMs(r.P50.Value.Median), floor, c.StallLatency, strings.Join(env.stalled, ", "), opens))
			if r.MaxRate != nil {
				notes = append(notes, fmt.Sprintf("quote-slow-provider's max/s cannot exceed %s/s: %d connections each waiting about the deadline.",
					fmtRate(float64(c.Workers)/c.QuoteDeadline.Seconds()), c.Workers))
			}
		case "quote-slow-provider-breaker":
			ref := rowOf(rows, "quote-evm-solana")
			if ref == nil {
				notes = append(notes, fmt.Sprintf("quote-slow-provider-breaker: p99 %s; run quote-evm-solana beside it for its reference.", fmtUs(r.P99.Value.Median)))
				break
			}
			opens, skipped, legs := env.breakerTotals(r.Scenario)
			notes = append(notes, fmt.Sprintf("quote-slow-provider-breaker: p99 %s against quote-evm-solana's %s (the same pairs, nothing stalled) + 2 ms: %s; p50 %s. Its breakers skipped %.0f of %.0f legs (%.0f openings).",
				fmtMs(r.P99.Value.Median), fmtMs(ref.P99.Value.Median), verdict(r.P99.Value.Median, ref.P99.Value.Median+2000),
				fmtMs(r.P50.Value.Median), skipped, legs, opens))
		case "quote-live", "quote-live-one-call", "quote-live-router":
			var refusals, legs float64
			var srvRSS, stRSS int64
			var stCPU []float64
			for _, run := range env.runs {
				if run.Scenario == r.Scenario && run.Live != nil {
					refusals, legs = refusals+run.Live.Refusals, legs+run.Live.Legs
					srvRSS, stRSS = max(srvRSS, run.Live.ServerRSS), max(stRSS, run.Live.StandinsRSS)
					stCPU = append(stCPU, run.Live.StandinsCPU)
				}
			}
			// Every quote waits for one upstream answer, the chain-369 leg
			// priced from the PulseX reserves: p99 within 1.3 × the
			// latency. Priced by the router (quote-live-router), a
			// multi-step quote waits for two in turn.
			bound, against := c.LiveLatency*13/10, fmt.Sprintf("1.3 × %s", c.LiveLatency)
			switch r.Scenario {
			case "quote-live-one-call":
				bound, against = c.LiveLatency+50*time.Millisecond, fmt.Sprintf("%s + 50 ms", c.LiveLatency)
			case "quote-live-router":
				bound, against = 2*c.LiveLatency+50*time.Millisecond, fmt.Sprintf("2 × %s + 50 ms", c.LiveLatency)
			}
			notes = append(notes, fmt.Sprintf("%s (live mode, every upstream stand-in answering after %s, offered %s/s): served %s/s, %s errors, p50 %s, p99 %s (against %s: %s); %.0f legs, %.0f pool saturation refusals; resident memory at the end of a run: server %s, stand-ins %s; CPU: server %s, stand-ins %s, generator %s of the %d cores shared by all three.",
				r.Scenario, c.LiveLatency, fmtRate(c.LiveRate), fmtRate(r.RPS.Value.Median), fmtErrors(r.Errors, r.Requests), fmtMs(r.P50.Value.Median), fmtMs(r.P99.Value.Median),
				against, verdict(r.P99.Value.Median, float64(bound.Microseconds())), legs, refusals,
				fmtBytes(srvRSS), fmtBytes(stRSS), fmtShare(r.ServerCPU), fmtShare(SpreadOf(stCPU)), fmtShare(r.GenCPU), env.cores))
		case "quote-slow-provider-strategy":
			notes = append(notes, fmt.Sprintf("quote-slow-provider-strategy (minWaitMs=%d&expectedResults=1): p99 %s against minWaitMs + 2 ms: %s; p50 %s%s.",
				c.StrategyMinWait.Milliseconds(), fmtMs(r.P99.Value.Median), verdict(r.P99.Value.Median, float64((c.StrategyMinWait+2*time.Millisecond).Microseconds())),
				fmtMs(r.P50.Value.Median), floor))
		case "quote-stream":
			var first, leg, gap50, gap99, routes []float64
			for _, run := range env.runs {
				if f := run.Stream; f != nil && run.Scenario == r.Scenario && f.Streams > 0 {
					first, leg = append(first, float64(f.FirstRoute.P50)), append(leg, float64(f.FirstLeg.P50))
					gap50, gap99 = append(gap50, float64(f.Gap.P50)), append(gap99, float64(f.Gap.P99))
					routes = append(routes, f.RoutesPerStream)
				}
			}
			if len(first) == 0 {
				break
			}
			notes = append(notes, fmt.Sprintf("quote-stream: the first route event %s after the request was written, its leg %s into the race: the stream adds p50 %s (target 1 ms: %s), p99 %s; %.1f routes a stream; the table's latency is to the done event.",
				fmtUs(SpreadOf(first).Median), fmtUs(SpreadOf(leg).Median), fmtUs(SpreadOf(gap50).Median), verdict(SpreadOf(gap50).Median, 1000),
				fmtUs(SpreadOf(gap99).Median), SpreadOf(routes).Median))
		case "tx-throughput":
			if note, ok := env.txNote(r.Target); ok {
				notes = append(notes, note)
			}
		case "webhook-storm":
			var per, events []float64
			var n, failed int
			drained := true
			for _, run := range env.runs {
				if run.Webhook != nil && run.Target == r.Target {
					per = append(per, run.Webhook.PerSec)
					events = append(events, float64(run.Webhook.Events)/max(run.Summary.ElapsedSec, 1e-9))
					n += run.Webhook.Deliveries
					failed += run.Webhook.Failed
					drained = drained && run.Webhook.Drained
				}
			}
			name := r.Scenario
			if c.Store != "" {
				name += "@" + r.Target
			}
			notes = append(notes, fmt.Sprintf("%s: %s test events/s accepted, %s deliveries/s at the receiver including retries (median; %d deliveries, %d answered 500 on purpose); retries drained after each storm: %v.",
				name, fmtRate(SpreadOf(events).Median), fmtRate(SpreadOf(per).Median), n, failed, drained))
		}
	}
	return notes
}

// postgresNotes say which rows ran on which store, and how the durable fee
// quote's highest rate on PostgreSQL compares with Pebble's: the median of
// the per-round ratios, both searched in the same round, one after the
// other, on the same machine.
func (env *environment) postgresNotes() []string {
	notes := []string{fmt.Sprintf("Stores: the rows of target %s ran on Pebble (--data), those of target %s on a second Swapgate started alike on the PostgreSQL store (--store), right after Pebble's run of the same scenario in the same round.",
		targetSwapgate, targetPostgres)}
	pebble, pg := map[int]float64{}, map[int]float64{}
	for _, s := range env.searches {
		if s.Scenario != postgresSearched {
			continue
		}
		switch s.Target {
		case targetSwapgate:
			pebble[s.Round] = s.Result.MaxRate
		case targetPostgres:
			pg[s.Round] = s.Result.MaxRate
		}
	}
	for _, t := range []string{targetSwapgate, targetPostgres} {
		var total LedgerFigure
		for _, s := range env.searches {
			if s.Scenario == postgresSearched && s.Target == t && s.Ledger != nil {
				total = LedgerFigure{Commits: total.Commits + s.Ledger.Commits, Rows: total.Rows + s.Ledger.Rows, CommitSec: total.CommitSec + s.Ledger.CommitSec}
			}
		}
		if total.Commits > 0 {
			notes = append(notes, fmt.Sprintf("%s@%s over its searches: %s.", postgresSearched, t, fmtLedger(&total)))
		}
	}
	ratio := SpreadOf(Ratios(pg, pebble))
	if !ratio.Valid() {
		return append(notes, fmt.Sprintf("%s max/s PostgreSQL ÷ Pebble: not measured (no round searched both).", postgresSearched))
	}
	verdict := "met"
	if ratio.Median < postgresTarget {
		verdict = "missed"
	}
	return append(notes, fmt.Sprintf("%s max/s PostgreSQL ÷ Pebble: %s (median (min–max) of per-round ratios; PostgreSQL %s/s, Pebble %s/s, medians): target %.1f %s.",
		postgresSearched, fmtRatio(ratio), fmtRate(SpreadOf(valuesOf(pg)).Median), fmtRate(SpreadOf(valuesOf(pebble)).Median), postgresTarget, verdict))
}

// rowOf is the table's row of a scenario on Swapgate, nil when it did not
// run.
func rowOf(rows []Row, scenario string) *Row {
	for i := range rows {
		if rows[i].Scenario == scenario && rows[i].Target == targetSwapgate {
			return &rows[i]
		}
	}
	return nil
}

// breakerTotals adds up what the leg breakers did during a scenario's
// runs.
func (env *environment) breakerTotals(scenario string) (opens, skipped, legs float64) {
	for _, run := range env.runs {
		if b := run.Breaker; b != nil && run.Scenario == scenario {
			opens, skipped, legs = opens+b.Opens, skipped+b.Skipped, legs+b.Legs
		}
	}
	return opens, skipped, legs
}

// fmtMs writes microseconds as milliseconds to the hundredth, for figures
// held to a target a few milliseconds wide.
func fmtMs(us float64) string { return fmt.Sprintf("%.2fms", us/1000) }

// verdict says whether a latency in microseconds is within its target.
func verdict(us, target float64) string {
	if us <= target {
		return "within"
	}
	return "over by " + fmtMs(us-target)
}

// machineBound says when a maximum is the machine's rather than the
// server's: generator and server together used (nearly) every core, so
// neither could go faster without taking CPU from the other.
func machineBound(gen, srv float64) string {
	if gen+srv >= 0.85 {
		return " (together nearly all of the machine: the limit is the machine shared by generator and server, not the server alone)"
	}
	return ""
}

// hideSecret replaces the value of --secret in args: the receiver's secret
// is throwaway, but a report is no place for secrets.
func hideSecret(args []string) []string {
	out := slices.Clone(args)
	for i := range out {
		if out[i] == "--secret" && i+1 < len(out) {
			out[i+1] = "(hidden)"
		}
	}
	return out
}

// readTrim reads a small file, trimmed; empty when it cannot.
func readTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
