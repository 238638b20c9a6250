package main

import (
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/actors/cluster/clustertest"
	"github.com/swapgate/swapgate/internal/pgtest"
)

// testCluster is n `swapgate serve` processes of one automanaged cluster
// on one PostgreSQL database, each with its own data directory (holding
// the same secrets.key).
type testCluster struct {
	work, store, certFile string
	binds                 []string
	dirs                  []string
	nodes                 []*crashChild
}

func startCluster(t *testing.T, n int, extra ...string) *testCluster {
	t.Helper()
	return newCluster(t, n, clusterOpts{extra: extra})
}

// clusterOpts says how newCluster starts its nodes.
type clusterOpts struct {
	// trust is a webhook receiver whose certificate the nodes trust.
	trust *crashReceiver
	// provision runs before any node starts, given the store's URL and
	// node 0's data directory (where the CLI then leaves secrets.key).
	provision func(store, dir string)
	// serve starts node i (nil: tc.serve, the automanaged provider, with
	// extra).
	serve func(tc *testCluster, t *testing.T, i int) *crashChild
	extra []string
}

// newCluster starts n nodes one after the other, each node after the
// first with a copy of node 0's secrets.key, as an operator would.
func newCluster(t *testing.T, n int, o clusterOpts) *testCluster {
	t.Helper()
	work := t.TempDir()
	linkSwapgate(t, work)
	tc := &testCluster{work: work, store: pgtest.Private(t).DSN(t), binds: clustertest.FreeAddrs(t, n),
		certFile: filepath.Join(work, "no-such-cert.pem")}
	if o.trust != nil {
		tc.certFile = filepath.Join(work, "receiver.pem")
		if err := os.WriteFile(tc.certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: o.trust.srv.Certificate().Raw}), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		dir := filepath.Join(work, "node"+strconv.Itoa(i))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		tc.dirs = append(tc.dirs, dir)
	}
	if o.provision != nil {
		o.provision(tc.store, tc.dirs[0])
	}
	if o.serve == nil {
		o.serve = func(tc *testCluster, t *testing.T, i int) *crashChild { return tc.serve(t, i, o.extra...) }
	}
	for i := range n {
		if i > 0 {
			copySecretsKey(t, tc.dirs[0], tc.dirs[i])
		}
		tc.nodes = append(tc.nodes, o.serve(tc, t, i))
	}
	return tc
}

// copySecretsKey gives directory to the secrets.key of directory from, as
// every node of a cluster (and the operator's CLI) must share it.
func copySecretsKey(t *testing.T, from, to string) {
	t.Helper()
	key, err := os.ReadFile(filepath.Join(from, "secrets.key"))
	if err != nil {
		t.Fatalf("secrets.key of %s: %v", from, err)
	}
	if err := os.MkdirAll(to, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(to, "secrets.key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
}

// serve starts node i (again).
func (tc *testCluster) serve(t *testing.T, i int, extra ...string) *crashChild {
	t.Helper()
	args := append([]string{"--cluster-name", "test", "--cluster-bind", tc.binds[i],
		"--cluster-peers", strings.Join(tc.binds, ",")}, extra...)
	return crashServe(t, tc.work, tc.dirs[i], tc.certFile, tc.store, i, args...)
}

// waitMembers waits until every live node's ping names want members.
func (tc *testCluster) waitMembers(t *testing.T, want []string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for _, node := range tc.nodes {
		if node == nil {
			continue
		}
		c := node.client()
		for {
			var ping struct {
				Cluster struct {
					Name, Self string
					Members    []string
				}
			}
			s, raw, err := c.doJSON(http.MethodGet, "/v1/ping", nil, "", &ping)
			if err == nil && s == http.StatusOK && slices.Equal(ping.Cluster.Members, want) {
				if ping.Cluster.Name != "test" || !slices.Contains(want, ping.Cluster.Self) {
					t.Fatalf("ping: %s", raw)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: ping %d %v %s, want members %v", node.base, s, err, raw, want)
			}
			time.Sleep(100 * time.Millisecond)
		}
		c.close()
	}
}

func TestClusterMembership(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three service processes")
	}
	tc := startCluster(t, 3)
	want := slices.Sorted(slices.Values(tc.binds))
	tc.waitMembers(t, want)
	// The metrics say it too.
	c := tc.nodes[0].client()
	defer c.close()
	s, raw, err := c.do(http.MethodGet, "/metrics", nil, "")
	if err != nil || s != http.StatusOK || !strings.Contains(string(raw), "swapgate_cluster_members 3") {
		t.Fatalf("metrics %d %v: no swapgate_cluster_members 3", s, err)
	}
	// A node killed leaves the others' topology; restarted, it rejoins.
	tc.nodes[2].kill(t)
	tc.nodes[2] = nil
	tc.waitMembers(t, slices.DeleteFunc(slices.Clone(want), func(m string) bool { return m == tc.binds[2] }))
	tc.nodes[2] = tc.serve(t, 2)
	tc.waitMembers(t, want)
}
