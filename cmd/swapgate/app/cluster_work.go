package app

import (
	"time"

	inboundrun "github.com/swapgate/swapgate/actors/inbound"
	"github.com/swapgate/swapgate/actors/onrampdesk"
	"github.com/swapgate/swapgate/actors/tracker"
	"github.com/swapgate/swapgate/store/postgres"
)

// Work that outlives a request — tracked swaps and intents deposits
// (actors/tracker), multi-step deposits (actors/inbound), open on-ramp
// orders (actors/onrampdesk) and webhook deliveries (actors/webhook) — is
// owned by live nodes in a cluster:
//
//   - A swap, deposit or order is worked on by the member that owns
//     "swap/<hash>", "inbound/<hash>" or "onramp/<uid>" (rendezvous over
//     the members in the topology, cluster.Node.Owns). Each of those actors
//     takes the node as its Owner: it works only on what the node owns,
//     scans the store for open items on every topology change and every
//     few seconds, adopting those it now owns (so a dead node's are taken
//     over once the membership drops it, within about two health polls,
//     and a scan), and drops those it no longer owns.
//   - A request about an item that reaches a node that does not own it (an
//     execute, a registration, a checkout's payment, a provider's webhook)
//     is applied there, through the store, not forwarded: the answer is
//     the one a single node gives, errors included, with no extra hop, and
//     the owner picks the new state up at its next scan. Forwarding would
//     need every action to be idempotent under the grain calls' retries
//     and its typed refusals carried across nodes, for a saving of at most
//     one scan interval on steps that take seconds.
//   - Every transition is written fenced (the PostgreSQL store's Save…From:
//     the record replaced only while it is still the one read), so when two
//     nodes briefly both act on one item, one writes and the other writes
//     nothing: no event twice for one transition, no activity line twice.
//   - Webhook deliveries need no owner: the shared outbox is claimed entry
//     by entry under a lease, which a node's rescans renew. In a cluster
//     the lease is clusterOutboxLease, so that a dead node's claimed
//     entries are delivered by another node within 15 s.

// clusterOutboxMinLease is the outbox lease of a cluster at the default
// scan interval and attempt timeout: a dead node's claimed entries lapse
// after it, and a survivor's next full scan (every second by default)
// takes them, within 15 s of the death.
const clusterOutboxMinLease = 10 * time.Second

// clusterOutboxLease is the outbox lease a node takes in a cluster
// (0, the store's default, for a single node): long enough that a live
// node renews its leases (each full scan does) before they lapse, even
// with an attempt in flight, and short enough for a quick takeover.
func clusterOutboxLease(cfg Config) time.Duration {
	if !cfg.Cluster.On() {
		return 0
	}
	return max(clusterOutboxMinLease, 2*cfg.WebhookScanInterval+cfg.WebhookTimeout)
}

// trackerOwner, inboundOwner and onrampOwner are the node as each actor's
// Owner: nil, not a typed nil, for a single node, which works on
// everything.
func (a *App) trackerOwner() tracker.Owner {
	if a.node == nil {
		return nil
	}
	return a.node
}

func (a *App) inboundOwner() inboundrun.Owner {
	if a.node == nil {
		return nil
	}
	return a.node
}

func (a *App) onrampOwner() onrampdesk.Owner {
	if a.node == nil {
		return nil
	}
	return a.node
}

// The store every node of a cluster shares has the fenced writes the
// clustered actors require (they check it again at start).
var (
	_ tracker.FencedStore    = (*postgres.Store)(nil)
	_ inboundrun.FencedStore = (*postgres.Store)(nil)
	_ onrampdesk.FencedStore = (*postgres.Store)(nil)
)
