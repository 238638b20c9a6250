package app

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/swapgate/swapgate/routing/adapters/pulserpc"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// pulseReserves puts local pricing of the chain-369 leg in front of next
// (the router's getAmountsOut over eth_call): a snapshot of the PulseX
// pairs' reserves read from chain 369's node at url, so that a multi-step
// quote waits for its step 1 alone. It answers next itself where
// --pulse-reserves-max-age is 0. The snapshot's refresh loop runs from now
// until the quote stack stops, under a context of its own (the one given
// to Start may end with the start), and its age and fallbacks are the
// quote stack's metrics.
func (q *quoteStack) pulseReserves(ctx context.Context, cfg QuoteConfig, url string, reg *registry.Registry,
	contracts *pulseroute.Contracts, next pulseroute.ChainState) (pulseroute.ChainState, error) {
	if cfg.PulseReservesMaxAge <= 0 || url == "" {
		return next, nil
	}
	r, err := pulserpc.DialReserves(ctx, url, contracts, pulseroute.PricedPairs(reg, contracts), next,
		pulserpc.ReservesConfig{MaxAge: cfg.PulseReservesMaxAge, Timeout: cfg.rpcTimeout, Logger: cfg.Logger})
	if err != nil {
		return nil, fmt.Errorf("app: %w", err)
	}
	q.reserves = append(q.reserves, r)
	q.stopReserves = append(q.stopReserves, r.Start(context.WithoutCancel(ctx)))
	return r, nil
}

// reservesCollector exposes the reserves snapshots at scrape time:
// swapgate_pulse_reserves_age_seconds, how long ago the freshest was last
// seen current (+Inf when there is none: local pricing off, or no read
// has succeeded yet), and
// swapgate_pulse_reserves_fallbacks_total, the amounts the router priced
// because the snapshot could not (stale, or a hop outside it). An age
// climbing towards --pulse-reserves-max-age means the node stopped
// answering; fallbacks climbing with it mean the quotes wait for the
// router again.
type reservesCollector struct{ readers []*pulserpc.Reserves }

var (
	reservesAgeDesc = prometheus.NewDesc("swapgate_pulse_reserves_age_seconds",
		"How long ago the PulseX reserves snapshot was last seen current, by chain.", []string{"chain"}, nil)
	reservesFallbacksDesc = prometheus.NewDesc("swapgate_pulse_reserves_fallbacks_total",
		"PulseX amounts priced by the router's getAmountsOut/getAmountsIn because the reserves snapshot was stale or lacked a hop, by chain.", []string{"chain"}, nil)
)

func (c reservesCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- reservesAgeDesc
	ch <- reservesFallbacksDesc
}

func (c reservesCollector) Collect(ch chan<- prometheus.Metric) {
	chain := fmt.Sprint(quote.PulseChainID)
	var fallbacks uint64
	age := math.Inf(1)
	for _, r := range c.readers {
		if a, ok := r.Age(); ok {
			age = min(age, a.Seconds())
		}
		fallbacks += r.Fallbacks()
	}
	ch <- prometheus.MustNewConstMetric(reservesAgeDesc, prometheus.GaugeValue, age, chain)
	ch <- prometheus.MustNewConstMetric(reservesFallbacksDesc, prometheus.CounterValue, float64(fallbacks), chain)
}

// sandboxReserves is a Reserves over the sandbox chain 369's node, built
// with the quote stack and started once the sandbox chains run (they start
// after the quote stack): until then its snapshot is empty and the sandbox
// chain's genesis state prices the leg, which is what the chain's pools
// hold until a swap moves them.
type sandboxReserves struct {
	res  *pulserpc.Reserves
	node *lateNode
}

// lateNode is the sandbox chains' JSON-RPC node as Reserves reads it:
// bound by readSandboxReserves, before which nothing reads it.
type lateNode struct {
	chains atomic.Pointer[jsonRPCChainsRef]
}

type jsonRPCChainsRef struct{ jsonRPCChains }

func (n *lateNode) ChainIDs() []uint64 { return []uint64{quote.PulseChainID} }

func (n *lateNode) JSONRPC(ctx context.Context, chainID uint64, body []byte) []byte {
	c := n.chains.Load()
	if c == nil {
		return []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"the sandbox chains have not started"}}`)
	}
	return c.JSONRPC(ctx, chainID, body)
}

// sandboxPulseReserves puts local pricing from the sandbox chain 369's
// PulseX pools in front of next in sandbox mode: the same reader as live
// mode's, over the chain's node in process (the ethclient code of a real
// node, without a socket), so that a swap that moved a pool moves the
// quotes. It answers next itself where --pulse-reserves-max-age is 0.
func (q *quoteStack) sandboxPulseReserves(ctx context.Context, cfg QuoteConfig, reg *registry.Registry,
	contracts *pulseroute.Contracts, next pulseroute.ChainState) (pulseroute.ChainState, error) {
	if cfg.PulseReservesMaxAge <= 0 {
		return next, nil
	}
	node := &lateNode{}
	c, err := sandboxNode(ctx, node, quote.PulseChainID)
	if err != nil {
		return nil, err
	}
	r := pulserpc.NewReserves(c, "", contracts, pulseroute.PricedPairs(reg, contracts), next,
		pulserpc.ReservesConfig{MaxAge: cfg.PulseReservesMaxAge, Timeout: cfg.rpcTimeout, Logger: cfg.Logger})
	q.reserves = append(q.reserves, r)
	q.sandboxReserves = append(q.sandboxReserves, sandboxReserves{res: r, node: node})
	return r, nil
}

// readSandboxReserves binds the sandbox chains' node to the readers
// sandboxPulseReserves built and starts them, until the quote stack stops.
func (q *quoteStack) readSandboxReserves(ctx context.Context, chains any) {
	c, ok := chains.(jsonRPCChains)
	if !ok {
		return
	}
	for _, s := range q.sandboxReserves {
		s.node.chains.Store(&jsonRPCChainsRef{c})
		q.stopReserves = append(q.stopReserves, s.res.Start(context.WithoutCancel(ctx)))
	}
	q.sandboxReserves = nil
}
