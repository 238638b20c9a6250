package pulsesim

import (
	"context"
	"fmt"
	"math/big"
	"strconv"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/pulseroute"
	"github.com/swapgate/swapgate/routing/domain/quote"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// Parameters of the sandbox chain.
const (
	// PulseXPoolSideUSD is the USD value of each side of every sandbox PulseX
	// pool at its reference price.
	PulseXPoolSideUSD = 5e6
	// pulseXFeeKeep is 10,000 minus the PulseX fee of 29 bps, in the
	// UniswapV2 getAmountOut form.
	pulseXFeeKeep = 9_971
	// GasPaymentUSD is the value of the sandbox interchain gas payment, paid
	// in the source chain's native coin at its reference price.
	GasPaymentUSD = 0.5
)

// SandboxChain is a deterministic stand-in for PulseChain and the warp-route
// chains: every registry token on 369 with a reference price is paired with
// USDCh in a constant-product pool holding PulseXPoolSideUSD on each side at
// reference prices, with the PulseX fee of 0.29%; the interchain gas payment
// is GasPaymentUSD of the source chain's native coin. It is the genesis
// state: its reserves never move, so the same path and amount always yield
// the same amounts. The sandbox chain 369 deploys its PulseX pools with
// these reserves (GenesisPools, DeployPulseX), whose swaps then move them
// on chain; what still reads SandboxChain itself is what needs the genesis
// state or no chain: the interchain gas payments, the PulseX deployment and
// its arbitrage's reference prices, and quotes priced without the chain's
// node. It is immutable and safe for concurrent use.
type SandboxChain struct {
	reserves map[common.Address]pool // keyed by the non-USDCh token
	gasPay   map[uint64]*big.Int
	usdch    common.Address
}

// pool holds the reserves of token/USDCh.
type pool struct {
	token, usdch *big.Int
}

var _ pulseroute.ChainState = (*SandboxChain)(nil)

// NewSandboxChain builds the sandbox chain from the registry's reference
// prices, which (unlike the live price cache) are known at start-up.
func NewSandboxChain(reg *registry.Registry) (*SandboxChain, error) {
	s := &SandboxChain{
		reserves: make(map[common.Address]pool),
		gasPay:   make(map[uint64]*big.Int),
		usdch:    common.HexToAddress(pulseroute.USDChAddress),
	}
	usdch, ok := reg.Token(quote.PulseChainID, pulseroute.USDChAddress)
	if !ok {
		return nil, fmt.Errorf("sandbox chain: registry has no USDCh on chain %d", quote.PulseChainID)
	}
	usdchPrice, err := refPrice(usdch)
	if err != nil {
		return nil, err
	}
	for _, t := range reg.Tokens(quote.PulseChainID) {
		if t.IsNative() || !common.IsHexAddress(t.Address) || common.HexToAddress(t.Address) == s.usdch {
			continue
		}
		p, err := refPrice(t)
		if err != nil {
			return nil, err
		}
		s.reserves[common.HexToAddress(t.Address)] = pool{
			token: quote.ToUnits(PulseXPoolSideUSD/p, t.Decimals),
			usdch: quote.ToUnits(PulseXPoolSideUSD/usdchPrice, usdch.Decimals),
		}
	}
	for _, c := range reg.Chains() {
		if c.ChainType != registry.EVM {
			continue
		}
		p, err := refPrice(&c.NativeToken)
		if err != nil {
			return nil, err
		}
		s.gasPay[c.ID] = quote.ToUnits(GasPaymentUSD/p, c.NativeToken.Decimals)
	}
	return s, nil
}

// refPrice parses a token's registry reference price.
func refPrice(t *registry.Token) (float64, error) {
	p, err := strconv.ParseFloat(t.PriceUSD, 64)
	if err != nil || !(p > 0) {
		return 0, fmt.Errorf("sandbox chain: %s on chain %d has no usable reference price %q", t.Symbol, t.ChainID, t.PriceUSD)
	}
	return p, nil
}

// QuoteGasPayment is the fixed interchain gas payment of the chain, in its
// native coin's base units.
func (s *SandboxChain) QuoteGasPayment(ctx context.Context, chainID uint64, destination uint32) (*big.Int, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sandbox chain: quote gas payment: %w", err)
	}
	if uint64(destination) == chainID {
		return nil, fmt.Errorf("sandbox chain: quote gas payment: destination %d is the source chain", destination)
	}
	v, ok := s.gasPay[chainID]
	if !ok {
		return nil, fmt.Errorf("sandbox chain: quote gas payment: no EVM chain %d", chainID)
	}
	return new(big.Int).Set(v), nil
}

