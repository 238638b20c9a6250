package main

import (
	"encoding/json"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// dashboardPath is the Grafana dashboard kept with the code it charts.
const dashboardPath = "../../deploy/grafana/swapgate.json"

// grafanaDashboard is what the test reads of the dashboard JSON.
type grafanaDashboard struct {
	Inputs []struct {
		Name, Type string
		PluginID   string `json:"pluginId"`
	} `json:"__inputs"`
	Templating struct {
		List []struct{ Name, Type string }
	}
	Panels []grafanaPanel
}

type grafanaPanel struct {
	ID         int
	Type       string
	Title      string
	Datasource *struct{ Type, UID string }
	Targets    []struct {
		Expr       string
		Datasource *struct{ Type, UID string }
	}
	Panels []grafanaPanel // a collapsed row's
}

// metricName matches the metric names a query may use: Swapgate's own and
// those of the Go and process collectors.
var metricName = regexp.MustCompile(`\b(?:swapgate|go|process)_[a-zA-Z0-9_:]*`)

// TestGrafanaDashboard checks the dashboard: valid JSON, importable with its
// data source as ${DS_PROMETHEUS}, and every metric its queries use one the
// service exposes, scraped from a real server after a few requests; and
// every family of Swapgate's own that the service exposes is charted.
func TestGrafanaDashboard(t *testing.T) {
	raw, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	var d grafanaDashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("%s is not valid JSON: %v", dashboardPath, err)
	}
	if len(d.Inputs) != 1 || d.Inputs[0].Name != "DS_PROMETHEUS" || d.Inputs[0].Type != "datasource" || d.Inputs[0].PluginID != "prometheus" {
		t.Errorf("__inputs %+v: want the one DS_PROMETHEUS Prometheus data source", d.Inputs)
	}
	var dsVar bool
	for _, v := range d.Templating.List {
		dsVar = dsVar || (v.Name == "DS_PROMETHEUS" && v.Type == "datasource")
	}
	if !dsVar {
		t.Error("no DS_PROMETHEUS data source variable: a provisioned (not imported) dashboard would have no data source")
	}

	used := map[string][]string{} // metric name → titles of the panels using it
	ids := map[int]bool{}
	var walk func(ps []grafanaPanel)
	walk = func(ps []grafanaPanel) {
		for _, p := range ps {
			if ids[p.ID] {
				t.Errorf("panel id %d used twice", p.ID)
			}
			ids[p.ID] = true
			walk(p.Panels)
			if p.Type == "row" {
				continue
			}
			if p.Datasource == nil || p.Datasource.UID != "${DS_PROMETHEUS}" || len(p.Targets) == 0 {
				t.Errorf("panel %q: data source %+v, %d queries; want ${DS_PROMETHEUS} and queries", p.Title, p.Datasource, len(p.Targets))
			}
			for _, q := range p.Targets {
				if q.Datasource != nil && q.Datasource.UID != "${DS_PROMETHEUS}" {
					t.Errorf("panel %q: a query's data source is %+v", p.Title, q.Datasource)
				}
				names := metricName.FindAllString(q.Expr, -1)
				if len(names) == 0 {
					t.Errorf("panel %q: query %q uses no metric", p.Title, q.Expr)
				}
				for _, n := range names {
					used[n] = append(used[n], p.Title)
				}
			}
		}
	}
	walk(d.Panels)

	exposed := scrapeAfterTraffic(t)
	var missing []string
	for n, titles := range used {
		if !exposed[n] {
			missing = append(missing, n+" (in "+strings.Join(titles, ", ")+")")
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("the dashboard queries metrics the service does not expose:\n%s", strings.Join(missing, "\n"))
	}
	var uncharted []string
	for n := range exposed {
		family := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_sum"), "_count")
		if !strings.HasPrefix(n, "swapgate_") || chartedFamily(used, family) {
			continue
		}
		uncharted = append(uncharted, n)
	}
	sort.Strings(uncharted)
	if len(uncharted) > 0 {
		t.Errorf("the service exposes metrics the dashboard does not chart:\n%s", strings.Join(uncharted, "\n"))
	}
}

// chartedFamily reports whether a query uses the family or one of its
// series (a histogram's _bucket, _sum or _count).
func chartedFamily(used map[string][]string, family string) bool {
	for _, suffix := range []string{"", "_bucket", "_sum", "_count"} {
		if _, ok := used[family+suffix]; ok {
			return true
		}
	}
	return false
}

// scrapeAfterTraffic starts the service, sends it anonymous and partner
// requests (reference data, quotes, a refused one past a rate limit), and
// returns the names of the series its /metrics exposes.
func scrapeAfterTraffic(t *testing.T) map[string]bool {
	t.Helper()
	ts := startServer(t, nil)
	for _, path := range []string{"/v1/chains", "/v1/chains", "/v1/tokens?chains=1", "/v1/connections?fromChain=1", "/v1/gas-prices?chainId=1", "/v1/tools"} {
		if e := ts.get(path); e.Status != 200 {
			t.Fatalf("GET %s: %d %s", path, e.Status, e.Raw)
		}
	}
	for range 3 {
		if e := ts.get(arbToBase()); e.Status != 200 {
			t.Fatalf("quote: %d %s", e.Status, e.Raw)
		}
	}
	// A partner quote goes through the ledger and the fee-wallet cache.
	_, key := ts.createPartner("Dash")
	if e := ts.putWallet(key, "evm", wallet); e.Status != 200 {
		t.Fatalf("fee wallet: %d %s", e.Status, e.Raw)
	}
	for range 2 {
		if e := ts.get(arbToBase(), withKey(key)); e.Status != 200 {
			t.Fatalf("partner quote: %d %s", e.Status, e.Raw)
		}
	}
	m := ts.get("/metrics")
	if m.Status != 200 {
		t.Fatalf("/metrics: %d", m.Status)
	}
	exposed := map[string]bool{}
	values := map[string]float64{}
	for _, line := range strings.Split(string(m.Raw), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name := line[:strings.IndexAny(line, "{ ")]
		exposed[name] = true
		if i := strings.LastIndexByte(line, ' '); i > 0 {
			if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
				values[line[:i]] = v
			}
		}
	}
	// The traffic shows in the figures, not only in the names.
	for _, series := range []string{
		"swapgate_quote_races_total",
		`swapgate_quote_wins_total{provider="aggregator",tool="sbx-canal"}`,
		"swapgate_ledger_rows_total",
		`swapgate_cache_hits_total{cache="partner_auth"}`,
		`swapgate_cache_hits_total{cache="ref_chains"}`,
	} {
		if values[series] < 1 {
			t.Errorf("%s = %v after the traffic, want at least 1", series, values[series])
		}
	}
	return exposed
}
