package app

import (
	"testing"
	"time"
)

// TestClusterOutboxLease: a single node keeps the store's default lease; a
// cluster's is 10 s at the default scan interval and attempt timeout (a
// dead node's deliveries taken over within 15 s), and grows with them so
// that a live node's scans renew its leases before they lapse.
func TestClusterOutboxLease(t *testing.T) {
	cases := []struct {
		name          string
		cluster       bool
		scan, timeout time.Duration
		want          time.Duration
	}{
		{"single node", false, time.Second, 5 * time.Second, 0},
		{"cluster, defaults", true, 0, 0, clusterOutboxMinLease},
		{"cluster, a slow scan", true, 10 * time.Second, 5 * time.Second, 25 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			if c.scan > 0 {
				cfg.WebhookScanInterval, cfg.WebhookTimeout = c.scan, c.timeout
			}
			if c.cluster {
				cfg.Cluster = ClusterConfig{Name: "test", Bind: "127.0.0.1:7000", Peers: "127.0.0.1:7000"}
			}
			if got := clusterOutboxLease(cfg); got != c.want {
				t.Fatalf("lease %v, want %v", got, c.want)
			}
			if c.cluster && c.scan == 0 && 2*cfg.WebhookScanInterval+cfg.WebhookTimeout > clusterOutboxMinLease {
				t.Fatalf("the defaults (scan %v, timeout %v) outgrow the cluster's lease", cfg.WebhookScanInterval, cfg.WebhookTimeout)
			}
		})
	}
}
