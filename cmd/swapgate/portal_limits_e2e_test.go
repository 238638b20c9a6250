package main

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/internal/pgtest"
)

// TestPortalSignInLimitsAcrossNodes: two nodes sharing one PostgreSQL
// store (and so one secrets.key) count the portal's sign-in requests
// together: an address gets 3 codes in 10 minutes however its requests
// are spread over the nodes, and a client IP 30 code checks; a code mailed
// by one node signs in on the other, its digest keyed alike on both.
func TestPortalSignInLimitsAcrossNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	dsn := pgtest.Private(t).DSN(t)
	t.Setenv("SWAPGATE_STORE", dsn)
	node := func(dir string) *testServer {
		return startServer(t, func(c *app.Config) {
			c.DataDir, c.Store = dir, dsn
			c.AnonHeavyPerMin, c.AnonReadPerMin = 100_000, 100_000
		})
	}
	dirA, dirB := t.TempDir(), t.TempDir()
	a := node(dirA)
	key, err := os.ReadFile(filepath.Join(dirA, "secrets.key"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dirB, "secrets.key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	b := node(dirB)
	a.createPartner("Portal")
	const email = "portal@example.com"
	pa, pb := newPortalClient(t, a), newPortalClient(t, b)
	pa.get("/portal")
	pb.get("/portal")
	clients := map[*portalClient]*testServer{pa: a, pb: b}

	// Three codes for the address, asked alternately on each node; each is
	// mailed (by the node asked) before the next is asked for, so that
	// the last one asked is the one stored.
	for i, pc := range []*portalClient{pa, pb, pa} {
		before := len(mailboxCodes(t, clients[pc], email))
		pc.post("/portal/sign-in/code", url.Values{"email": {email}}).wantRedirect(t, "/portal?email=portal%40example.com")
		waitUntil(t, fmt.Sprintf("code %d is mailed", i+1), func() bool { return len(mailboxCodes(t, clients[pc], email)) > before })
	}
	for _, pc := range []*portalClient{pb, pa} {
		pc.post("/portal/sign-in/code", url.Values{"email": {email}}).want(t, http.StatusTooManyRequests, "Too many sign-in codes")
	}

	// The last code, mailed by node A, signs in on node B: one check.
	code := mailboxCodes(t, a, email)[0]
	pb.post("/portal/sign-in", url.Values{"email": {email}, "code": {code}}).wantRedirect(t, "/portal")

	// 29 more checks from this IP, over both nodes (from browsers not
	// signed in), then none.
	ca, cb := newPortalClient(t, a), newPortalClient(t, b)
	ca.get("/portal")
	cb.get("/portal")
	for i := range 29 {
		pc := []*portalClient{ca, cb}[i%2]
		pc.post("/portal/sign-in", url.Values{"email": {"nobody@example.com"}, "code": {"123456"}}).want(t, http.StatusUnauthorized, "That code is not valid")
	}
	for _, pc := range []*portalClient{ca, cb} {
		pc.post("/portal/sign-in", url.Values{"email": {"nobody@example.com"}, "code": {"123456"}}).want(t, http.StatusTooManyRequests, "Too many tries")
	}
}
