package quote

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/common/math"

	"github.com/swapgate/swapgate/routing/domain/registry"
)

const (
	pfWallet  = "0x8ba1f109551bD432803012645Ac136ddd64DBA72"
	pfSpender = "0x1111111111111111111111111111111111111111"
	pfRouter  = "0x2222222222222222222222222222222222222222"
)

// pfRoute is a route spending amount of its input through pfSpender, with
// gas costs of send and approve wei in the native coin and value wei sent
// with its transaction.
func pfRoute(amount, send, approve, value int64, native *registry.Token) *Route {
	return &Route{FromAmount: big.NewInt(amount), ApprovalAddress: pfSpender,
		GasCosts: []GasCost{
			{Type: "APPROVE", Limit: 57_500, Amount: big.NewInt(approve), Token: native},
			{Type: "SEND", Limit: 300_000, Amount: big.NewInt(send), Token: native},
			{Type: "SUM", Amount: big.NewInt(send + approve), Token: native},
		},
		Tx: &TxRequest{To: pfRouter, From: pfWallet, Data: []byte{0xca, 0xfe}, Value: big.NewInt(value), ChainID: 1, GasLimit: 300_000}}
}

// TestPlanPreflight holds the checks, approvals and calls to the wallet's
// state: an allowance enough or short, a token that must be reset with a
// non-zero allowance or a zero one, a native input, approvalAmount=max.
func TestPlanPreflight(t *testing.T) {
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	eth, _ := reg.Chain(1)
	usdc, _ := reg.Token(1, "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48")
	usdt, _ := reg.Token(1, "0xdAC17F958D2ee523a2206206994597C13D831ec7")
	ether, _ := reg.Token(1, registry.NativeAddressEVM)
	if !usdt.ApprovalReset || usdc.ApprovalReset || !ether.IsNative() {
		t.Fatalf("registry: USDT reset %v, USDC reset %v", usdt.ApprovalReset, usdc.ApprovalReset)
	}
	n := big.NewInt
	tests := []struct {
		name      string
		token     *registry.Token
		max       bool
		route     *Route
		w         WalletState
		allowance *short
		balance   *short
		nativeGas *short
		approvals []*big.Int // the amounts approved, in order
	}{
		{name: "enough allowance", token: usdc, route: pfRoute(100, 7, 3, 0, ether),
			w: WalletState{Native: n(1000), Token: n(100), Allowance: n(100)}},
		{name: "short allowance, exact", token: usdc, route: pfRoute(100, 7, 3, 0, ether),
			w: WalletState{Native: n(1000), Token: n(500), Allowance: n(0)}, allowance: &short{0, 100}, approvals: []*big.Int{n(100)}},
		{name: "short allowance of a token that needs no reset", token: usdc, route: pfRoute(100, 7, 3, 0, ether),
			w: WalletState{Native: n(1000), Token: n(500), Allowance: n(40)}, allowance: &short{40, 100}, approvals: []*big.Int{n(100)}},
		{name: "reset token with a non-zero allowance", token: usdt, route: pfRoute(100, 7, 3, 0, ether),
			w: WalletState{Native: n(1000), Token: n(500), Allowance: n(40)}, allowance: &short{40, 100}, approvals: []*big.Int{n(0), n(100)}},
		{name: "reset token with a zero allowance", token: usdt, route: pfRoute(100, 7, 3, 0, ether),
			w: WalletState{Native: n(1000), Token: n(500), Allowance: n(0)}, allowance: &short{0, 100}, approvals: []*big.Int{n(100)}},
		{name: "reset token with enough allowance", token: usdt, route: pfRoute(100, 7, 3, 0, ether),
			w: WalletState{Native: n(1000), Token: n(500), Allowance: n(100)}},
		{name: "approvalAmount=max", token: usdt, max: true, route: pfRoute(100, 7, 3, 0, ether),
			w: WalletState{Native: n(1000), Token: n(500), Allowance: n(40)}, allowance: &short{40, 100}, approvals: []*big.Int{n(0), math.MaxBig256}},
		{name: "short balance", token: usdc, route: pfRoute(100, 7, 3, 0, ether),
			w: WalletState{Native: n(1000), Token: n(99), Allowance: n(100)}, balance: &short{99, 100}},
		{name: "gas short without approvals (the approval's gas not counted)", token: usdc, route: pfRoute(100, 7, 3, 2, ether),
			w: WalletState{Native: n(8), Token: n(100), Allowance: n(100)}, nativeGas: &short{8, 9}},
		{name: "gas short with approvals", token: usdc, route: pfRoute(100, 7, 3, 0, ether),
			w: WalletState{Native: n(9), Token: n(100), Allowance: n(0)}, allowance: &short{0, 100}, nativeGas: &short{9, 10}, approvals: []*big.Int{n(100)}},
		{name: "native input, enough", token: ether, route: pfRoute(100, 7, 0, 100, ether),
			w: WalletState{Native: n(107)}},
		{name: "native input, value and gas short", token: ether, route: pfRoute(100, 7, 0, 100, ether),
			w: WalletState{Native: n(106)}, balance: &short{106, 107}, nativeGas: &short{106, 107}},
	}
	for _, tt := range tests {
		if tt.token.IsNative() {
			tt.route.ApprovalAddress = ""
		}
		req := &Request{From: eth, FromToken: tt.token, FromAmount: tt.route.FromAmount, FromAddress: pfWallet, ApprovalMax: tt.max}
		q, ok := PreflightQuery(req, tt.route)
		if !ok || q.Native != tt.token.IsNative() || q.Holder != common.HexToAddress(pfWallet) || q.HasSpender == tt.token.IsNative() {
			t.Errorf("%s: query %+v %v", tt.name, q, ok)
		}
		pf := PlanPreflight(req, tt.route, tt.w)
		if pf.Checks == nil || pf.Error != "" {
			t.Fatalf("%s: no checks: %+v", tt.name, pf)
		}
		wantShort(t, tt.name+": allowance", pf.Checks.Allowance, tt.allowance)
		wantShort(t, tt.name+": balance", pf.Checks.Balance, tt.balance)
		wantShort(t, tt.name+": nativeGas", pf.Checks.NativeGas, tt.nativeGas)
		if a := pf.Checks.Allowance; a != nil && a.Spender != pfSpender {
			t.Errorf("%s: allowance spender %q", tt.name, a.Spender)
		}
		if b := pf.Checks.Balance; b != nil && b.Token != tt.token.Address {
			t.Errorf("%s: balance token %q", tt.name, b.Token)
		}
		if len(pf.Approvals) != len(tt.approvals) {
			t.Fatalf("%s: %d approvals, want %d", tt.name, len(pf.Approvals), len(tt.approvals))
		}
		for i, a := range pf.Approvals {
			m, err := approveABI.MethodById(a.Data[:4])
			if err != nil || m.Name != "approve" {
				t.Fatalf("%s: approval %d calls %x", tt.name, i, a.Data[:4])
			}
			args, err := m.Inputs.Unpack(a.Data[4:])
			if err != nil || args[0].(common.Address) != common.HexToAddress(pfSpender) || args[1].(*big.Int).Cmp(tt.approvals[i]) != 0 {
				t.Errorf("%s: approval %d: approve%v (%v), want (%s, %s)", tt.name, i, args, err, pfSpender, tt.approvals[i])
			}
			if a.To != tt.token.Address || a.From != pfWallet || a.Value.Sign() != 0 || a.ChainID != 1 || a.GasLimit != 57_500 {
				t.Errorf("%s: approval %d %+v", tt.name, i, a)
			}
		}
		if len(pf.Calls) != len(pf.Approvals)+1 {
			t.Fatalf("%s: %d calls for %d approvals", tt.name, len(pf.Calls), len(pf.Approvals))
		}
		for i, a := range pf.Approvals {
			if c := pf.Calls[i]; c.To != a.To || string(c.Data) != string(a.Data) || c.Value.Sign() != 0 {
				t.Errorf("%s: call %d %+v is not approval %d", tt.name, i, c, i)
			}
		}
		if last := pf.Calls[len(pf.Calls)-1]; last.To != pfRouter || string(last.Data) != "\xca\xfe" || last.Value.Cmp(tt.route.Tx.Value) != 0 {
			t.Errorf("%s: the last call %+v is not the swap", tt.name, last)
		}
	}
}