// AmountsOut follows a PulseX path hop by hop with the UniswapV2 formula
// amountOut = in·9971·rOut / (rIn·10000 + in·9971). Every hop must have
// USDCh on one side.
func (s *SandboxChain) AmountsOut(ctx context.Context, amountIn *big.Int, path []common.Address) ([]*big.Int, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sandbox chain: amounts out: %w", err)
	}
	if len(path) < 2 {
		return nil, fmt.Errorf("sandbox chain: amounts out: path of %d tokens", len(path))
	}
	if amountIn == nil || amountIn.Sign() <= 0 {
		return nil, fmt.Errorf("sandbox chain: amounts out: amount must be positive")
	}
	out := []*big.Int{new(big.Int).Set(amountIn)}
	for i := 0; i+1 < len(path); i++ {
		rIn, rOut, err := s.hop(path[i], path[i+1])
		if err != nil {
			return nil, err
		}
		out = append(out, pulseroute.AmountOut(out[i], rIn, rOut))
	}
	return out, nil
}

var _ pulseroute.AmountsInReader = (*SandboxChain)(nil)

// AmountsIn follows a PulseX path backwards with UniswapV2's getAmountIn,
// amountIn = rIn·out·10000 / ((rOut − out)·9971) + 1, the least input (or
// one above it) whose AmountsOut reaches out on each hop. An output the
// pool cannot give (out ≥ rOut) answers ErrNoPair, as a reverted
// getAmountsIn does.
func (s *SandboxChain) AmountsIn(ctx context.Context, amountOut *big.Int, path []common.Address) ([]*big.Int, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sandbox chain: amounts in: %w", err)
	}
	if len(path) < 2 {
		return nil, fmt.Errorf("sandbox chain: amounts in: path of %d tokens", len(path))
	}
	if amountOut == nil || amountOut.Sign() <= 0 {
		return nil, fmt.Errorf("sandbox chain: amounts in: amount must be positive")
	}
	amounts := make([]*big.Int, len(path))
	amounts[len(path)-1] = new(big.Int).Set(amountOut)
	for i := len(path) - 1; i > 0; i-- {
		rIn, rOut, err := s.hop(path[i-1], path[i])
		if err != nil {
			return nil, err
		}
		out := amounts[i]
		if out.Cmp(rOut) >= 0 {
			return nil, fmt.Errorf("sandbox chain: %s/%s holds less than %s: %w", path[i-1].Hex(), path[i].Hex(), out, pulseroute.ErrNoPair)
		}
		amounts[i-1] = pulseroute.AmountIn(out, rIn, rOut)
	}
	return amounts, nil
}

// hop returns the reserves of a pool in the direction of a swap.
func (s *SandboxChain) hop(from, to common.Address) (rIn, rOut *big.Int, err error) {
	switch {
	case from == s.usdch:
		if p, ok := s.reserves[to]; ok {
			return p.usdch, p.token, nil
		}
	case to == s.usdch:
		if p, ok := s.reserves[from]; ok {
			return p.token, p.usdch, nil
		}
	}
	return nil, nil, fmt.Errorf("sandbox chain: %s/%s: %w", from.Hex(), to.Hex(), pulseroute.ErrNoPair)
}
