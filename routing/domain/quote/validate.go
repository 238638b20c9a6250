package quote

import (
	"bytes"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/swapgate/swapgate/routing/domain/address"
	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/domain/tools"
)

// DefaultSlippage is 0.5%, the slippage of a request that gives none.
const DefaultSlippage = 0.005

// MaxSlippageBps is the largest slippage accepted: 50%.
const MaxSlippageBps = 5000

var maxUint256 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))

// Params are the raw query parameters of /v1/quote and /v1/routes; an
// empty value means the parameter was absent or empty, which Parse treats
// alike. The values may alias the HTTP request's buffers, which is why they
// are bytes: Parse reads chain IDs and amounts in place and copies only the
// values the Request keeps, so it must finish before those buffers are
// reused.
type Params struct {
	FromChain, ToChain, FromToken, ToToken, FromAmount, FromAddress []byte
	ToAddress, Slippage, Tools, DenyTools, PreferredTool, Order     []byte
	// ToAmount asks for an exact-output quote (instead of FromAmount);
	// RefundTo is where a refund goes on the source chain.
	ToAmount, RefundTo []byte
	// ApprovalAmount is how much a quote's approvals allow the spender:
	// "exact" (the default) or "max" (see ApprovalMax).
	ApprovalAmount []byte
	// The race's timing (see Strategy): maxWaitMs, minWaitMs,
	// expectedResults, reduceEveryMs.
	MaxWaitMs, MinWaitMs, ExpectedResults, ReduceEveryMs []byte
}

// MaxExpectedResults bounds expectedResults: far more than any pair has
// legs, so only a slip is refused.
const MaxExpectedResults = 1000

// Parse validates the parameters against the registry and the tool
// catalog and returns the typed request. deadline is the server's quote
// deadline, which bounds the timing parameters. Every refusal is
// INVALID_PARAMS naming the parameter in details.param.
func Parse(reg *registry.Registry, cat *tools.Catalog, p Params, deadline time.Duration) (*Request, *apierr.Error) {
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
	if err = amounts(req, p); err != nil {
		return nil, err
	}
	if len(p.FromAddress) == 0 {
		return nil, apierr.Param("fromAddress", "fromAddress is required")
	}
	req.FromAddress = string(p.FromAddress)
	if e := address.Validate(req.From.AddressFormat, req.FromAddress); e != nil {
		return nil, apierr.Param("fromAddress", "fromAddress is not a valid "+req.From.Name+" address: "+e.Error()).With("value", req.FromAddress)
	}
	if len(p.ToAddress) != 0 {
		req.ToAddress = string(p.ToAddress)
		if e := address.Validate(req.To.AddressFormat, req.ToAddress); e != nil {
			return nil, apierr.Param("toAddress", "toAddress is not a valid "+req.To.Name+" address: "+e.Error()).With("value", req.ToAddress)
		}
	} else {
		// No toAddress: a dry quote to fromAddress; indicative only when
		// fromAddress cannot receive on the destination chain.
		req.Dry = true
		req.ToAddress = req.FromAddress
		if address.Validate(req.To.AddressFormat, req.FromAddress) != nil {
			req.Indicative = true
		}
	}
	if len(p.RefundTo) != 0 {
		// A refund is paid on the source chain, so refundTo is an address
		// of the source chain's family, checked with its codec.
		req.RefundTo = string(p.RefundTo)
		if e := address.Validate(req.From.AddressFormat, req.RefundTo); e != nil {
			return nil, apierr.Param("refundTo", "refundTo is not a valid "+req.From.Name+" address: "+e.Error()).With("value", req.RefundTo)
		}
	}
	if len(p.Slippage) != 0 {
		if req.Slippage, err = slippage(string(p.Slippage)); err != nil {
			return nil, err
		}
	}
	if len(p.Tools) != 0 {
		if req.AllowTools, err = toolSet(cat, "tools", string(p.Tools)); err != nil {
			return nil, err
		}
	}
	if len(p.DenyTools) != 0 {
		if req.DenyTools, err = toolSet(cat, "denyTools", string(p.DenyTools)); err != nil {
			return nil, err
		}
	}
	if len(p.PreferredTool) != 0 {
		preferred := string(p.PreferredTool)
		if _, ok := cat.Tool(preferred); !ok {
			return nil, apierr.Param("preferredTool", "unknown tool key "+preferred+"; see /v1/tools").With("value", preferred)
		}
		req.PreferredTool = preferred
	}
	if len(p.Order) != 0 {
		switch o := Order(strings.ToUpper(string(p.Order))); o {
		case Recommended, Fastest, Cheapest:
			req.Order = o
		default:
			return nil, apierr.Param("order", "order must be RECOMMENDED, FASTEST or CHEAPEST").With("value", string(p.Order))
		}
	}
	if req.Strategy, err = strategyParams(p, deadline); err != nil {
		return nil, err
	}
	switch string(p.ApprovalAmount) {
	case "", ApprovalExact:
	case ApprovalMax:
		req.ApprovalMax = true
	default:
		return nil, apierr.Param("approvalAmount", "approvalAmount must be exact or max").With("value", string(p.ApprovalAmount))
	}
	return req, nil
}