// short is a shortfall a test expects.
type short struct{ current, required int64 }

func wantShort(t *testing.T, what string, got *Shortfall, want *short) {
	t.Helper()
	switch {
	case want == nil && got != nil:
		t.Errorf("%s: %+v, want null", what, got)
	case want != nil && got == nil:
		t.Errorf("%s: null, want current %d required %d", what, want.current, want.required)
	case want != nil && (got.Current.Int64() != want.current || got.Required.Int64() != want.required):
		t.Errorf("%s: current %s required %s, want %d %d", what, got.Current, got.Required, want.current, want.required)
	}
}

// TestPreflightQueryOnlyForEVMTransactions: a route is checked only from an
// EVM source with an EVM transaction.
func TestPreflightQueryOnlyForEVMTransactions(t *testing.T) {
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	eth, _ := reg.Chain(1)
	sol, _ := reg.Chain(1151111081099710)
	usdc, _ := reg.Token(1, "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48")
	evmTx := &TxRequest{To: pfRouter, ChainID: 1}
	for _, c := range []struct {
		name string
		from *registry.Chain
		tx   *TxRequest
		want bool
	}{
		{"EVM", eth, evmTx, true},
		{"indicative (no transaction)", eth, nil, false},
		{"serialized transaction", eth, &TxRequest{ChainID: 1, Encoding: EncodingBase64, Data: []byte{1}}, false},
		{"Solana source", sol, evmTx, false},
	} {
		req := &Request{From: c.from, FromToken: usdc, FromAddress: pfWallet}
		if _, ok := PreflightQuery(req, &Route{Tx: c.tx, ApprovalAddress: pfSpender}); ok != c.want {
			t.Errorf("%s: checked %v, want %v", c.name, ok, c.want)
		}
	}
}

