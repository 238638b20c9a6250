package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/actors/cluster/clustertest"
	"github.com/swapgate/swapgate/internal/pgtest"
)

// readmeClusterNodes are the lines of the README's "Running a cluster"
// that each precede one node's serve command.
var readmeClusterNodes = []string{
	"Start the first node in one terminal:",
	"In a second terminal, the second node:",
	"In a third, the third:",
}

// readmeClusterCopy precedes the command that copies the first node's key.
const readmeClusterCopy = "nodes' data directories (mode 0600, as `cp` leaves it):"

// readmeClusterPing precedes the pings that show the members.
const readmeClusterPing = "is the node answering):"

// TestReadmeClusterWalkthrough runs the README's three-node walkthrough
// as written: the first node from its own terminal, its secrets.key copied
// by the README's command, the second and third nodes, then the pings,
// which name all three members, each node itself as self. The README's
// store URL is replaced by a temporary server's, and its ports (cluster
// addresses, whose next port is each one's health endpoint, and HTTP
// addresses) by free ones, everywhere they appear.
func TestReadmeClusterWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three service processes")
	}
	needTools(t, "cp", "mkdir")
	dsn := pgtest.Private(t).DSN(t)
	dir := t.TempDir()
	linkSwapgate(t, dir)

	const example = "'postgres://swapgate@db.internal/swapgate'"
	var lines []string
	for _, marker := range readmeClusterNodes {
		line := readmeBlockAfter(t, marker)
		if !strings.HasPrefix(line, "bin/swapgate serve --cluster-name ") || !strings.Contains(line, "--store "+example) || strings.Contains(line, "\n") {
			t.Fatalf("the README's node after %q: %q", marker, line)
		}
		lines = append(lines, line)
	}
	// The README's ports, each replaced by a free one: the cluster
	// addresses (with their health ports free too) and the HTTP ones.
	swap := map[string]string{}
	clusterRe, addrRe := regexp.MustCompile(`--cluster-bind (127\.0\.0\.1:\d+)`), regexp.MustCompile(`--addr (127\.0\.0\.1:\d+)`)
	free := clustertest.FreeAddrs(t, len(lines))
	var readmeBinds, readmeAddrs []string
	for i, line := range lines {
		bind, addr := clusterRe.FindStringSubmatch(line), addrRe.FindStringSubmatch(line)
		if bind == nil || addr == nil {
			t.Fatalf("node %d: no --cluster-bind or --addr in %q", i+1, line)
		}
		readmeBinds, readmeAddrs = append(readmeBinds, bind[1]), append(readmeAddrs, addr[1])
		swap[bind[1]] = free[i]
		swap[addr[1]] = freeLoopbackAddr(t)
	}
	for i, line := range lines {
		if !strings.Contains(line, "--cluster-peers "+strings.Join(readmeBinds, ",")) {
			t.Fatalf("node %d's peers are not the three nodes %v: %q", i+1, readmeBinds, line)
		}
	}
	var alts []string
	for from := range swap {
		alts = append(alts, regexp.QuoteMeta(from))
	}
	portRe := regexp.MustCompile(`(` + strings.Join(alts, "|") + `)\b`)
	local := func(s string) string {
		s = portRe.ReplaceAllStringFunc(s, func(m string) string { return swap[m] })
		return strings.ReplaceAll(s, example, "'"+dsn+"'")
	}
	node := func(i int) *backgroundCommand {
		c := startCommand(t, dir, nil, local(lines[i]))
		c.waitFor(t, "node "+strconv.Itoa(i+1)+" serves", func(_, stderr string) string { return loggedAddr(stderr, "swapgate serving") })
		return c
	}
	first := node(0)
	runScript(t, dir, local(readmeBlockAfter(t, readmeClusterCopy)))
	for _, d := range []string{"node2", "node3"} {
		if st, err := os.Stat(dir + "/" + d + "/secrets.key"); err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s/secrets.key after the README's copy: %v %v", d, st, err)
		}
	}
	nodes := []*backgroundCommand{first, node(1), node(2)}

	// The README says "within a second or two": wait (generously, the
	// machine may be loaded) until the third ping names three members,
	// then run the pings as written.
	want := make([]string, len(readmeBinds))
	for i, b := range readmeBinds {
		want[i] = swap[b]
	}
	slices.Sort(want)
	pings := local(readmeBlockAfter(t, readmeClusterPing))
	if strings.Count(pings, "curl -s http://") != 3 {
		t.Fatalf("the README's pings: %q", pings)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		answers, err := clusterPings(dir, pings)
		if err == nil && len(answers) == 3 {
			var bad []string
			for i, a := range answers {
				c := a.Data.Cluster
				if c.Name != "demo" || c.Self != swap[readmeBinds[i]] || !slices.Equal(c.Members, want) {
					bad = append(bad, strconv.Itoa(i+1))
				}
			}
			if len(bad) == 0 {
				break
			}
			err = errors.New("nodes " + strings.Join(bad, ",") + " do not name the three members yet")
		}
		if time.Now().After(deadline) {
			for i, n := range nodes {
				t.Logf("node %d stderr: %s", i+1, n.stderr.String())
			}
			t.Fatalf("the README's pings: %v %+v, want each node naming members %v", err, answers, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for i, a := range readmeAddrs {
		if !strings.Contains(pings, "http://"+swap[a]+"/v1/ping") {
			t.Fatalf("the README's pings do not ask node %d (%s)", i+1, a)
		}
	}
}

// clusterPing is what the test reads of a clustered ping.
type clusterPing struct {
	Data struct {
		Status  string
		Cluster struct {
			Name, Self string
			Members    []string
		}
	}
}

// clusterPings runs the README's ping lines with bash in dir and decodes
// the answers it printed.
func clusterPings(dir, script string) ([]clusterPing, error) {
	cmd := exec.Command("bash", "-eu", "-o", "pipefail", "-c", script)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, errors.New(err.Error() + ": " + stderr.String())
	}
	var out []clusterPing
	dec := json.NewDecoder(&stdout)
	for {
		var p clusterPing
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return out, err
		}
		out = append(out, p)
	}
}

// runScript runs a README script with bash in dir; it must succeed.
func runScript(t *testing.T, dir, script string) {
	t.Helper()
	cmd := exec.Command("bash", "-eu", "-o", "pipefail", "-c", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%q: %v\n%s", script, err, out)
	}
}

// freeLoopbackAddr is a loopback address whose port was free a moment ago.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