// strategyParams reads the timing parameters: maxWaitMs from 1 to the
// server's deadline; minWaitMs and reduceEveryMs from 0 to maxWaitMs (the
// deadline when absent); expectedResults from 0 (every leg) to
// MaxExpectedResults.
func strategyParams(p Params, deadline time.Duration) (StrategyParams, *apierr.Error) {
	var sp StrategyParams
	limit := deadline
	deadlineMs := deadline.Milliseconds()
	if len(p.MaxWaitMs) != 0 {
		v, ok := parseUint64(p.MaxWaitMs)
		if !ok || v < 1 || v > uint64(deadlineMs) {
			return sp, apierr.Param("maxWaitMs", "maxWaitMs must be a whole number of milliseconds from 1 to the server's quote deadline, "+
				strconv.FormatInt(deadlineMs, 10)).With("value", string(p.MaxWaitMs)).With("max", deadlineMs)
		}
		sp.MaxWait, sp.HasMaxWait = time.Duration(v)*time.Millisecond, true
		limit = sp.MaxWait
	}
	limitMs := limit.Milliseconds()
	bounded := func(param string, raw []byte) (time.Duration, *apierr.Error) {
		v, ok := parseUint64(raw)
		if !ok || v > uint64(limitMs) {
			return 0, apierr.Param(param, param+" must be a whole number of milliseconds from 0 to maxWaitMs (the server's quote deadline when absent), "+
				strconv.FormatInt(limitMs, 10)).With("value", string(raw)).With("max", limitMs)
		}
		return time.Duration(v) * time.Millisecond, nil
	}
	var err *apierr.Error
	if len(p.MinWaitMs) != 0 {
		if sp.MinWait, err = bounded("minWaitMs", p.MinWaitMs); err != nil {
			return sp, err
		}
		sp.HasMinWait = true
	}
	if len(p.ExpectedResults) != 0 {
		v, ok := parseUint64(p.ExpectedResults)
		if !ok || v > MaxExpectedResults {
			return sp, apierr.Param("expectedResults", "expectedResults must be a whole number from 0 (every leg) to "+
				strconv.Itoa(MaxExpectedResults)).With("value", string(p.ExpectedResults)).With("max", MaxExpectedResults)
		}
		sp.ExpectedResults, sp.HasExpected = int(v), true
	}
	if len(p.ReduceEveryMs) != 0 {
		if sp.ReduceEvery, err = bounded("reduceEveryMs", p.ReduceEveryMs); err != nil {
			return sp, err
		}
		sp.HasReduce = true
	}
	return sp, nil
}

func chain(reg *registry.Registry, param string, v []byte) (*registry.Chain, *apierr.Error) {
	if len(v) == 0 {
		return nil, apierr.Param(param, param+" is required")
	}
	id, ok := parseUint64(v)
	if !ok {
		return nil, apierr.Param(param, param+" must be a chain ID (a positive integer)").With("value", string(v))
	}
	c, ok := reg.Chain(id)
	if !ok {
		return nil, apierr.Param(param, "unknown chain ID "+string(v)+"; see /v1/chains").With("value", string(v))
	}
	return c, nil
}