// preflightJSON is the struct form of data's checks, approvals and calls,
// which AppendResponse must write as encoding/json would.
type preflightJSON struct {
	Quote       any       `json:"quote"`
	Provider    string    `json:"provider"`
	FeeBps      int       `json:"feeBps"`
	IsDryQuote  bool      `json:"isDryQuote"`
	ExpiresAt   int64     `json:"expiresAt"`
	Checks      *checksJS `json:"checks"`
	ChecksError string    `json:"checksError,omitempty"`
	Approvals   *[]txJSON `json:"approvals,omitempty"`
	Calls       *[]callJS `json:"calls,omitempty"`
}

type checksJS struct {
	Allowance *shortJS `json:"allowance"`
	Balance   *shortJS `json:"balance"`
	NativeGas *shortJS `json:"nativeGas"`
}

type shortJS struct {
	Spender  string `json:"spender,omitempty"`
	Token    string `json:"token,omitempty"`
	Current  string `json:"current"`
	Required string `json:"required"`
}

type callJS struct {
	To    string `json:"to"`
	Data  string `json:"data"`
	Value string `json:"value"`
}

// TestPreflightEncodingMatchesEncodingJSON: the checks (each null or a
// shortfall), the approvals, the calls, and a failed read's null checks
// with checksError are written as encoding/json writes their struct form,
// after expiresAt; a quote without them is written as before.
func TestPreflightEncodingMatchesEncodingJSON(t *testing.T) {
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	eth, _ := reg.Chain(1)
	usdt, _ := reg.Token(1, "0xdAC17F958D2ee523a2206206994597C13D831ec7")
	req := &Request{ID: "qt_pf", From: eth, FromToken: usdt, FromAmount: big.NewInt(100), FromAddress: pfWallet, ApprovalMax: true}
	rt := pfRoute(100, 7, 3, 0, nil)
	rt.Shape = ShapeDirect // data.quote marshalled: the test is about what follows it
	read := PlanPreflight(req, rt, WalletState{Native: big.NewInt(5), Token: big.NewInt(50), Allowance: big.NewInt(40)})
	for i, pf := range []*Preflight{read, PreflightFailed(`no node for chain "1"`), nil} {
		is := &Issued{ID: req.ID, Request: req, Route: rt, Provider: "aggregator", FeeBps: 25, ExpiresAt: time.Unix(1_700_000_060, 0), Preflight: pf}
		want := preflightJSON{Provider: "aggregator", FeeBps: 25, ExpiresAt: 1_700_000_060}
		var wantJSON []byte
		if pf == nil {
			wantJSON, err = json.Marshal(quoteResponse{Provider: "aggregator", FeeBps: 25, ExpiresAt: 1_700_000_060})
		} else {
			if pf.Checks != nil {
				sj := func(s *Shortfall) *shortJS {
					if s == nil {
						return nil
					}
					return &shortJS{Spender: s.Spender, Token: s.Token, Current: s.Current.String(), Required: s.Required.String()}
				}
				want.Checks = &checksJS{Allowance: sj(pf.Checks.Allowance), Balance: sj(pf.Checks.Balance), NativeGas: sj(pf.Checks.NativeGas)}
				approvals := []txJSON{}
				for _, a := range pf.Approvals {
					approvals = append(approvals, txJSON{To: a.To, From: a.From, Data: hexutil.Encode(a.Data), Value: hexBig(a.Value),
						ChainID: a.ChainID, GasLimit: "0x" + big.NewInt(int64(a.GasLimit)).Text(16)})
				}
				want.Approvals = &approvals
				calls := []callJS{}
				for _, c := range pf.Calls {
					calls = append(calls, callJS{To: c.To, Data: hexutil.Encode(c.Data), Value: hexBig(c.Value)})
				}
				want.Calls = &calls
			} else {
				want.ChecksError = pf.Error
			}
			wantJSON, err = json.Marshal(want)
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err := AppendResponse(nil, nil, req, is)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(wantJSON) {
			t.Errorf("case %d:\n got %s\nwant %s", i, got, wantJSON)
		}
		if pf == read && (!strings.Contains(string(got), `"approvals":[{"to":"0xdAC17F958D2ee523a2206206994597C13D831ec7"`) || len(read.Approvals) != 2) {
			t.Errorf("the read case approves %d times: %s", len(read.Approvals), got)
		}
	}
}
