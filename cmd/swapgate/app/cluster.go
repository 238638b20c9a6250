package app

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/swapgate/swapgate/actors/cluster"
)

// ClusterConfig is a node's cluster membership (serve's --cluster-*):
// without a Name the service runs as one process, as it always did.
type ClusterConfig struct {
	// Name is the cluster's name (--cluster-name).
	Name string
	// Bind is the node's cluster address, host:port (--cluster-bind); with
	// the automanaged provider its health endpoint listens on the next port.
	Bind string
	// Peers are every node's cluster address, comma-separated
	// (--cluster-peers): the automanaged provider, a fixed set of nodes.
	Peers string
	// Etcd are etcd endpoints, comma-separated (--cluster-etcd): the etcd
	// provider, for production.
	Etcd string
}

// On reports whether the node runs in a cluster.
func (c ClusterConfig) On() bool { return c.Name != "" }

// SplitList splits a comma-separated setting, dropping blanks.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// ErrClusterNeedsSharedStore refuses a cluster whose nodes would each keep
// their own state.
var ErrClusterNeedsSharedStore = errors.New("a cluster needs the shared store: set --store postgres://… (the same on every node)")

// CheckCluster is the settings check of a cluster configuration: nothing
// when Name is empty; otherwise a bind address, exactly one provider, and
// the PostgreSQL store every node shares.
func CheckCluster(c *Config) error {
	cc := c.Cluster
	if !cc.On() {
		if cc.Bind != "" || cc.Peers != "" || cc.Etcd != "" {
			return errors.New("--cluster-bind, --cluster-peers and --cluster-etcd need --cluster-name")
		}
		return nil
	}
	if StoreKind(c.Store) != "postgres" {
		return ErrClusterNeedsSharedStore
	}
	if _, port, err := cluster.HostPort(cc.Bind); err != nil || port <= 0 || port >= 65535 {
		return fmt.Errorf("--cluster-bind must be host:port with a port from 1 to 65534, got %q", cc.Bind)
	}
	peers, etcd := SplitList(cc.Peers), SplitList(cc.Etcd)
	if (len(peers) == 0) == (len(etcd) == 0) {
		return errors.New("a cluster needs exactly one of --cluster-peers (automanaged) and --cluster-etcd")
	}
	for _, p := range peers {
		if _, port, err := cluster.HostPort(p); err != nil || port <= 0 || port >= 65535 {
			return fmt.Errorf("--cluster-peers: %q is not host:port", p)
		}
	}
	return nil
}

// startCluster joins the cluster before any actor is spawned on the
// system (remoting changes its address), with the grain kinds this node
// hosts.
func (a *App) startCluster(ctx context.Context, kinds []cluster.Kind) error {
	cc := a.cfg.Cluster
	node, err := cluster.Start(ctx, a.sys, cluster.Config{Name: cc.Name, Bind: cc.Bind, Peers: SplitList(cc.Peers),
		Etcd: SplitList(cc.Etcd), Kinds: kinds, Logger: a.log})
	if err != nil {
		return fmt.Errorf("app: join cluster %q: %w", cc.Name, err)
	}
	a.node = node
	return nil
}

// clusterCollector exposes the node's view of the cluster at scrape time:
// swapgate_cluster_members (the members it sees) and swapgate_cluster_grains
// (the activations it hosts, by kind).
type clusterCollector struct{ node *cluster.Node }

var (
	clusterMembersDesc = prometheus.NewDesc("swapgate_cluster_members",
		"Members of the cluster this node sees in the topology.", nil, nil)
	clusterGrainsDesc = prometheus.NewDesc("swapgate_cluster_grains",
		"Grain activations this node hosts, by kind.", []string{"kind"}, nil)
)

func (c clusterCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- clusterMembersDesc
	ch <- clusterGrainsDesc
}

func (c clusterCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(clusterMembersDesc, prometheus.GaugeValue, float64(len(c.node.Members())))
	for kind, n := range c.node.Hosted() {
		ch <- prometheus.MustNewConstMetric(clusterGrainsDesc, prometheus.GaugeValue, float64(n), kind)
	}
}
