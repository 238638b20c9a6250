package main

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"

	"github.com/swapgate/swapgate/internal/pgtest"
)

// startEtcd starts a one-member etcd server in the test process, on
// loopback ports of its own, with its data in a temporary directory, and
// returns its client URL; it stops when the test ends.
func startEtcd(t *testing.T) string {
	t.Helper()
	free := func() *url.URL {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return &url.URL{Scheme: "http", Host: l.Addr().String()}
	}
	cfg := embed.NewConfig()
	cfg.Name = "swapgate-test"
	cfg.Dir = filepath.Join(t.TempDir(), "etcd")
	client, peer := free(), free()
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*client}, []url.URL{*client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*peer}, []url.URL{*peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = "fatal" // its errors come back from StartEtcd and Err; Close logs a spurious one
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatalf("start the embedded etcd: %v", err)
	}
	t.Cleanup(e.Close)
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		t.Fatalf("the embedded etcd: %v", err)
	case <-time.After(60 * time.Second):
		e.Server.Stop()
		t.Fatal("the embedded etcd was not ready within a minute")
	}
	return client.String()
}

// startEtcdCluster is startCluster with the etcd provider: n `swapgate
// serve` processes on one PostgreSQL database, node i's --cluster-etcd
// being endpoint(i) (the embedded etcd's URL, or a proxy in front of it).
func startEtcdCluster(t *testing.T, n int, endpoint func(i int) string) *testCluster {
	t.Helper()
	work := t.TempDir()
	linkSwapgate(t, work)
	tc := &testCluster{work: work, store: pgtest.Private(t).DSN(t), binds: clusterAddrs(t, n)}
	tc.certFile = filepath.Join(work, "no-such-cert.pem")
	for i := range n {
		dir := filepath.Join(work, "node"+strconv.Itoa(i))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			key, err := os.ReadFile(filepath.Join(tc.dirs[0], "secrets.key"))
			if err != nil {
				t.Fatalf("node 0's secrets.key: %v", err)
			}
			if err := os.WriteFile(filepath.Join(dir, "secrets.key"), key, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		tc.dirs = append(tc.dirs, dir)
		tc.nodes = append(tc.nodes, tc.serveEtcd(t, i, endpoint(i)))
	}
	return tc
}

// serveEtcd starts node i (again) on the etcd provider.
func (tc *testCluster) serveEtcd(t *testing.T, i int, endpoint string) *crashChild {
	t.Helper()
	return crashServe(t, tc.work, tc.dirs[i], tc.certFile, tc.store, i,
		"--cluster-name", "test", "--cluster-bind", tc.binds[i], "--cluster-etcd", endpoint)
}

// pingMembers is the member list node's GET /v1/ping shows.
func pingMembers(t *testing.T, node *crashChild) []string {
	t.Helper()
	c := node.client()
	defer c.close()
	var ping struct{ Cluster struct{ Members []string } }
	s, raw, err := c.doJSON(http.MethodGet, "/v1/ping", nil, "", &ping)
	if err != nil || s != http.StatusOK {
		t.Fatalf("%s: ping %d %v %s", node.base, s, err, raw)
	}
	return ping.Cluster.Members
}

// without is members less m.
func without(members []string, m string) []string {
	return slices.DeleteFunc(slices.Clone(members), func(x string) bool { return x == m })
}

// TestClusterEtcd runs three nodes on the etcd provider against an etcd
// embedded in the test process: all three see one another; one killed
// leaves the others' topology once its lease lapses, and restarted (a new
// member id) rejoins. Then one node loses its etcd connection for longer
// than its lease: the others drop it, and the test holds down what the
// provider does next (see the actors/cluster package comment): when the
// connection comes back, the node registers again, but the others have
// blocked its member id for good and it has removed itself from its own
// topology, so it never rejoins until it is restarted, which brings it
// back.
func TestClusterEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an etcd server and three service processes")
	}
	etcdURL := startEtcd(t)
	cut := startTCPProxy(t, etcdURL)
	tc := startEtcdCluster(t, 3, func(i int) string {
		if i == 1 {
			return cut.url() // node 1 reaches etcd through a link the test can cut
		}
		return etcdURL
	})
	all := slices.Sorted(slices.Values(tc.binds))
	tc.waitMembers(t, all)

	// A node killed leaves once its lease lapses; restarted, it rejoins.
	tc.nodes[2].kill(t)
	tc.nodes[2] = nil
	tc.waitMembers(t, without(all, tc.binds[2]))
	tc.nodes[2] = tc.serveEtcd(t, 2, etcdURL)
	tc.waitMembers(t, all)

	// Node 1 cut off from etcd for longer than its lease (3 s): the
	// others drop it.
	cut.cut(t)
	partitioned := tc.nodes[1]
	tc.nodes[1] = nil
	tc.waitMembers(t, without(all, tc.binds[1]))
	cut.restore(t)
	// Its keep-alive loop registers it again within a second or two of the
	// link's return; give it ample time, then look: the others still
	// leave it out, and it leaves itself out of its own view.
	time.Sleep(10 * time.Second)
	for _, i := range []int{0, 2} {
		if got := pingMembers(t, tc.nodes[i]); !slices.Equal(got, without(all, tc.binds[1])) {
			t.Errorf("node %d sees %v after node 1's link came back; the provider was expected to keep node 1 out (blocked member id)", i, got)
		}
	}
	t.Logf("after the link came back: node 0 sees %v, node 1 sees %v", pingMembers(t, tc.nodes[0]), pingMembers(t, partitioned))
	if got := pingMembers(t, partitioned); slices.Contains(got, tc.binds[1]) {
		t.Errorf("node 1 sees itself in %v after its lease lapsed; the provider was expected to have dropped it from its own topology", got)
	}
	// Which its /readyz says, so that a balancer stops sending it requests.
	c := partitioned.client()
	s, raw, err := c.do(http.MethodGet, "/readyz", nil, "")
	c.close()
	if err != nil || s != http.StatusServiceUnavailable || !strings.Contains(string(raw), "not a member of cluster") {
		t.Errorf("node 1's readyz after it was dropped: %d %v %s, want 503 naming the cluster", s, err, raw)
	}
	// The remedy: restart it (a new process is a new member id).
	_ = partitioned.cmd.Process.Kill() // its log holds the provider's errors of the cut: not this test's failures
	<-partitioned.exited
	tc.nodes[1] = tc.serveEtcd(t, 1, cut.url())
	tc.waitMembers(t, all)
}

