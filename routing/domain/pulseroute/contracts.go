package pulseroute

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/swapgate/swapgate/routing/domain/quote"
)

// USDCDecimals is the precision of USDC on every warp-route chain and of the
// synthetic USDCh on PulseChain; the warp route moves amounts 1:1.
const USDCDecimals uint8 = 6

// PulseXFeeBps is the liquidity-provider fee of one PulseX v2 pool hop
// (0.29%), already included in getAmountsOut results; shapes report it.
const PulseXFeeBps = 29

// Addresses of the public contracts, as published. They are constants so
// they cannot be changed at run time; the typed values come from Contracts.
const (
	USDChAddress        = "0xa5B0D537CeBE97f087Dc5FE5732d70719caaEc1D"
	PulseXRouterAddress = "0x165C3410fC91EF562C50559f7d2289fEbed552d9"
	PulseXFactoryAddr   = "0x29eA7545DEf87022BAdc76323F373EA1e707C523"
	WPLSAddress         = "0xA1077a294dDE1B09bB078844df40758a5D0f9a27"
	// HyperlaneMailbox369 and HyperlaneIGP369 are PulseChain's Hyperlane
	// mailbox and interchain gas paymaster, kept for reference and for
	// reading delivery state.
	HyperlaneMailbox369 = "0x56176C7Fb66FdD70ef962Ae53a46A226c7F6a2Cc"
	HyperlaneIGP369     = "0xc996F4D7d7F39189921A08F3DaAf1b9ff0b20006"
)

// WarpRoute is one side of the Hyperlane USDC warp route. On the collateral
// chains Router is a HypERC20Collateral that pulls Token with transferFrom
// (the user approves Router first). On PulseChain the route is synthetic: the
// HypERC20 token USDCh is its own router, so Router == Token there, and
// transferRemote burns from the sender without an approval.
type WarpRoute struct {
	ChainID   uint64
	Router    common.Address
	Token     common.Address
	Decimals  uint8
	Synthetic bool
}

// Domain is the Hyperlane domain of the route's chain, which equals the chain
// id for every chain of this route.
func (w WarpRoute) Domain() uint32 { return uint32(w.ChainID) }

// NeedsApproval reports whether transferRemote on this side pulls tokens
// with transferFrom, so that the sender must approve Router first.
func (w WarpRoute) NeedsApproval() bool { return !w.Synthetic }

// PulseX is the PulseX v2 deployment on PulseChain, a UniswapV2Router02 fork
// whose wrapped native coin is WPLS.
type PulseX struct {
	Router  common.Address
	Factory common.Address
	WPLS    common.Address
}

