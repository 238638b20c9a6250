package cluster

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/actors"
	"github.com/swapgate/swapgate/actors/cluster/clustertest"
)

// counter is a grain that counts its requests and says which node holds it.
type counter struct {
	self string
	n    int
}

func (c *counter) Receive(_ context.Context, method string, body []byte) ([]byte, error) {
	switch method {
	case "add":
		c.n++
		return []byte(c.self + " " + strconv.Itoa(c.n)), nil
	case "fail":
		return nil, fmt.Errorf("refused %s", body)
	}
	return nil, fmt.Errorf("unknown method %q", method)
}

func (c *counter) Stop() {}

// TestMain runs this test binary as one cluster node when asked: several
// nodes in one process would race on the remote module's package-level
// state (its gRPC logger), which a real deployment, one node per process,
// never does.
func TestMain(m *testing.M) {
	if bind := os.Getenv("CLUSTER_TEST_BIND"); bind != "" {
		os.Exit(runNode(bind, strings.Split(os.Getenv("CLUSTER_TEST_PEERS"), ","), os.Getenv("CLUSTER_TEST_HTTP")))
	}
	os.Exit(m.Run())
}

// runNode joins the cluster and serves GET /call?method=&id=&body= (a
// grain call from this node) and GET /members on addr until killed.
func runNode(bind string, peers []string, addr string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	kind := Kind{Name: "counter", Activate: func(context.Context, string) (Handler, error) { return &counter{self: bind}, nil }}
	n, err := Start(ctx, actors.NewSystem(), Config{Name: "test", Bind: bind, Peers: peers,
		Kinds: []Kind{kind}, RefreshTTL: 300 * time.Millisecond, TryTimeout: time.Second})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/call", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 20*time.Second)
		defer cancel()
		q := r.URL.Query()
		out, err := n.Call(ctx, "counter", q.Get("id"), q.Get("method"), []byte(q.Get("body")))
		if err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		w.Write(out)
	})
	mux.HandleFunc("/members", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s|%s|%d", n.Self(), strings.Join(n.Members(), ","), n.Hosted()["counter"])
	})
	if err := http.ListenAndServe(addr, mux); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

type testNode struct {
	bind, http string
	cmd        *exec.Cmd
}

func (tn *testNode) get(path string) (string, int) {
	resp, err := http.Get("http://" + tn.http + path)
	if err != nil {
		return err.Error(), 0
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b), resp.StatusCode
}

func startNodes(t *testing.T, n int) []*testNode {
	t.Helper()
	addrs := clustertest.FreeAddrs(t, 2*n)
	binds := addrs[:n]
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	nodes := make([]*testNode, n)
	for i := range nodes {
		tn := &testNode{bind: binds[i], http: addrs[n+i]}
		tn.cmd = exec.Command(exe)
		tn.cmd.Env = append(os.Environ(), "CLUSTER_TEST_BIND="+tn.bind, "CLUSTER_TEST_PEERS="+strings.Join(binds, ","), "CLUSTER_TEST_HTTP="+tn.http)
		if testing.Verbose() {
			tn.cmd.Stderr = os.Stderr
		}
		if err := tn.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			tn.cmd.Process.Kill()
			if err := tn.cmd.Wait(); err != nil && tn.cmd.ProcessState.ExitCode() > 0 {
				// A node that exits on its own with a code (the race
				// detector's 66 included) fails the test.
				t.Errorf("node %s exited: %v", tn.bind, err)
			}
		})
		nodes[i] = tn
	}
	return nodes
}

