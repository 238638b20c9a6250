// Package clustertest holds test helpers of cluster mode: free cluster
// addresses for test nodes, and a cluster's membership as the actors that own
// work see it (Owns and Watch, the interface each declares), for their
// tests: the test says which nodes own everything now, and every node's
// watchers hear the change. Only tests import it.
package clustertest

import (
	"net"
	"slices"
	"strconv"
	"sync"
	"testing"
)

// Members is the membership the test controls.
type Members struct {
	mu       sync.Mutex
	owners   []string
	watchers []chan struct{}
}

// New returns the membership with owners owning every key.
func New(owners ...string) *Members { return &Members{owners: owners} }

// Set makes owners own every key and tells every watcher.
func (m *Members) Set(owners ...string) {
	m.mu.Lock()
	m.owners = owners
	ws := slices.Clone(m.watchers)
	m.mu.Unlock()
	for _, w := range ws {
		select {
		case w <- struct{}{}:
		default:
		}
	}
}

// Node is the view of the node named name.
func (m *Members) Node(name string) Node { return Node{m: m, name: name} }

// Node is one node's view of the members.
type Node struct {
	m    *Members
	name string
}

// Owns reports whether the node owns any key now.
func (n Node) Owns(string) bool {
	n.m.mu.Lock()
	defer n.m.mu.Unlock()
	return slices.Contains(n.m.owners, n.name)
}

// Watch returns a channel told of each change of the owners, and its
// cancel function.
func (n Node) Watch() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	n.m.mu.Lock()
	n.m.watchers = append(n.m.watchers, ch)
	n.m.mu.Unlock()
	return ch, func() {
		n.m.mu.Lock()
		defer n.m.mu.Unlock()
		n.m.watchers = slices.DeleteFunc(n.m.watchers, func(w chan struct{}) bool { return w == ch })
	}
}

// FreeAddrs returns n loopback cluster addresses whose port and the next
// (an automanaged node's health endpoint, which listens on all
// interfaces) are free now, and distinct from one another's: every port
// is held until all are chosen, so that one address's port is never
// another's health port (CI saw a node's health endpoint take the HTTP
// address of another and exit). Another process may still take one
// before the node starts; tests that start nodes on them live with that
// small chance.
func FreeAddrs(t testing.TB, n int) []string {
	t.Helper()
	var out []string
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for len(out) < n {
		l1, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, l1)
		port := l1.Addr().(*net.TCPAddr).Port
		l2, err := net.Listen("tcp", "0.0.0.0:"+strconv.Itoa(port+1))
		if err != nil {
			continue
		}
		held = append(held, l2)
		out = append(out, "127.0.0.1:"+strconv.Itoa(port))
	}
	return out
}
