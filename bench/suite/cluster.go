package suite

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// A cluster run (Config.Cluster = N) measures the Swapgate scenarios on
// clusters of 1, 2, … N nodes, each cluster a target of its own
// ("cluster-1", …), every node pinned to its own ClusterCores cores
// (taskset, GOMAXPROCS) so that each has the same CPU share, and the load
// spread over a cluster's nodes as a round-robin balancer would
// (loadgen's SpreadURLs: connections dialled across the nodes in turn,
// idle ones taken oldest first). Each cluster is its own automanaged
// protoactor-go cluster on a database of its own, created on Config.Store's
// server for the run and dropped after it, so that no cluster sees
// another's rows (its outbox, its partners). quote-partner is searched for
// its highest rate on every cluster, and the notes give each size's
// against N × one node's: the target is at least clusterTarget of it.

// clusterSearched is the scenario whose highest rate is compared across
// cluster sizes.
const clusterSearched = "quote-partner"

// clusterTarget is the share of N × one node's highest rate that N nodes
// should reach.
const clusterTarget = 0.8

// maxCluster bounds --cluster.
const maxCluster = 8

// clusterTargetName is the target (and server) name of the cluster of n
// nodes.
func clusterTargetName(n int) string { return "cluster-" + strconv.Itoa(n) }

// isClusterTarget tells whether target names a cluster.
func isClusterTarget(target string) bool { return strings.HasPrefix(target, "cluster-") }

// clusterScenarios are the scenarios that also run on every cluster: those
// of the main Swapgate whose requests any node answers alike. mixed (its
// status polls follow swaps made on main) and quote-stream (read by the
// suite's own streaming client, one address) stay on main.
func clusterScenarios() []string {
	var out []string
	for _, d := range scenarioDefs() {
		if d.server == serverMain && d.name != "mixed" && !d.stream && !d.tx {
			out = append(out, d.name)
		}
	}
	return out
}

// clusterTargetsOf are the cluster targets d runs on.
func (env *environment) clusterTargetsOf(d scenarioDef) []string {
	return slices.DeleteFunc(env.targetsOf(d), func(t string) bool { return !isClusterTarget(t) })
}

// clusterNodeName is the child name of node i of the cluster of n nodes.
func clusterNodeName(n, i int) string { return fmt.Sprintf("cluster-%d-node%d", n, i+1) }

// clusterCPUs is the cores node i of a cluster is pinned to: ClusterCores
// of them, node by node around the machine's cores.
func clusterCPUs(i, perNode, cores int) string {
	var cpus []string
	for j := range perNode {
		cpus = append(cpus, strconv.Itoa((i*perNode+j)%cores))
	}
	return strings.Join(cpus, ",")
}

// clusterDatabases creates a database for each cluster size on the server
// of store and returns their connection strings; drop removes them.
func clusterDatabases(ctx context.Context, store string, n int) (dsns []string, drop func(), err error) {
	conn, err := pgx.Connect(ctx, store)
	if err != nil {
		return nil, nil, fmt.Errorf("cluster databases: connect to --store: %w", err)
	}
	var names []string
	drop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, name := range names {
			_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		}
		_ = conn.Close(ctx)
	}
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	for k := 1; k <= n; k++ {
		name := fmt.Sprintf("swapgate_bench_c%d_%s", k, hex.EncodeToString(suffix))
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
			drop()
			return nil, nil, fmt.Errorf("cluster databases: create %s (the --store role needs CREATEDB): %w", name, err)
		}
		names = append(names, name)
		dsn, err := withDatabase(store, name)
		if err != nil {
			drop()
			return nil, nil, err
		}
		dsns = append(dsns, dsn)
	}
	return dsns, drop, nil
}

// withDatabase is store's connection string naming database name instead.
func withDatabase(store, name string) (string, error) {
	if strings.HasPrefix(store, "postgres://") || strings.HasPrefix(store, "postgresql://") {
		u, err := url.Parse(store)
		if err != nil {
			return "", fmt.Errorf("--store: %w", err)
		}
		u.Path = "/" + name
		return u.String(), nil
	}
	// libpq's keyword=value form: a later keyword wins.
	return store + " dbname=" + name, nil
}