// waitMembers waits until tn sees want members and returns its view.
func waitMembers(t *testing.T, tn *testNode, want int) []string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, code := tn.get("/members")
		if parts := strings.Split(out, "|"); code == http.StatusOK && len(parts) == 3 {
			if ms := strings.Split(parts[1], ","); len(ms) == want {
				return ms
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %q, want %d members", tn.bind, out, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestGrainHasOneOwnerAndMovesWhenItsNodeDies(t *testing.T) {
	nodes := startNodes(t, 3)
	var members []string
	for _, tn := range nodes {
		members = waitMembers(t, tn, 3)
	}
	owner := Owner(members, "counter/p1")
	for i := 0; i < 9; i++ {
		out, code := nodes[i%3].get("/call?method=add&id=p1")
		if want := owner + " " + strconv.Itoa(i+1); code != http.StatusOK || out != want {
			t.Fatalf("call %d from %s answered %d %q, want %q (the owner the rendezvous names)", i, nodes[i%3].bind, code, out, want)
		}
	}
	if out, code := nodes[1].get("/call?method=fail&id=p1&body=x"); code != http.StatusConflict || !strings.Contains(out, "refused x") {
		t.Fatalf("a handler's error came back as %d %q", code, out)
	}
	hosted := 0
	for _, tn := range nodes {
		out, _ := tn.get("/members")
		c, _ := strconv.Atoi(strings.Split(out, "|")[2])
		hosted += c
	}
	if hosted != 1 {
		t.Fatalf("%d activations of one grain", hosted)
	}
	// The owner dies without a word; the grain is activated again on a
	// survivor once the others see it gone.
	var rest []*testNode
	for _, tn := range nodes {
		if tn.bind == owner {
			tn.cmd.Process.Kill()
			continue
		}
		rest = append(rest, tn)
	}
	for _, tn := range rest {
		members = waitMembers(t, tn, 2)
	}
	newOwner := Owner(members, "counter/p1")
	if newOwner == owner {
		t.Fatalf("owner %s still named after it died", owner)
	}
	out, code := rest[1].get("/call?method=add&id=p1")
	if want := newOwner + " 1"; code != http.StatusOK || out != want {
		t.Fatalf("after the move: %d %q, want %q", code, out, want)
	}
}

func TestOwnerIsStable(t *testing.T) {
	ms := []string{"10.0.0.1:7000", "10.0.0.2:7000", "10.0.0.3:7000"}
	counts := map[string]int{}
	for i := 0; i < 3000; i++ {
		k := "key" + strconv.Itoa(i)
		o := Owner(ms, k)
		counts[o]++
		// Removing a member other than the owner never moves a key.
		for _, gone := range ms {
			if gone == o {
				continue
			}
			var rest []string
			for _, m := range ms {
				if m != gone {
					rest = append(rest, m)
				}
			}
			if Owner(rest, k) != o {
				t.Fatalf("%s moved from %s when %s left", k, o, gone)
			}
		}
	}
	for m, c := range counts {
		if c < 800 {
			t.Fatalf("%s owns %d of 3000 keys: %v", m, c, counts)
		}
	}
	if Owner(nil, "k") != "" {
		t.Fatal("no members, yet an owner")
	}
}

func TestFrames(t *testing.T) {
	for _, tc := range []struct {
		method string
		body   []byte
	}{{"acquire", []byte("{}")}, {"", nil}, {"x", []byte{0, 1, 2}}} {
		r, err := decodeRequest(encodeRequest(42, "partner", "p1", tc.method, tc.body))
		if err != nil || r.corr != 42 || r.kind != "partner" || r.identity != "p1" || r.method != tc.method || string(r.body) != string(tc.body) {
			t.Fatalf("request %q: %+v %v", tc.method, r, err)
		}
		f, err := decodeReply(encodeReply(7, statusError, tc.body))
		if err != nil || f.corr != 7 || f.status != statusError || string(f.body) != string(tc.body) {
			t.Fatalf("reply: %+v %v", f, err)
		}
	}
	for _, short := range [][]byte{nil, {1, 2, 3}, append(make([]byte, 8), 0, 5), append(make([]byte, 8), 0, 0, 0)} {
		if _, err := decodeRequest(short); err == nil {
			t.Fatalf("short request %v decoded", short)
		}
	}
}

// TestOwnerSpreadsEvenly holds rendezvous placement to an even share for
// member addresses that differ only in their last digit (as a cluster on one
// host has: 127.0.0.1:7101, :7103, :7105), over keys shaped as the service's
// are: every member owns a third of the keys, within three points.
func TestOwnerSpreadsEvenly(t *testing.T) {
	const keys = 30000
	for _, tc := range []struct {
		name    string
		members []string
		key     func(i int) string
	}{
		{"README nodes, partner keys", []string{"127.0.0.1:7101", "127.0.0.1:7103", "127.0.0.1:7105"}, func(i int) string { return "partner/p_" + strconv.Itoa(i) }},
		{"README nodes, swap keys", []string{"127.0.0.1:7101", "127.0.0.1:7103", "127.0.0.1:7105"}, func(i int) string { return fmt.Sprintf("swap/0x%064x", i*7919) }},
		{"adjacent ports", []string{"127.0.0.1:7100", "127.0.0.1:7101", "127.0.0.1:7102"}, func(i int) string { return "counter/" + strconv.Itoa(i) }},
		{"adjacent hosts", []string{"10.0.0.1:7000", "10.0.0.2:7000", "10.0.0.3:7000"}, func(i int) string { return "chain/" + strconv.Itoa(i) }},
		{"last digit 7-9", []string{"10.1.2.7:7101", "10.1.2.8:7101", "10.1.2.9:7101"}, func(i int) string { return "onramp/" + strconv.Itoa(i) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			counts := map[string]int{}
			for i := 0; i < keys; i++ {
				counts[Owner(tc.members, tc.key(i))]++
			}
			t.Logf("%v", counts)
			for _, m := range tc.members {
				share := float64(counts[m]) / keys
				if share < 1.0/3-0.03 || share > 1.0/3+0.03 {
					t.Errorf("%s owns %.1f%% of %d keys, want 33.3%% ± 3: %v", m, 100*share, keys, counts)
				}
			}
		})
	}
}
