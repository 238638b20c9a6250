package sandbox

import (
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/tools"
)

// PriceFunc returns the USD price of a token, identified by its chain and
// its registry address in lower case (the key the price cache uses).
type PriceFunc func(chainID uint64, token string) (float64, bool)

// GasPriceFunc returns a chain's standard-tier gas price in wei.
type GasPriceFunc func(chainID uint64) (*big.Int, bool)

// ToolConfig is the injected behaviour and the market depth of one tool.
// Zero values mean "no injection" and "the default for the tool's type".
type ToolConfig struct {
	// LatencyMs delays every answer of the tool.
	LatencyMs int
	// FailureRate is the share of quotes, in [0,1], the tool fails with
	// UPSTREAM_ERROR; the choice is a hash of quote id and tool.
	FailureRate float64
	// Hang makes the tool answer only when the context is done.
	Hang bool
	// Panic makes the tool panic.
	Panic bool
	// LiquidityUSD is the depth of the tool's constant-product pool.
	LiquidityUSD float64
	// MinAmountUSD is the smallest input the tool quotes.
	MinAmountUSD float64
}

// Config is the per-tool configuration of the market, keyed by tool key.
type Config struct {
	Tools map[string]ToolConfig
}

// Default depths and floors by tool type.
const (
	DefaultDEXLiquidityUSD     = 20e6
	DefaultBridgeLiquidityUSD  = 50e6
	DefaultIntentsLiquidityUSD = 30e6
	DefaultDEXMinUSD           = 1
	DefaultBridgeMinUSD        = 10
	DefaultIntentsMinUSD       = 5
)

// Market is the sandbox upstream. It is immutable after New and safe for
// concurrent use.
type Market struct {
	reg      *registry.Registry
	cat      *tools.Catalog
	price    PriceFunc
	gasPrice GasPriceFunc
	cfg      Config
	router   routerCalls
	erc20    abi.ABI
	// Per-chain and per-token values that never change, worked out once
	// so that pricing a leg does not: lower-case token addresses (the
	// price function's key), fallback gas prices, router addresses, and
	// the text each tool's fee is listed under.
	lower       map[*registry.Token]string
	fallbackGas map[uint64]*big.Int
	routers     map[uint64]routerAddr
	feeText     map[*tools.Tool]feeText
}

// routerAddr is a chain's sandbox router and its EIP-55 text.
type routerAddr struct {
	addr common.Address
	hex  string
}

// New builds a market. price and gasPrice are consulted on every quote, so
// they must be cheap and safe for concurrent use (cache reads).
func New(reg *registry.Registry, cat *tools.Catalog, price PriceFunc, gasPrice GasPriceFunc, cfg Config) (*Market, error) {
	if reg == nil || cat == nil || price == nil || gasPrice == nil {
		return nil, errors.New("sandbox: registry, catalog, price and gas price are all required")
	}
	for key, tc := range cfg.Tools {
		if _, ok := cat.Tool(key); !ok {
			return nil, fmt.Errorf("sandbox: config for unknown tool %q", key)
		}
		if tc.FailureRate < 0 || tc.FailureRate > 1 || tc.LatencyMs < 0 || tc.LiquidityUSD < 0 || tc.MinAmountUSD < 0 {
			return nil, fmt.Errorf("sandbox: tool %q: configuration out of range", key)
		}
	}
	routerABI, err := RouterABI()
	if err != nil {
		return nil, err
	}
	router, err := newRouterCalls(routerABI)
	if err != nil {
		return nil, err
	}
	erc20, err := ERC20ABI()
	if err != nil {
		return nil, err
	}
	m := &Market{reg: reg, cat: cat, price: price, gasPrice: gasPrice, cfg: cfg, router: router, erc20: erc20,
		lower: map[*registry.Token]string{}, fallbackGas: map[uint64]*big.Int{}, routers: map[uint64]routerAddr{}, feeText: feeTexts(cat)}
	for _, c := range reg.Chains() {
		for _, t := range reg.Tokens(c.ID) {
			m.lower[t] = strings.ToLower(t.Address)
		}
		if p, ok := fallbackGasPrice(c); ok {
			m.fallbackGas[c.ID] = p
		}
		a := RouterAddress(c.ID)
		m.routers[c.ID] = routerAddr{addr: a, hex: a.Hex()}
	}
	return m, nil
}

// Tool looks a tool up in the market's catalog, so that a provider built on
// the market (pulseroute) sees the same tools the market prices.
func (m *Market) Tool(key string) (*tools.Tool, bool) { return m.cat.Tool(key) }

// lowerAddress is a token's address in lower case.
func (m *Market) lowerAddress(t *registry.Token) string {
	if s, ok := m.lower[t]; ok {
		return s
	}
	return strings.ToLower(t.Address)
}

// routerHex is the EIP-55 text of a chain's sandbox router.
func (m *Market) routerHex(chainID uint64) string {
	if r, ok := m.routers[chainID]; ok {
		return r.hex
	}
	return RouterAddress(chainID).Hex()
}

// toolConfig returns the tool's configuration with type defaults filled in.
func (m *Market) toolConfig(t *tools.Tool) ToolConfig {
	tc := m.cfg.Tools[t.Key]
	if tc.LiquidityUSD == 0 {
		switch t.Type {
		case tools.TypeDEX:
			tc.LiquidityUSD = DefaultDEXLiquidityUSD
		case tools.TypeIntents:
			tc.LiquidityUSD = DefaultIntentsLiquidityUSD
		default:
			tc.LiquidityUSD = DefaultBridgeLiquidityUSD
		}
	}
	if tc.MinAmountUSD == 0 {
		switch t.Type {
		case tools.TypeDEX:
			tc.MinAmountUSD = DefaultDEXMinUSD
		case tools.TypeIntents:
			tc.MinAmountUSD = DefaultIntentsMinUSD
		default:
			tc.MinAmountUSD = DefaultBridgeMinUSD
		}
	}
	return tc
}