// freeClusterBinds returns n loopback cluster addresses whose port and the
// next (the automanaged provider's health endpoint) were free a moment
// ago.
func freeClusterBinds(n int) ([]string, error) {
	var out []string
	for tries := 0; len(out) < n; tries++ {
		if tries > 100 {
			return nil, errors.New("no free pair of loopback ports for a cluster address")
		}
		l1, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		port := l1.Addr().(*net.TCPAddr).Port
		l2, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+1))
		l1.Close()
		if err != nil {
			continue
		}
		l2.Close()
		out = append(out, "127.0.0.1:"+strconv.Itoa(port))
	}
	return out, nil
}

// startClusters starts every cluster of the run: for each size, its first
// node (which creates the data directory's secrets.key and migrates the
// database), the key copied to the others, the others together, then a
// wait until the first node's ping names every member.
func (env *environment) startClusters(ctx context.Context, args, extraEnv []string) error {
	if _, err := exec.LookPath("taskset"); err != nil {
		return fmt.Errorf("--cluster pins each node to its cores with taskset (util-linux): %w", err)
	}
	dsns, drop, err := clusterDatabases(ctx, env.cfg.Store, env.cfg.Cluster)
	if err != nil {
		return err
	}
	env.dropClusterDBs = drop
	for k := 1; k <= env.cfg.Cluster; k++ {
		server := clusterTargetName(k)
		env.clusterStores[server] = dsns[k-1]
		binds, err := freeClusterBinds(k)
		if err != nil {
			return err
		}
		spec := func(i int) childSpec {
			name := clusterNodeName(k, i)
			return childSpec{name: name, addrOf: jsonAddr("swapgate serving"), logPath: filepath.Join(env.dir, "logs", name+".log"),
				cpus: clusterCPUs(i, env.cfg.ClusterCores, env.cores),
				env: childEnv(append(slices.Clone(extraEnv), "SWAPGATE_STORE="+dsns[k-1],
					"GOMAXPROCS="+strconv.Itoa(env.cfg.ClusterCores))...),
				args: append([]string{"serve", "--addr", "127.0.0.1:0", "--data", filepath.Join(env.tmp, name),
					"--cluster-name", "bench-" + server, "--cluster-bind", binds[i], "--cluster-peers", strings.Join(binds, ",")}, args...),
			}
		}
		first, err := startChild(ctx, env.cfg.Binary, spec(0), env.cfg.StartTimeout)
		if err != nil {
			return err
		}
		env.addClusterNode(server, first)
		key, err := os.ReadFile(filepath.Join(env.tmp, clusterNodeName(k, 0), "secrets.key"))
		if err != nil {
			return fmt.Errorf("%s: the first node's secrets.key: %w", server, err)
		}
		type started struct {
			c   *child
			err error
		}
		results := make([]chan started, k)
		for i := 1; i < k; i++ {
			dir := filepath.Join(env.tmp, clusterNodeName(k, i))
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, "secrets.key"), key, 0o600); err != nil {
				return err
			}
			results[i] = make(chan started, 1)
			go func() {
				c, err := startChild(ctx, env.cfg.Binary, spec(i), env.cfg.StartTimeout)
				results[i] <- started{c, err}
			}()
		}
		var errs []error
		for i := 1; i < k; i++ {
			r := <-results[i]
			if r.err != nil {
				errs = append(errs, r.err)
				continue
			}
			env.addClusterNode(server, r.c)
		}
		if err := errors.Join(errs...); err != nil {
			return err
		}
		if err := env.waitMembers(ctx, server, k); err != nil {
			return err
		}
		env.stage("started %-9s %d node(s) on %s, each on cores %s of %d (GOMAXPROCS %d)\n", server, k,
			strings.Join(env.clusterAddrs(server), ", "), clusterPinning(k, env.cfg.ClusterCores, env.cores), env.cores, env.cfg.ClusterCores)
	}
	return nil
}

// clusterPinning says which cores each of n nodes runs on.
func clusterPinning(n, perNode, cores int) string {
	var out []string
	for i := range n {
		out = append(out, "{"+clusterCPUs(i, perNode, cores)+"}")
	}
	return strings.Join(out, " ")
}

