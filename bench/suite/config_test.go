package suite

import (
	"strings"
	"testing"
	"time"
)

// TestQuickFitsTwoMinutes keeps make bench-quick under two minutes: its
// load at the worst (every search taking all its steps) leaves room for
// starting the servers, provisioning and the webhook drain.
func TestQuickFitsTwoMinutes(t *testing.T) {
	if b := Quick().LoadBudget(); b > 100*time.Second {
		t.Fatalf("quick offers load for up to %s", b)
	}
	if b := Smoke().LoadBudget(); b > 8*time.Second {
		t.Fatalf("smoke offers load for up to %s", b)
	}
	if b := Full().LoadBudget(); b > 40*time.Minute {
		t.Fatalf("full offers load for up to %s", b)
	}
}

func TestPresetsAreValid(t *testing.T) {
	for _, name := range []string{"full", "quick", "smoke"} {
		c, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		c.Binary = "/bin/true"
		if err := c.validate(); err != nil || c.Preset != name {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Preset("huge"); err == nil {
		t.Fatal("unknown preset accepted")
	}
}

func TestConfigRefusesUnbounded(t *testing.T) {
	for name, mutate := range map[string]func(*Config){
		"no binary":        func(c *Config) { c.Binary = "" },
		"rounds":           func(c *Config) { c.Rounds = maxRounds + 1 },
		"long runs":        func(c *Config) { c.Measure = time.Hour },
		"rate":             func(c *Config) { c.Rate = 0 },
		"workers":          func(c *Config) { c.Workers = 0 },
		"fail share":       func(c *Config) { c.WebhookFailShare = 1 },
		"stall too short":  func(c *Config) { c.StallLatency = c.QuoteDeadline },
		"strategy wait":    func(c *Config) { c.StrategyMinWait = c.QuoteDeadline },
		"unknown scenario": func(c *Config) { c.Scenarios = []string{"flood"} },
		"unknown search":   func(c *Config) { c.FindMax = []string{"flood"} },
		"search steps":     func(c *Config) { c.Search.Factor = 1 },
		"cluster no store": func(c *Config) { c.Cluster = 2 },
		"cluster too big":  func(c *Config) { c.Store, c.Cluster = "postgres://x@y/z", maxCluster+1 },
		"cluster cores":    func(c *Config) { c.Store, c.Cluster, c.ClusterCores = "postgres://x@y/z", 2, 1024 },
	} {
		c := Quick()
		c.Binary = "/bin/true"
		mutate(&c)
		if err := c.validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestScenariosAreDocumented(t *testing.T) {
	want := "ping tokens quote-partner quote-fee quote-anon routes quote-stream mixed quote-evm-solana quote-slow-provider quote-slow-provider-breaker quote-slow-provider-strategy quote-live quote-live-one-call quote-live-router tx-throughput webhook-storm"
	if got := strings.Join(ScenarioNames(), " "); got != want {
		t.Fatalf("scenarios %q, want %q", got, want)
	}
	for _, s := range Scenarios() {
		if len(s.Doc) < 40 {
			t.Errorf("%s: doc %q says too little", s.Name, s.Doc)
		}
	}
}

// TestStalledToolsAreTheAggregators checks the slow-provider server's
// stall list against the catalog: every aggregator tool, no other.
func TestStalledToolsAreTheAggregators(t *testing.T) {
	got, err := providerTools("aggregator")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "sbx-arcbridge,sbx-canal,sbx-wormway,sbx-uniflow,sbx-curveline,sbx-solswap,sbx-suiswap" {
		t.Fatalf("aggregator tools %v", got)
	}
	if _, err := providerTools("nobody"); err == nil {
		t.Fatal("a provider without tools accepted")
	}
}

// TestClusterHelpers holds the pieces of a cluster run: the scenarios that
// run on clusters, the cores each node is pinned to (round the machine's
// cores), and a store's connection string pointed at another database in
// both of its forms.
func TestClusterHelpers(t *testing.T) {
	if got := strings.Join(clusterScenarios(), " "); got != "ping tokens quote-partner quote-fee quote-anon routes quote-evm-solana webhook-storm" {
		t.Fatalf("cluster scenarios %q", got)
	}
	for _, tc := range []struct {
		node, per, cores int
		want             string
	}{{0, 1, 2, "0"}, {1, 1, 2, "1"}, {2, 1, 2, "0"}, {1, 2, 4, "2,3"}, {1, 2, 2, "0,1"}} {
		if got := clusterCPUs(tc.node, tc.per, tc.cores); got != tc.want {
			t.Errorf("node %d, %d cores each of %d: %q, want %q", tc.node, tc.per, tc.cores, got, tc.want)
		}
	}
	for _, tc := range []struct{ store, want string }{
		{"postgres://u:p@db:5432/swapgate?sslmode=disable", "postgres://u:p@db:5432/other?sslmode=disable"},
		{"host=/tmp/pg user=swapgate dbname=swapgate", "host=/tmp/pg user=swapgate dbname=swapgate dbname=other"},
	} {
		if got, err := withDatabase(tc.store, "other"); err != nil || got != tc.want {
			t.Errorf("withDatabase(%q) = %q, %v; want %q", tc.store, got, err, tc.want)
		}
	}
	if !isClusterTarget(clusterTargetName(3)) || isClusterTarget(targetPostgres) {
		t.Fatal("cluster target names")
	}
}