// token resolves a token address on a chain: "native" and the EVM zero
// address name the native coin; anything else must be well-formed for the
// chain and known to the registry.
func token(reg *registry.Registry, param string, b []byte, c *registry.Chain) (*registry.Token, *apierr.Error) {
	if len(b) == 0 {
		return nil, apierr.Param(param, param+" is required")
	}
	if bytes.EqualFold(b, native) || string(b) == registry.NativeAddressEVM {
		t, _ := reg.Token(c.ID, "native")
		return t, nil
	}
	v := string(b)
	if t, ok := reg.Token(c.ID, v); ok {
		return t, nil
	}
	if e := address.ValidateToken(c.AddressFormat, v); e != nil {
		return nil, apierr.Param(param, param+" is not a valid token address on "+c.Name+": "+e.Error()).With("value", v)
	}
	return nil, apierr.Param(param, param+" "+v+" is not a token Swapgate knows on "+c.Name+"; see /v1/tokens").With("value", v)
}

// native is the token parameter that names a chain's native coin.
var native = []byte("native")

// amountParams are the two amount parameters, exactly one of which a
// quote request gives, as refusals name them.
var amountParams = []string{"fromAmount", "toAmount"}

// amounts reads fromAmount or toAmount, exactly one of them: fromAmount
// quotes what a given input delivers, toAmount (an exact-output quote) the
// input that delivers at least that much. A malformed value is refused
// naming its own parameter before the pair is judged, so that a bad
// toAmount beside a good fromAmount is named as such.
func amounts(req *Request, p Params) *apierr.Error {
	var err *apierr.Error
	if len(p.FromAmount) != 0 {
		if req.FromAmount, err = amount("fromAmount", p.FromAmount); err != nil {
			return err
		}
	}
	if len(p.ToAmount) != 0 {
		if req.ToAmount, err = amount("toAmount", p.ToAmount); err != nil {
			return err
		}
	}
	switch {
	case req.FromAmount == nil && req.ToAmount == nil:
		return apierr.Param("fromAmount", "fromAmount (the amount sent) or toAmount (the amount to receive) is required").
			With("params", amountParams)
	case req.FromAmount != nil && req.ToAmount != nil:
		return apierr.Param("toAmount", "give fromAmount (the amount sent) or toAmount (the amount to receive), not both").
			With("params", amountParams)
	}
	return nil
}

func amount(param string, v []byte) (*big.Int, *apierr.Error) {
	if len(v) == 0 {
		return nil, apierr.Param(param, param+" is required")
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return nil, apierr.Param(param, param+" must be a positive base-10 integer in the token's smallest unit").With("value", string(v))
		}
	}
	var n *big.Int
	if u, ok := parseUint64(v); ok {
		n = new(big.Int).SetUint64(u)
	} else if n, ok = new(big.Int).SetString(string(v), 10); !ok {
		return nil, apierr.Param(param, param+" must be greater than zero").With("value", string(v))
	}
	if n.Sign() <= 0 {
		return nil, apierr.Param(param, param+" must be greater than zero").With("value", string(v))
	}
	if n.Cmp(maxUint256) > 0 {
		return nil, apierr.Param(param, param+" does not fit in uint256").With("value", string(v))
	}
	return n, nil
}

// parseUint64 reads a base-10 unsigned integer in place, as
// strconv.ParseUint(s, 10, 64) would: digits only, no sign, no overflow.
// strconv takes a string, and converting the query bytes would allocate.
func parseUint64(v []byte) (uint64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	var n uint64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (math.MaxUint64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// slippage parses a slippage: below 1 a fraction, 1 or more basis points;
// negative, NaN or above 5000 bps is refused.
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
	if len(set) == 0 {
		// tools=%20 would otherwise allow no tool at all (a NO_ROUTE_FOUND
		// that blames the pair), and denyTools=, deny none.
		return nil, apierr.Param(param, param+" must name at least one tool key; see /v1/tools").With("value", v)
	}
	return set, nil
}