// warpRouteFacts lists the collateral side of the warp route: chain id,
// router, USDC. It is a function, not a variable, so nothing can mutate it.
func warpRouteFacts() []WarpRoute {
	row := func(id uint64, router, usdc string) WarpRoute {
		return WarpRoute{ChainID: id, Router: common.HexToAddress(router), Token: common.HexToAddress(usdc), Decimals: USDCDecimals}
	}
	return []WarpRoute{
		row(1, "0x7E5db36f762A3eae5d6ef18f16dEe9DF619bb539", "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"),
		row(42161, "0xf73436AB044AAA679fb619D0DEe4a1dAfE84ac1a", "0xaf88d065e77c8cC2239327C5EDb3A432268e5831"),
		row(8453, "0x32aB2fcCA30864027056a41B329e0195f2f7E250", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"),
		row(10, "0x0bBeA6812fb3fcBcA126eDb558e551B3f1702026", "0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85"),
		row(137, "0x21AA4e2107618Ffc21Fa3cec2BdfdF22469A2e8A", "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359"),
		row(43114, "0x2A872Ae01375A5ca7e044cb0e75cb97621Ca954A", "0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E"),
		row(130, "0x2A872Ae01375A5ca7e044cb0e75cb97621Ca954A", "0x078D782b760474a361dDA0AF3839290b0EF57AD6"),
	}
}

// Config carries the addresses of Swapgate's own contracts. They have no
// public deployment, so they are configuration: a chain left out falls back
// to the deterministic sandbox default of SandboxAddress. Only chains with a
// collateral warp route may be configured, since both contracts move USDC
// over that route.
type Config struct {
	// InboundReceivers receives step 1 of a multi-step inbound quote on each
	// source chain and bridges it on once the deposit is registered.
	InboundReceivers map[uint64]common.Address
	// SenderContracts is what the user signs against for a direct inbound
	// quote on each sender chain.
	SenderContracts map[uint64]common.Address
}

// Contracts is the immutable set of contract facts the provider routes
// with. Build it once with NewContracts and share it freely.
type Contracts struct {
	warp    map[uint64]WarpRoute
	chains  []uint64
	pulseX  PulseX
	inbound map[uint64]common.Address
	sender  map[uint64]common.Address
}

// Labels of the sandbox defaults of Swapgate's own contracts.
const (
	LabelInboundReceiver = "InboundReceiver"
	LabelSenderContract  = "SenderContract"
)

// sandboxDeployer is the nominal CREATE2 deployer of the sandbox defaults.
const sandboxDeployerLabel = "swapgate/sandbox/deployer"

// SandboxAddress derives the default address of one of Swapgate's own
// contracts on one chain, as CREATE2 would place it: deployer =
// keccak256("swapgate/sandbox/deployer")[12:], salt =
// keccak256("swapgate/<label>/<chainID>"), init-code hash =
// keccak256("swapgate/<label>"). It is stable across runs and machines so
// sandbox quotes, recorded tests and the sandbox chain all agree, and no one
// controls a key for it.
func SandboxAddress(label string, chainID uint64) common.Address {
	deployer := common.BytesToAddress(crypto.Keccak256([]byte(sandboxDeployerLabel))[12:])
	salt := crypto.Keccak256Hash([]byte("swapgate/" + label + "/" + strconv.FormatUint(chainID, 10)))
	initHash := crypto.Keccak256([]byte("swapgate/" + label))
	return crypto.CreateAddress2(deployer, salt, initHash)
}

// DefaultContracts is the published facts with the sandbox defaults for
// Swapgate's own contracts.
func DefaultContracts() *Contracts {
	c, err := NewContracts(Config{})
	if err != nil {
		// An empty Config cannot fail; a failure is a broken fact table.
		panic(fmt.Sprintf("pulseroute: default contracts: %v", err))
	}
	return c
}

// NewContracts builds the contract set, applying cfg over the sandbox
// defaults. It refuses a configured chain without a collateral warp route
// and a zero address.
func NewContracts(cfg Config) (*Contracts, error) { return newContracts(cfg, true) }

// NewLiveContracts builds the contract set of live mode: the published
// facts and only the addresses cfg configures for Swapgate's own contracts.
// The sandbox defaults are addresses no one deployed, so a live quote must
// never send a user or step 1's USDC there: a chain without a configured
// sender contract has no direct inbound route, one without an inbound
// receiver no multi-step route.
func NewLiveContracts(cfg Config) (*Contracts, error) { return newContracts(cfg, false) }

func newContracts(cfg Config, sandboxDefaults bool) (*Contracts, error) {
	c := &Contracts{
		warp:    make(map[uint64]WarpRoute),
		inbound: make(map[uint64]common.Address),
		sender:  make(map[uint64]common.Address),
		pulseX: PulseX{
			Router:  common.HexToAddress(PulseXRouterAddress),
			Factory: common.HexToAddress(PulseXFactoryAddr),
			WPLS:    common.HexToAddress(WPLSAddress),
		},
	}
	for _, w := range warpRouteFacts() {
		if w.ChainID > math.MaxUint32 {
			return nil, fmt.Errorf("warp route chain %d does not fit a Hyperlane domain", w.ChainID)
		}
		c.warp[w.ChainID] = w
		c.chains = append(c.chains, w.ChainID)
		if sandboxDefaults {
			c.inbound[w.ChainID] = SandboxAddress(LabelInboundReceiver, w.ChainID)
			c.sender[w.ChainID] = SandboxAddress(LabelSenderContract, w.ChainID)
		}
	}
	sort.Slice(c.chains, func(i, j int) bool { return c.chains[i] < c.chains[j] })
	usdch := common.HexToAddress(USDChAddress)
	c.warp[quote.PulseChainID] = WarpRoute{ChainID: quote.PulseChainID, Router: usdch, Token: usdch, Decimals: USDCDecimals, Synthetic: true}

	apply := func(kind string, from map[uint64]common.Address, into map[uint64]common.Address) error {
		for id, addr := range from {
			if w, ok := c.warp[id]; !ok || w.Synthetic {
				return fmt.Errorf("%s for chain %d: chain has no collateral USDC warp route", kind, id)
			}
			if addr == (common.Address{}) {
				return fmt.Errorf("%s for chain %d: zero address", kind, id)
			}
			into[id] = addr
		}
		return nil
	}
	if err := apply("inbound receiver", cfg.InboundReceivers, c.inbound); err != nil {
		return nil, err
	}
	if err := apply("sender contract", cfg.SenderContracts, c.sender); err != nil {
		return nil, err
	}
	return c, nil
}

// WarpRoute returns the warp-route side on a chain: collateral on the sender
// chains, synthetic (USDCh) on PulseChain.
func (c *Contracts) WarpRoute(chainID uint64) (WarpRoute, bool) {
	w, ok := c.warp[chainID]
	return w, ok
}

// USDCh is the synthetic side of the warp route on PulseChain.
func (c *Contracts) USDCh() WarpRoute { return c.warp[quote.PulseChainID] }

// SenderChains lists, ascending, the chains with a collateral warp route:
// the sources of inbound quotes and the destinations of outbound ones.
func (c *Contracts) SenderChains() []uint64 { return append([]uint64(nil), c.chains...) }

// IsBridgeToken reports whether token is the warp-route token on chainID:
// canonical USDC on a sender chain, USDCh on PulseChain.
func (c *Contracts) IsBridgeToken(chainID uint64, token common.Address) bool {
	w, ok := c.warp[chainID]
	return ok && w.Token == token
}

// PulseX returns the PulseX v2 deployment.
func (c *Contracts) PulseX() PulseX { return c.pulseX }

// InboundReceiver is the address step 1 of a multi-step quote delivers USDC
// to on a source chain.
func (c *Contracts) InboundReceiver(chainID uint64) (common.Address, bool) {
	a, ok := c.inbound[chainID]
	return a, ok
}

// SenderContract is the contract a direct inbound quote's user signs against
// on a sender chain. A direct outbound quote from PulseChain has none of
// Swapgate's own: the user calls transferRemote on USDCh().Router.
func (c *Contracts) SenderContract(chainID uint64) (common.Address, bool) {
	a, ok := c.sender[chainID]
	return a, ok
}

// Domain converts a chain id into its Hyperlane domain, which equals the
// chain id for the chains of the warp route; it refuses ids beyond uint32.
func Domain(chainID uint64) (uint32, error) {
	if chainID > math.MaxUint32 {
		return 0, fmt.Errorf("chain %d has no Hyperlane domain: id exceeds uint32", chainID)
	}
	return uint32(chainID), nil
}
