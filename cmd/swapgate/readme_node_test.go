package main

import (
	"testing"
	"time"

	"github.com/swapgate/swapgate/cmd/swapgate/app"
	"github.com/swapgate/swapgate/routing/domain/swap"
)

// TestReadmeSandboxNodeWalkthrough runs the README's walkthrough of the
// sandbox chains' nodes as written: ethers from the npm registry, pointed
// at Arbitrum's node, approves and sends a quote's transaction with its own
// key, and the swap reported with its hash reaches DONE.
func TestReadmeSandboxNodeWalkthrough(t *testing.T) {
	ts := startServer(t, func(c *app.Config) {
		c.SandboxBridgeScale = 0
		c.SwapSchedule = swap.Schedule{First: 20 * time.Millisecond, Max: 50 * time.Millisecond, Horizon: time.Hour}
	})
	answers := runWalkthrough(t, ts, readmeBlockAfter(t, "### The sandbox chains as Ethereum nodes"), "node", "npm", "tr", "seq")
	if len(answers) != 2 {
		t.Fatalf("%d answers, want 2 (execute, final status)", len(answers))
	}
	var ex struct{ Status *statusBody }
	var final statusBody
	answers[0].decode(t, &ex)
	answers[1].decode(t, &final)
	if ex.Status == nil || final.Status != swap.StatusDone || final.Substatus != swap.Completed || final.Receiving.TxHash == "" {
		t.Fatalf("executed %+v, final %+v", ex.Status, final)
	}
}
