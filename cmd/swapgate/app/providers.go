package app

import (
	"context"
	"fmt"
	"slices"

	"github.com/swapgate/swapgate/actors/refdata"
	"github.com/swapgate/swapgate/actors/tracker"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/tools"
)

// buildProviders makes the providers the engine races and the tool catalog
// they quote with from the opened upstreams (see openUpstreams), one loop
// over them in list order, and fills in what the rest of the stack takes
// from what they offer (status sources, the deposit notifier, the network
// providers).
//
// Sandbox mode: the sandbox market's aggregator and intents, and pulseroute
// on the sandbox chain (or on the nodes --pulse-rpc names), each replaced by
// the configured upstreams of its provider; the catalog is the sandbox's.
//
// Live mode: only the configured upstreams; a provider without one is not
// built at all (a request it alone could serve is NO_ROUTE_FOUND saying
// so), and the catalog is what the upstreams list. No part of the
// simulator is built.
//
// A provider several upstreams answer as races them as legs of its own
// (raced).
func buildProviders(ctx context.Context, mode string, cfg QuoteConfig, evmRPC map[uint64]string, reg *registry.Registry,
	ref *refdata.Service, contracts *pulseroute.Contracts, qs *quoteStack, ups []opened) ([]quote.Provider, error) {
	b := &buildEnv{mode: mode, cfg: cfg, evmRPC: evmRPC, reg: reg, ref: ref, contracts: contracts, qs: qs}
	if mode != ModeLive {
		var err error
		if qs.catalog, err = tools.Load(reg); err != nil {
			return nil, err
		}
	}
	var (
		live    []tools.Tool
		members = map[string][]member{}
		status  = map[string][]opened{}
	)
	for _, u := range ups {
		pm, ok := u.client.(providerMaker)
		if !ok {
			continue
		}
		p, err := pm.provider(ctx, b)
		if err != nil {
			return nil, err
		}
		if p == nil {
			continue
		}
		members[u.Provider] = append(members[u.Provider], member{up: u, p: p})
		if t, ok := u.client.(toolOffer); ok {
			for _, tool := range t.tools() {
				// Two upstreams may name a tool alike (LI.FI lists a
				// bridge keyed relay): the first in the list keeps it.
				if slices.ContainsFunc(live, func(x tools.Tool) bool { return x.Key == tool.Key }) {
					cfg.Logger.Warn("tool listed by two upstreams; the first keeps it", "tool", tool.Key, "upstream", u.Name)
					continue
				}
				live = append(live, tool)
			}
		}
		if s, ok := u.client.(stepOneOffer); ok && b.stepOne == nil {
			b.stepOne = s.stepOne()
		}
		if _, ok := u.client.(statusOffer); ok {
			status[u.Provider] = append(status[u.Provider], u)
		}
		if d, ok := u.client.(depositOffer); ok && qs.depositNotifier == nil {
			qs.depositNotifier = d.depositNotifier()
		}
		if n, ok := u.client.(networkOffer); ok && n.network() && !contains(qs.network, u.Provider) {
			qs.network = append(qs.network, u.Provider)
		}
	}
	for name, us := range status {
		qs.statusSources[name] = statusOf(us)
	}
	if mode == ModeLive {
		var err error
		if qs.catalog, err = tools.New(live); err != nil {
			return nil, fmt.Errorf("app: live tool catalog: %w", err)
		}
	}
	var out []quote.Provider
	for _, name := range ProviderNames() {
		switch ms := members[name]; len(ms) {
		case 0:
		case 1:
			out = append(out, ms[0].p)
		default:
			out = append(out, &raced{name: name, members: ms})
		}
	}
	return out, nil
}

// statusOf is the status source of a provider's upstreams that offer one:
// the one alone, or each swap's at the upstream that claims it.
func statusOf(us []opened) tracker.Source {
	if len(us) == 1 {
		return us[0].client.(statusOffer).statusSource()
	}
	var s routedStatus
	for _, u := range us {
		src := u.client.(statusOffer).statusSource()
		if c, ok := u.client.(swapClaimer); ok {
			s.claimers = append(s.claimers, claimedSource{claim: c, src: src})
		} else if s.rest == nil {
			s.rest = src
		}
	}
	return s
}

// legNames are the legs of the upstreams that race as legs of a provider
// shared with others, by provider: the engine counts each apart, with its
// own breaker.
func legNames(ps []quote.Provider) map[string][]string {
	out := map[string][]string{}
	for _, p := range ps {
		if r, ok := p.(*raced); ok {
			for _, m := range r.members {
				out[r.name] = append(out[r.name], m.up.Name)
			}
		}
	}
	return out
}
