package quote

import (
	"encoding/hex"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/math"

	"github.com/swapgate/swapgate/routing/codec/jsonenc"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// A quote from an EVM source answers, beside its route, whether the wallet
// can send it as it stands: the pre-flight checks (the allowance the
// route's spender has of the input token, the wallet's balance of it, and
// its native coin for gas), read from the source chain once the route is
// chosen, and, when the allowance is short, the approvals to send first,
// ready to sign, with every call in order for EIP-5792's wallet_sendCalls.
// What is read is WalletQuery's; what is answered is PlanPreflight's.

// The values of the approvalAmount parameter.
const (
	// ApprovalExact approves the route's input and no more (the default).
	ApprovalExact = "exact"
	// ApprovalMax approves 2^256-1, which an ERC-20 never spends down.
	ApprovalMax = "max"
)

// ApproveGasLimit is the gas limit of an approval when the route's gas
// costs carry no APPROVE entry with one: an ERC-20 approve takes about
// 46,000 gas (Tether's on Ethereum about 48,000), with a margin.
const ApproveGasLimit = 60_000

// WalletQuery is what the chain is asked before a route is answered: in
// one read, Holder's native balance, its balance of Token (unless Native)
// and, when Spender is set, the allowance Holder gave Spender of Token.
type WalletQuery struct {
	ChainID uint64
	Holder  common.Address
	Token   common.Address
	// Native is set when the input is the chain's coin: no token balance
	// or allowance is read.
	Native bool
	// HasSpender is set when the route names a spender (Spender).
	HasSpender bool
	Spender    common.Address
}

// WalletState is the chain's answer to a WalletQuery, in base units. Token
// is nil for a native input and Allowance nil without a spender.
type WalletState struct {
	Native, Token, Allowance *big.Int
}

// Shortfall is one check that failed: what the wallet has (Current) and
// what the route needs (Required), in base units. Spender is set on the
// allowance, Token on the balance.
type Shortfall struct {
	Spender, Token    string
	Current, Required *big.Int
}

// Checks are a route's pre-flight checks: each nil when nothing is
// missing.
type Checks struct {
	Allowance, Balance, NativeGas *Shortfall
}

// Call is one call of EIP-5792's wallet_sendCalls: {to, data, value}.
type Call struct {
	To    string
	Data  []byte
	Value *big.Int
}

// Preflight is what a quote answers about its wallet: the checks and, with
// them, the approvals and calls; or, when the chain could not be read,
// Checks nil and Error the reason (no approvals or calls, since whether
// they are needed is not known).
type Preflight struct {
	Checks    *Checks
	Error     string
	Approvals []TxRequest
	Calls     []Call
}

// PreflightFailed is the Preflight of a quote whose chain could not be
// read: checks null, checksError the reason.
func PreflightFailed(reason string) *Preflight {
	return &Preflight{Error: reason}
}

// PreflightQuery says what to read for a route, and false when the route
// takes no checks: only a route whose source is an EVM chain and which
// carries an EVM transaction (not an indicative quote, not a serialized
// non-EVM transaction) is checked.
func PreflightQuery(req *Request, rt *Route) (WalletQuery, bool) {
	if req.From == nil || req.From.ChainType != registry.EVM || rt.Tx == nil || rt.Tx.Encoding != "" ||
		!common.IsHexAddress(req.FromAddress) {
		return WalletQuery{}, false
	}
	q := WalletQuery{ChainID: req.From.ID, Holder: common.HexToAddress(req.FromAddress), Native: req.FromToken.IsNative()}
	if !q.Native {
		if !common.IsHexAddress(req.FromToken.Address) {
			return WalletQuery{}, false
		}
		q.Token = common.HexToAddress(req.FromToken.Address)
		if common.IsHexAddress(rt.ApprovalAddress) {
			q.HasSpender, q.Spender = true, common.HexToAddress(rt.ApprovalAddress)
		}
	}
	return q, true
}

// approveABI is ERC-20's approve(address,uint256).
var approveABI = func() abi.ABI {
	a, err := abi.JSON(strings.NewReader(`[{"type":"function","name":"approve","stateMutability":"nonpayable",` +
		`"inputs":[{"name":"spender","type":"address"},{"name":"value","type":"uint256"}],"outputs":[{"name":"","type":"bool"}]}]`))
	if err != nil {
		panic("quote: approve ABI: " + err.Error())
	}
	return a
}()

// ApproveCalldata is approve(spender, amount) ABI-encoded.
func ApproveCalldata(spender common.Address, amount *big.Int) []byte {
	b, err := approveABI.Pack("approve", spender, amount)
	if err != nil {
		// Only an amount outside uint256 fails, and none is passed.
		panic("quote: pack approve: " + err.Error())
	}
	return b
}

// PlanPreflight judges a route against the wallet's state w (read for
// PreflightQuery(req, rt)):
//   - allowance: the spender's allowance of the input against the route's
//     input (fromAmount); none for a native input or a route without a
//     spender;
//   - balance: the input token's balance against the input; for a native
//     input, the coin's balance against the transaction's value plus the
//     route's gas;
//   - nativeGas: the coin's balance against the route's gas plus the
//     transaction's value (for a native input the same figure as the
//     balance's: both show when it is short).
//
// The route's gas is the sum of its gas costs in the native coin (SEND,
// APPROVE, …; not SUM, which totals the others, nor FEE, which the
// transaction's value pays), its APPROVE costs only when approvals are
// needed.
//
// When the allowance is short, Approvals are approve(spender, amount)
// transactions to the token from the wallet, value 0: amount is the input,
// or 2^256-1 with req.ApprovalMax; a token marked ApprovalReset (USDT on
// Ethereum) whose current allowance is not zero is first approved to 0,
// since its approve refuses a change between two non-zero amounts. Calls
// are the approvals, then the route's transaction.
func PlanPreflight(req *Request, rt *Route, w WalletState) *Preflight {
	amount := rt.FromAmount
	if amount == nil {
		amount = req.FromAmount
	}
	if amount == nil {
		amount = new(big.Int)
	}
	tx := rt.Tx
	value := tx.Value
	if value == nil {
		value = new(big.Int)
	}
	native := w.Native
	if native == nil {
		native = new(big.Int)
	}
	pf := &Preflight{Checks: &Checks{}}
	var approvals []TxRequest
	if !req.FromToken.IsNative() && rt.ApprovalAddress != "" && w.Allowance != nil && w.Allowance.Cmp(amount) < 0 {
		pf.Checks.Allowance = &Shortfall{Spender: rt.ApprovalAddress, Current: w.Allowance, Required: amount}
		spender, token := common.HexToAddress(rt.ApprovalAddress), req.FromToken.Address
		limit := approveLimit(rt)
		approve := func(v *big.Int) TxRequest {
			return TxRequest{To: token, From: req.FromAddress, Data: ApproveCalldata(spender, v), Value: new(big.Int),
				ChainID: req.From.ID, GasLimit: limit}
		}
		if req.FromToken.ApprovalReset && w.Allowance.Sign() != 0 {
			approvals = append(approvals, approve(new(big.Int)))
		}
		grant := amount
		if req.ApprovalMax {
			grant = math.MaxBig256
		}
		approvals = append(approvals, approve(grant))
	}
	gasNeed := new(big.Int).Add(routeGas(rt, len(approvals) > 0), value)
	if req.FromToken.IsNative() {
		if native.Cmp(gasNeed) < 0 {
			pf.Checks.Balance = &Shortfall{Token: req.FromToken.Address, Current: native, Required: gasNeed}
		}
	} else if w.Token != nil && w.Token.Cmp(amount) < 0 {
		pf.Checks.Balance = &Shortfall{Token: req.FromToken.Address, Current: w.Token, Required: amount}
	}
	if native.Cmp(gasNeed) < 0 {
		pf.Checks.NativeGas = &Shortfall{Current: native, Required: gasNeed}
	}
	pf.Approvals = approvals
	pf.Calls = make([]Call, 0, len(approvals)+1)
	for i := range approvals {
		pf.Calls = append(pf.Calls, Call{To: approvals[i].To, Data: approvals[i].Data, Value: approvals[i].Value})
	}
	pf.Calls = append(pf.Calls, Call{To: tx.To, Data: tx.Data, Value: value})
	return pf
}

// approveLimit is the gas limit of the route's APPROVE cost, or
// ApproveGasLimit.
func approveLimit(rt *Route) uint64 {
	for _, g := range rt.GasCosts {
		if g.Type == "APPROVE" && g.Limit > 0 {
			return g.Limit
		}
	}
	return ApproveGasLimit
}

// routeGas is the route's gas in the native coin (see PlanPreflight).
func routeGas(rt *Route, approving bool) *big.Int {
	sum := new(big.Int)
	for _, g := range rt.GasCosts {
		switch g.Type {
		case "SUM", "FEE":
			continue
		case "APPROVE":
			if !approving {
				continue
			}
		}
		if g.Amount == nil || (g.Token != nil && !g.Token.IsNative()) {
			continue
		}
		sum.Add(sum, g.Amount)
	}
	return sum
}

// appendPreflight appends data's checks (an object, or null and
// checksError) and, when the checks were read, approvals and calls.
func appendPreflight(b []byte, pf *Preflight) []byte {
	if pf.Checks == nil {
		b = append(b, `,"checks":null,"checksError":`...)
		return jsonenc.AppendString(b, pf.Error)
	}
	c := pf.Checks
	b = append(b, `,"checks":{"allowance":`...)
	b = appendShortfall(b, c.Allowance)
	b = append(b, `,"balance":`...)
	b = appendShortfall(b, c.Balance)
	b = append(b, `,"nativeGas":`...)
	b = appendShortfall(b, c.NativeGas)
	b = append(b, `},"approvals":[`...)
	for i := range pf.Approvals {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendEVMTx(b, &pf.Approvals[i])
	}
	b = append(b, `],"calls":[`...)
	for i, c := range pf.Calls {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"to":`...)
		b = jsonenc.AppendString(b, c.To)
		b = append(b, `,"data":"0x`...)
		b = hex.AppendEncode(b, c.Data)
		b = append(b, `","value":`...)
		b = appendHexBig(b, c.Value)
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendShortfall appends {spender?, token?, current, required}, or null.
func appendShortfall(b []byte, s *Shortfall) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	b = append(b, '{')
	if s.Spender != "" {
		b = append(b, `"spender":`...)
		b = jsonenc.AppendString(b, s.Spender)
		b = append(b, ',')
	}
	if s.Token != "" {
		b = append(b, `"token":`...)
		b = jsonenc.AppendString(b, s.Token)
		b = append(b, ',')
	}
	b = append(b, `"current":`...)
	b = appendDecString(b, s.Current)
	b = append(b, `,"required":`...)
	b = appendDecString(b, s.Required)
	return append(b, '}')
}
