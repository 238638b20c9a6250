package quote

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/swapgate/swapgate/routing/address"
	"github.com/swapgate/swapgate/routing/apierr"
	"github.com/swapgate/swapgate/routing/registry"
	"github.com/swapgate/swapgate/routing/tools"
)

// DefaultSlippage is 0.5% (DESIGN.md §5.2).
const DefaultSlippage = 0.005

// MaxSlippageBps is the largest slippage accepted: 50%.
const MaxSlippageBps = 5000

var maxUint256 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))

// Params are the raw query parameters of /v1/quote and /v1/routes; a nil
// pointer means the parameter was absent.
type Params struct {
	FromChain, ToChain, FromToken, ToToken, FromAmount, FromAddress *string
	ToAddress, Slippage, Tools, DenyTools, PreferredTool, Order     *string
}

// Parse validates the parameters against the registry and the tool
// catalog and returns the typed request. Every refusal is INVALID_PARAMS
// naming the parameter in details.param.
func Parse(reg *registry.Registry, cat *tools.Catalog, p Params) (*Request, *apierr.Error) {
	req := &Request{Slippage: DefaultSlippage, Order: Recommended}
	var err *apierr.Error
	if req.From, err = chain(reg, "fromChain", p.FromChain); err != nil {
		return nil, err
	}
	if req.To, err = chain(reg, "toChain", p.ToChain); err != nil {
		return nil, err
	}
	if req.FromToken, err = token(reg, "fromToken", p.FromToken, req.From); err != nil {
		return nil, err
	}
	if req.ToToken, err = token(reg, "toToken", p.ToToken, req.To); err != nil {
		return nil, err
	}
	if req.FromAmount, err = amount(p.FromAmount); err != nil {
		return nil, err
	}
	if p.FromAddress == nil || *p.FromAddress == "" {
		return nil, apierr.Param("fromAddress", "fromAddress is required")
	}
	req.FromAddress = *p.FromAddress
	if e := address.Validate(req.From.AddressFormat, req.FromAddress); e != nil {
		return nil, apierr.Param("fromAddress", "fromAddress is not a valid "+req.From.Name+" address: "+e.Error()).With("value", req.FromAddress)
	}
	if p.ToAddress != nil && *p.ToAddress != "" {
		req.ToAddress = *p.ToAddress
		if e := address.Validate(req.To.AddressFormat, req.ToAddress); e != nil {
			return nil, apierr.Param("toAddress", "toAddress is not a valid "+req.To.Name+" address: "+e.Error()).With("value", req.ToAddress)
		}
	} else {
		// DESIGN.md §5.1: a dry quote to fromAddress; indicative only when
		// fromAddress cannot receive on the destination chain.
		req.Dry = true
		req.ToAddress = req.FromAddress
		if address.Validate(req.To.AddressFormat, req.FromAddress) != nil {
			req.Indicative = true
		}
	}
	if p.Slippage != nil && *p.Slippage != "" {
		if req.Slippage, err = slippage(*p.Slippage); err != nil {
			return nil, err
		}
	}
	if p.Tools != nil && *p.Tools != "" {
		if req.AllowTools, err = toolSet(cat, "tools", *p.Tools); err != nil {
			return nil, err
		}
	}
	if p.DenyTools != nil && *p.DenyTools != "" {
		if req.DenyTools, err = toolSet(cat, "denyTools", *p.DenyTools); err != nil {
			return nil, err
		}
	}
	if p.PreferredTool != nil && *p.PreferredTool != "" {
		if _, ok := cat.Tool(*p.PreferredTool); !ok {
			return nil, apierr.Param("preferredTool", "unknown tool key "+*p.PreferredTool+"; see /v1/tools").With("value", *p.PreferredTool)
		}
		req.PreferredTool = *p.PreferredTool
	}
	if p.Order != nil && *p.Order != "" {
		switch o := Order(strings.ToUpper(*p.Order)); o {
		case Recommended, Fastest, Cheapest:
			req.Order = o
		default:
			return nil, apierr.Param("order", "order must be RECOMMENDED, FASTEST or CHEAPEST").With("value", *p.Order)
		}
	}
	return req, nil
}

func chain(reg *registry.Registry, param string, v *string) (*registry.Chain, *apierr.Error) {
	if v == nil || *v == "" {
		return nil, apierr.Param(param, param+" is required")
	}
	id, err := strconv.ParseUint(*v, 10, 64)
	if err != nil {
		return nil, apierr.Param(param, param+" must be a chain ID (a positive integer)").With("value", *v)
	}
	c, ok := reg.Chain(id)
	if !ok {
		return nil, apierr.Param(param, "unknown chain ID "+*v+"; see /v1/chains").With("value", *v)
	}
	return c, nil
}

// token resolves a token address on a chain: "native" and the EVM zero
// address name the native coin; anything else must be well-formed for the
// chain and known to the registry.
func token(reg *registry.Registry, param string, v *string, c *registry.Chain) (*registry.Token, *apierr.Error) {
	if v == nil || *v == "" {
		return nil, apierr.Param(param, param+" is required")
	}
	if strings.EqualFold(*v, "native") || *v == registry.NativeAddressEVM {
		t, _ := reg.Token(c.ID, "native")
		return t, nil
	}
	if t, ok := reg.Token(c.ID, *v); ok {
		return t, nil
	}
	if e := address.ValidateToken(c.AddressFormat, *v); e != nil {
		return nil, apierr.Param(param, param+" is not a valid token address on "+c.Name+": "+e.Error()).With("value", *v)
	}
	return nil, apierr.Param(param, param+" "+*v+" is not a token Swapgate knows on "+c.Name+"; see /v1/tokens").With("value", *v)
}

func amount(v *string) (*big.Int, *apierr.Error) {
	if v == nil || *v == "" {
		return nil, apierr.Param("fromAmount", "fromAmount is required")
	}
	s := *v
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return nil, apierr.Param("fromAmount", "fromAmount must be a positive base-10 integer in the token's smallest unit").With("value", s)
		}
	}
	n, ok := new(big.Int).SetString(s, 10)
	if !ok || n.Sign() <= 0 {
		return nil, apierr.Param("fromAmount", "fromAmount must be greater than zero").With("value", s)
	}
	if n.Cmp(maxUint256) > 0 {
		return nil, apierr.Param("fromAmount", "fromAmount does not fit in uint256").With("value", s)
	}
	return n, nil
}

// slippage parses DESIGN.md §5.2: below 1 a fraction, 1 or more basis points.
func slippage(v string) (float64, *apierr.Error) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0, apierr.Param("slippage", "slippage must be a non-negative number: a fraction below 1 (0.005 = 0.5%) or basis points (50 = 0.5%)").With("value", v)
	}
	if f >= 1 {
		f /= 10_000
	}
	if f > MaxSlippageBps/10_000.0 {
		return 0, apierr.Param("slippage", "slippage above 5000 bps (50%) is refused").With("value", v)
	}
	return f, nil
}

func toolSet(cat *tools.Catalog, param, v string) (map[string]bool, *apierr.Error) {
	set := make(map[string]bool)
	for _, k := range strings.Split(v, ",") {
		k = strings.TrimSpace(k)
		if k == "" {
			continue
		}
		if _, ok := cat.Tool(k); !ok {
			return nil, apierr.Param(param, "unknown tool key "+k+"; see /v1/tools").With("value", k)
		}
		set[k] = true
	}
	return set, nil
}
