package app

import (
	"context"
	"strconv"
	"time"

	"github.com/swapgate/swapgate/actors/sandboxchain"
)

// warpBridgeTime is the sandbox warp route's bridge time: how long after
// a transferRemote's block the sandbox's Hyperlane relayer delivers it on
// the destination chain. It is --sandbox-bridge-scale minutes, the one
// setting every sandbox bridge is timed by (a minute at scale 1, about a
// real relay between finalised blocks; the multi-step runner's bridge
// waits the same), so that tests set it short with the flag.
func warpBridgeTime(cfg Config) time.Duration {
	return time.Duration(cfg.SandboxBridgeScale * float64(time.Minute))
}

// startWarpRelayer starts, in sandbox mode, the sandbox's Hyperlane
// relayer: every warp-route transfer on the sandbox chains, whoever sent
// it, delivered on its destination chain after the bridge time. In a
// cluster each node delivers on the chains whose grain it owns.
func (a *App) startWarpRelayer(_ context.Context, s *startup) error {
	if a.sandbox == nil {
		return nil
	}
	o := sandboxchain.RelayerOptions{Contracts: s.contracts, Delay: warpBridgeTime(s.cfg), Logger: a.log}
	if a.node != nil {
		// Each scan is a call to every warp chain's grain: a slower pace
		// keeps a cluster's nodes from asking them four times a second.
		o.Interval = time.Second
		node := a.node
		o.Delivers = func(dest uint64) bool {
			return node.Owns(sandboxchain.GrainKind + "/" + strconv.FormatUint(dest, 10))
		}
	}
	a.relayer = sandboxchain.StartRelayer(a.sandbox, a.sandbox.ChainIDs(), o)
	return nil
}