// tcpProxy forwards a loopback port to a target address until cut, which
// closes its listener and every connection through it; restore listens on
// the same port again.
type tcpProxy struct {
	target string
	addr   string

	mu    sync.Mutex
	l     net.Listener
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

func startTCPProxy(t *testing.T, targetURL string) *tcpProxy {
	t.Helper()
	u, err := url.Parse(targetURL)
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{target: u.Host, conns: map[net.Conn]struct{}{}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = l.Addr().String()
	p.serve(l)
	t.Cleanup(func() { p.cut(t) })
	return p
}

func (p *tcpProxy) url() string { return "http://" + p.addr }

func (p *tcpProxy) serve(l net.Listener) {
	p.mu.Lock()
	p.l = l
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", p.target)
			if err != nil {
				in.Close()
				continue
			}
			p.mu.Lock()
			if p.l != l { // cut meanwhile
				p.mu.Unlock()
				in.Close()
				out.Close()
				return
			}
			p.conns[in], p.conns[out] = struct{}{}, struct{}{}
			p.mu.Unlock()
			pipe := func(dst, src net.Conn) {
				_, _ = io.Copy(dst, src)
				dst.Close()
				src.Close()
			}
			go pipe(in, out)
			go pipe(out, in)
		}
	}()
}

// cut closes the listener and every connection; a closed proxy is left
// as it is.
func (p *tcpProxy) cut(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	l := p.l
	p.l = nil
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
	p.mu.Unlock()
	if l != nil {
		if err := l.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			t.Errorf("close the proxy: %v", err)
		}
	}
	p.wg.Wait()
}

// restore listens on the proxy's port again.
func (p *tcpProxy) restore(t *testing.T) {
	t.Helper()
	l, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatalf("listen on %s again: %v", p.addr, err)
	}
	p.serve(l)
}
