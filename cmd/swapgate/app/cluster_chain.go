package app

import (
	"context"
	"fmt"

	"github.com/swapgate/swapgate/actors/cluster"
	"github.com/swapgate/swapgate/actors/sandboxchain"
	"github.com/swapgate/swapgate/edge"
	"github.com/swapgate/swapgate/routing/adapters/evmbalance"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// sandboxChains is what the service uses of the sandbox chains: the
// sandbox endpoints, the balance reader's fallback and the ledger of the
// trackers, the inbound runner and the on-ramp desk. A single node runs
// them in-process (*sandboxchain.Service); a cluster's nodes reach each
// chain's grain (*sandboxchain.Remote), so that every node sees one chain.
type sandboxChains interface {
	edge.SandboxChain
	evmbalance.Source
	sandboxchain.Chains
	sandboxchain.RelayChains
	ChainIDs() []uint64
}

var (
	_ sandboxChains = (*sandboxchain.Service)(nil)
	_ sandboxChains = (*sandboxchain.Remote)(nil)
)

// clusterKinds are the grain kinds this node hosts in a cluster: in
// sandbox mode, the sandbox chains (one grain per chain, its log in the
// shared store; see sandboxchain.GrainKind).
func (a *App) clusterKinds(reg *registry.Registry) ([]cluster.Kind, error) {
	var kinds []cluster.Kind
	if a.cfg.Mode == "" || a.cfg.Mode == ModeSandbox {
		// The contracts are the ones the quotes send users to, as for a
		// single node's chains (pulseroute's defaults).
		grains, err := sandboxchain.NewGrains(reg, a.stores.ChainLog, sandboxchain.Options{Contracts: pulseroute.DefaultContracts(), Logger: a.log})
		if err != nil {
			return nil, fmt.Errorf("app: chain grains: %w", err)
		}
		kinds = append(kinds, cluster.Kind{Name: sandboxchain.GrainKind,
			Activate: func(ctx context.Context, identity string) (cluster.Handler, error) {
				return grains.Activate(ctx, identity)
			}})
	}
	return kinds, nil
}

// remoteChains is a cluster node's view of the sandbox chains: the proxy
// of the chain grains. Nothing is replayed here: a chain's grain replays
// its log when it activates, on its owner. Every node drives the
// arbitrage of chain 369's PulseX pools (sandboxchain.RunArbitrage), which
// only the grain's owner of the moment acts on, until the app closes.
func (a *App) remoteChains(reg *registry.Registry) sandboxChains {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		sandboxchain.RunArbitrage(ctx, a.node, a.cfg.SandboxArbitragePeriod, a.log)
	}()
	a.stopArbitrage = func() { cancel(); <-done }
	r := sandboxchain.NewRemote(reg, a.node, 0, a.log)
	a.log.Info("sandbox chains are cluster grains", "chains", len(r.ChainIDs()), "kind", sandboxchain.GrainKind)
	return r
}