// addClusterNode records a started node of server's cluster.
func (env *environment) addClusterNode(server string, c *child) {
	env.children[c.name] = c
	env.clusterNodes[server] = append(env.clusterNodes[server], c.name)
	env.extraProcs = append(env.extraProcs, c.name)
}

// clusterAddrs are the HTTP addresses of server's nodes.
func (env *environment) clusterAddrs(server string) []string {
	var out []string
	for _, name := range env.clusterNodes[server] {
		out = append(out, env.children[name].addr)
	}
	return out
}

// waitMembers waits until every node of server's cluster names want
// members in its ping.
func (env *environment) waitMembers(ctx context.Context, server string, want int) error {
	deadline := time.Now().Add(env.cfg.StartTimeout)
	for _, addr := range env.clusterAddrs(server) {
		a := newAPI("http://" + addr)
		for {
			var ping struct {
				Cluster struct{ Members []string } `json:"cluster"`
			}
			err := a.do(ctx, "GET", "/v1/ping", "", nil, &ping)
			if err == nil && len(ping.Cluster.Members) == want {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s: node %s does not see %d members (%v, %v)", server, addr, want, ping.Cluster.Members, err)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}

// clusterNotes compare each cluster's highest quote-partner rate with N ×
// one node's, round by round (both searched in the same round, one after
// the other), and say how the CPU was shared at the maximum.
func (env *environment) clusterNotes() []string {
	c := env.cfg
	notes := []string{fmt.Sprintf("Clusters: the rows of target cluster-N ran on N Swapgate nodes of one automanaged cluster on a PostgreSQL database of their own, each node pinned to %d of the %d cores (taskset, GOMAXPROCS %d), the load generator spreading its connections over the nodes in turn (a round-robin balancer's share); the generator itself is not pinned and shares the cores.",
		c.ClusterCores, env.cores, c.ClusterCores)}
	maxes := map[int]map[int]float64{} // size → round → max/s
	atMax := map[int][][2]float64{}    // size → (generator, servers) CPU at each round's max
	for _, s := range env.searches {
		if s.Scenario != clusterSearched || !isClusterTarget(s.Target) {
			continue
		}
		n, err := strconv.Atoi(strings.TrimPrefix(s.Target, "cluster-"))
		if err != nil {
			continue
		}
		if maxes[n] == nil {
			maxes[n] = map[int]float64{}
		}
		maxes[n][s.Round] = s.Result.MaxRate
		if s.Result.AtMax != nil {
			atMax[n] = append(atMax[n], [2]float64{s.Result.AtMax.GenCPU, s.Result.AtMax.ServerCPU})
		}
	}
	one := maxes[1]
	for n := 1; n <= c.Cluster; n++ {
		if len(maxes[n]) == 0 {
			notes = append(notes, fmt.Sprintf("%s max/s on %s: not measured.", clusterSearched, clusterTargetName(n)))
			continue
		}
		var gen, srv []float64
		for _, g := range atMax[n] {
			gen, srv = append(gen, g[0]), append(srv, g[1])
		}
		cpu := ""
		if len(gen) > 0 {
			cpu = fmt.Sprintf("; at it the generator used %s and the %d node(s) together %s of the %d cores", fmtShare(SpreadOf(gen)), n, fmtShare(SpreadOf(srv)), env.cores)
		}
		line := fmt.Sprintf("%s max/s on %s: %s/s (rounds %s–%s)%s", clusterSearched, clusterTargetName(n),
			fmtRate(SpreadOf(valuesOf(maxes[n])).Median), fmtRate(SpreadOf(valuesOf(maxes[n])).Min), fmtRate(SpreadOf(valuesOf(maxes[n])).Max), cpu)
		if n > 1 {
			per := map[int]float64{}
			for r, v := range maxes[n] {
				if o, ok := one[r]; ok && o > 0 {
					per[r] = v / (float64(n) * o)
				}
			}
			ratio := SpreadOf(valuesOf(per))
			if ratio.Valid() {
				verdict := "met"
				if ratio.Median < clusterTarget {
					verdict = "missed"
				}
				line += fmt.Sprintf("; ÷ (%d × cluster-1's) %s (median (min–max) of per-round ratios): target %.1f %s", n, fmtRatio(ratio), clusterTarget, verdict)
			}
		}
		notes = append(notes, line+".")
	}
	return notes
}
