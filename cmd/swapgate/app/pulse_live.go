package app

import (
	"context"
	"fmt"
	"math/big"
	"sort"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/adapters/pulserpc"
	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// PulseContracts are the addresses of Swapgate's own pulseroute contracts
// on the warp-route chains, by chain id. Live mode quotes a direct inbound
// route only from a chain with a sender contract, and a multi-step route
// only from one with an inbound receiver: the sandbox's default addresses
// are deployed nowhere, and a user's USDC sent there would be lost.
type PulseContracts struct {
	// Senders is the sender contract a direct inbound quote's user calls
	// (bridgeAndSwap), per source chain.
	Senders map[uint64]string
	// Receivers is the inbound receiver step 1 of a multi-step quote
	// delivers USDC to, per source chain.
	Receivers map[uint64]string
}

// config parses the addresses into pulseroute's configuration.
func (pc PulseContracts) config() (pulseroute.Config, error) {
	parse := func(what string, in map[uint64]string) (map[uint64]common.Address, error) {
		ids := make([]uint64, 0, len(in))
		for id := range in {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		out := make(map[uint64]common.Address, len(in))
		for _, id := range ids {
			if !common.IsHexAddress(in[id]) {
				return nil, fmt.Errorf("%s for chain %d: %q is not an EVM address", what, id, in[id])
			}
			out[id] = common.HexToAddress(in[id])
		}
		return out, nil
	}
	senders, err := parse("sender contract", pc.Senders)
	if err != nil {
		return pulseroute.Config{}, err
	}
	receivers, err := parse("inbound receiver", pc.Receivers)
	if err != nil {
		return pulseroute.Config{}, err
	}
	return pulseroute.Config{SenderContracts: senders, InboundReceivers: receivers}, nil
}

// Check refuses addresses that are not EVM addresses, zero, or on a chain
// without a collateral USDC warp route, naming the chain.
func (pc PulseContracts) Check() error {
	cfg, err := pc.config()
	if err != nil {
		return err
	}
	_, err = pulseroute.NewLiveContracts(cfg)
	return err
}

// pulseNodes is --pulse-rpc as the composition root reads it, the one
// reading that the live-upstreams check, live pulseroute and the sandbox's
// chain state share: the chains whose pulseroute state is read from a
// node, by chain id. An entry without a URL names no node: serve's
// settings refuse one, naming the flag, and a Config built in code that
// carries one is read alike everywhere, never as a node at an empty URL
// in one place and as none in another.
func pulseNodes(cfg QuoteConfig) map[uint64]string {
	out := make(map[uint64]string, len(cfg.PulseRPC))
	for id, u := range cfg.PulseRPC {
		if strings.TrimSpace(u) != "" {
			out[id] = u
		}
	}
	return out
}

// livePulseroute builds live mode's pulseroute provider from the real
// contracts, or answers nil when --pulse-rpc names no node for chain 369
// (the provider is then absent: nothing about a route to or from 369 can
// be known without it). Chain state is read over JSON-RPC: PulseX
// getAmountsOut and the outbound quoteGasPayment on chain 369's node, the
// inbound quoteGasPayment on the source chain's node, from --pulse-rpc or
// else --evm-rpc (evmRPC); a chain with neither has no routes. USD figures
// come from price (the reference data), gas cost figures from gasPrice (the
// gas oracle); step 1 of a multi-step quote from agg, the live aggregator
// (the LI.FI adapter), or no multi-step routes when agg is nil. Swapgate's
// own contracts are those of cfg.Pulse only.
func livePulseroute(ctx context.Context, cfg QuoteConfig, evmRPC map[uint64]string, reg *registry.Registry,
	price func(chainID uint64, token string) (float64, bool), gasPrice func(chainID uint64) (*big.Int, bool),
	agg pulseroute.Aggregator) (*pulseroute.Provider, error) {
	return livePulserouteOn(ctx, cfg, evmRPC, reg, price, gasPrice, agg, nil)
}

// chainWrap puts something in front of the chain state read over
// JSON-RPC, given chain 369's node URL and the contracts: the service's
// local pricing of the chain-369 leg (quoteStack.pulseReserves).
type chainWrap func(ctx context.Context, url string, contracts *pulseroute.Contracts, next pulseroute.ChainState) (pulseroute.ChainState, error)

// livePulserouteOn is livePulseroute with the chain state wrapped by wrap
// where it is not nil.
func livePulserouteOn(ctx context.Context, cfg QuoteConfig, evmRPC map[uint64]string, reg *registry.Registry,
	price func(chainID uint64, token string) (float64, bool), gasPrice func(chainID uint64) (*big.Int, bool),
	agg pulseroute.Aggregator, wrap chainWrap) (*pulseroute.Provider, error) {
	nodes := pulseNodes(cfg)
	if _, ok := nodes[quote.PulseChainID]; !ok {
		return nil, nil
	}
	pc, err := cfg.Pulse.config()
	if err != nil {
		return nil, fmt.Errorf("app: pulseroute contracts: %w", err)
	}
	contracts, err := pulseroute.NewLiveContracts(pc)
	if err != nil {
		return nil, fmt.Errorf("app: pulseroute contracts: %w", err)
	}
	urls := make(map[uint64]string, len(evmRPC)+len(nodes))
	for id, u := range evmRPC {
		urls[id] = u
	}
	for id, u := range nodes {
		urls[id] = u
	}
	rpcChain, err := pulserpc.Dial(ctx, contracts, urls, cfg.rpcTimeout, nil)
	if err != nil {
		return nil, fmt.Errorf("app: %w", err)
	}
	var chain pulseroute.ChainState = rpcChain
	if wrap != nil {
		if chain, err = wrap(ctx, nodes[quote.PulseChainID], contracts, rpcChain); err != nil {
			return nil, err
		}
	}
	p, err := pulseroute.NewLive(pulseroute.LiveConfig{Registry: reg, Price: price, GasPrice: gasPrice, Aggregator: agg}, chain, contracts)
	if err != nil {
		return nil, fmt.Errorf("app: live pulseroute: %w", err)
	}
	return p, nil
}
