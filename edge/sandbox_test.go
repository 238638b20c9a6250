package edge

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/valyala/fasthttp"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/idempotency"
	"github.com/swapgate/swapgate/routing/domain/registry"
	"github.com/swapgate/swapgate/routing/sim/sandboxnet"
	"github.com/swapgate/swapgate/routing/sim/simchain"
)

// fakeSandbox answers with sendErr when set, and records what it was asked.
type fakeSandbox struct {
	// evm says which chains it runs; set by the test server.
	evm                func(uint64) bool
	sendErr, faucetErr error
	sent               []simchain.TxRequest
	faucets            []*big.Int
}

// Serves is the sandbox's answer to which chains it has balances of.
func (f *fakeSandbox) Serves(id uint64) bool { return f.evm(id) }

func (f *fakeSandbox) Send(_ context.Context, _ uint64, _ common.Address, tx simchain.TxRequest) (*simchain.Receipt, error) {
	if f.sendErr != nil {
		return nil, f.sendErr
	}
	f.sent = append(f.sent, tx)
	return &simchain.Receipt{TxHash: common.HexToHash("0xabc"), Status: 0, BlockNumber: 3, GasUsed: 50_000,
		RevertReason: "ERC20: insufficient allowance", EffectiveGasPrice: big.NewInt(1)}, nil
}

func (f *fakeSandbox) Faucet(_ context.Context, _ uint64, _, _ common.Address, amount *big.Int) (*simchain.Receipt, error) {
	if f.faucetErr != nil {
		return nil, f.faucetErr
	}
	f.faucets = append(f.faucets, amount)
	return &simchain.Receipt{TxHash: common.HexToHash("0xdef"), Status: 1, BlockNumber: 4, EffectiveGasPrice: big.NewInt(0)}, nil
}

func (f *fakeSandbox) Transaction(context.Context, common.Hash) (sandboxnet.Mined, bool) {
	return sandboxnet.Mined{}, false
}

func (f *fakeSandbox) Balance(context.Context, uint64, common.Address, common.Address) (*big.Int, error) {
	return big.NewInt(9), nil
}

func (f *fakeSandbox) Balances(context.Context, uint64, common.Address) ([]sandboxnet.Balance, error) {
	return []sandboxnet.Balance{{Token: simchain.Token{Symbol: "ETH", Decimals: 18}, Amount: big.NewInt(5)}}, nil
}

// forgetful remembers no idempotent answer.
type forgetful struct{}

func (forgetful) IdempotentAnswer(context.Context, idempotency.Key) (*idempotency.Record, error) {
	return nil, account.ErrNotFound
}
func (forgetful) RememberAnswer(context.Context, idempotency.Key, *idempotency.Record) error {
	return nil
}

func sandboxServer(t *testing.T, sb *fakeSandbox) *Server {
	t.Helper()
	reg, cat := testCatalog(t)
	cfg := DefaultConfig()
	cfg.AnonHeavyPerMin, cfg.AnonReadPerMin = 1<<20, 1<<20
	sb.evm = func(id uint64) bool { c, ok := reg.Chain(id); return ok && c.ChainType == registry.EVM }
	s, err := New(cfg, Deps{Registry: reg, Tools: cat, RefData: fixedRefData{}, Partners: noPartners{},
		Sandbox: sb, Balances: sb, Idempotency: forgetful{}, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type testAnswer struct {
	status int
	Data   json.RawMessage
	Error  *struct {
		Code    string
		Details map[string]any
	}
}

func sbCall(t *testing.T, s *Server, method, uri, body string) testAnswer {
	t.Helper()
	var req fasthttp.Request
	req.Header.SetMethod(method)
	req.SetRequestURI(uri)
	if body != "" {
		req.Header.SetContentType("application/json")
		req.SetBodyString(body)
	}
	ctx := new(fasthttp.RequestCtx)
	ctx.Init(&req, net.TCPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:4000")), nil)
	s.Handler()(ctx)
	a := testAnswer{status: ctx.Response.StatusCode()}
	if err := json.Unmarshal(ctx.Response.Body(), &a); err != nil {
		t.Fatalf("%s %s: %v: %s", method, uri, err, ctx.Response.Body())
	}
	return a
}

const wallet = "0x8ba1f109551bD432803012645Ac136ddd64DBA72"

func TestSandboxRoutesAbsentOutsideSandboxMode(t *testing.T) {
	s := newTestServer(t, DefaultConfig(), io.Discard)
	for _, c := range []struct{ method, uri, body string }{
		{"POST", "/v1/sandbox/broadcast", `{}`},
		{"POST", "/v1/sandbox/faucet", `{}`},
		{"GET", "/v1/sandbox/tx/0x" + strings.Repeat("0", 64), ""},
		{"GET", "/v1/balances?address=" + wallet, ""},
	} {
		if a := sbCall(t, s, c.method, c.uri, c.body); a.status != 404 || a.Error == nil || a.Error.Code != "NOT_FOUND" {
			t.Errorf("%s %s: %d %+v", c.method, c.uri, a.status, a.Error)
		}
	}
}

// TestSandboxBodyRefusals: every refusal names the parameter at fault and
// reaches the chain never.
func TestSandboxBodyRefusals(t *testing.T) {
	usdc := "0xaf88d065e77c8cC2239327C5EDb3A432268e5831"
	tx := func(fields string) string {
		return fmt.Sprintf(`{"chainId":42161,"from":%q,"transactionRequest":{%s}}`, wallet, fields)
	}
	cases := []struct {
		name, uri, body string
		status          int
		code, param     string
	}{
		{"broadcast: not JSON", "/v1/sandbox/broadcast", `{`, 400, "INVALID_BODY", ""},
		{"broadcast: chainId a string", "/v1/sandbox/broadcast", `{"chainId":"42161"}`, 400, "VALIDATION_ERROR", ""},
		{"broadcast: unknown field", "/v1/sandbox/broadcast", `{"chain":1}`, 400, "VALIDATION_ERROR", ""},
		{"broadcast: no chainId", "/v1/sandbox/broadcast", `{"from":"` + wallet + `"}`, 400, "INVALID_PARAMS", "chainId"},
		{"broadcast: unknown chain", "/v1/sandbox/broadcast", `{"chainId":4242,"from":"` + wallet + `","transactionRequest":{"to":"` + usdc + `"}}`, 400, "INVALID_PARAMS", "chainId"},
		{"broadcast: Solana", "/v1/sandbox/broadcast", `{"chainId":1151111081099710,"from":"` + wallet + `","transactionRequest":{"to":"` + usdc + `"}}`, 400, "INVALID_PARAMS", "chainId"},
		{"broadcast: no from", "/v1/sandbox/broadcast", `{"chainId":1}`, 400, "INVALID_PARAMS", "from"},
		{"broadcast: bad checksum", "/v1/sandbox/broadcast", `{"chainId":1,"from":"0x8Ba1f109551bD432803012645Ac136ddd64DBA72","transactionRequest":{}}`, 400, "INVALID_PARAMS", "from"},
		{"broadcast: no transactionRequest", "/v1/sandbox/broadcast", `{"chainId":1,"from":"` + wallet + `"}`, 400, "INVALID_PARAMS", "transactionRequest"},
		{"broadcast: no to", "/v1/sandbox/broadcast", tx(`"data":"0x"`), 400, "INVALID_PARAMS", "transactionRequest.to"},
		{"broadcast: odd data", "/v1/sandbox/broadcast", tx(`"to":"` + usdc + `","data":"0x123"`), 400, "INVALID_PARAMS", "transactionRequest.data"},
		{"broadcast: negative value", "/v1/sandbox/broadcast", tx(`"to":"` + usdc + `","value":"-1"`), 400, "INVALID_PARAMS", "transactionRequest.value"},
		{"broadcast: huge gas", "/v1/sandbox/broadcast", tx(`"to":"` + usdc + `","gasLimit":"0xffffffffff"`), 400, "INVALID_PARAMS", "transactionRequest.gasLimit"},
		{"broadcast: other from", "/v1/sandbox/broadcast", tx(`"to":"` + usdc + `","from":"0x1111111111111111111111111111111111111111"`), 400, "INVALID_PARAMS", "transactionRequest.from"},
		{"broadcast: other chain", "/v1/sandbox/broadcast", tx(`"to":"` + usdc + `","chainId":1`), 400, "INVALID_PARAMS", "transactionRequest.chainId"},
		{"broadcast: gasPrice not a quantity", "/v1/sandbox/broadcast", tx(`"to":"` + usdc + `","gasPrice":"fast"`), 400, "INVALID_PARAMS", "transactionRequest.gasPrice"},
		{"broadcast: negative gasPrice", "/v1/sandbox/broadcast", tx(`"to":"` + usdc + `","gasPrice":"-1"`), 400, "INVALID_PARAMS", "transactionRequest.gasPrice"},
		{"broadcast: empty gasPrice", "/v1/sandbox/broadcast", tx(`"to":"` + usdc + `","gasPrice":""`), 400, "INVALID_PARAMS", "transactionRequest.gasPrice"},
		{"broadcast: gasPrice a number", "/v1/sandbox/broadcast", tx(`"to":"` + usdc + `","gasPrice":1`), 400, "VALIDATION_ERROR", ""},
		{"faucet: no token", "/v1/sandbox/faucet", `{"chainId":1,"address":"` + wallet + `","amount":"1"}`, 400, "INVALID_PARAMS", "token"},
		{"faucet: another chain's token", "/v1/sandbox/faucet", `{"chainId":1,"address":"` + wallet + `","token":"` + usdc + `","amount":"1"}`, 400, "INVALID_PARAMS", "token"},
		{"faucet: amount zero", "/v1/sandbox/faucet", `{"chainId":42161,"address":"` + wallet + `","token":"native","amount":"0"}`, 400, "INVALID_PARAMS", "amount"},
		{"faucet: amount hex", "/v1/sandbox/faucet", `{"chainId":42161,"address":"` + wallet + `","token":"native","amount":"0x10"}`, 400, "INVALID_PARAMS", "amount"},
		{"faucet: amount a number", "/v1/sandbox/faucet", `{"chainId":42161,"address":"` + wallet + `","token":"native","amount":10}`, 400, "VALIDATION_ERROR", ""},
		{"faucet: bad address", "/v1/sandbox/faucet", `{"chainId":42161,"address":"0x12","token":"native","amount":"1"}`, 400, "INVALID_PARAMS", "address"},
		{"faucet: Bitcoin", "/v1/sandbox/faucet", `{"chainId":20000000000001,"address":"` + wallet + `","token":"native","amount":"1"}`, 400, "INVALID_PARAMS", "chainId"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sb := &fakeSandbox{}
			a := sbCall(t, sandboxServer(t, sb), "POST", c.uri, c.body)
			if a.status != c.status || a.Error == nil || a.Error.Code != c.code || (c.param != "" && a.Error.Details["param"] != c.param) {
				t.Fatalf("%d %+v, want %d %s %s", a.status, a.Error, c.status, c.code, c.param)
			}
			if len(sb.sent)+len(sb.faucets) != 0 {
				t.Fatal("the chain was reached")
			}
		})
	}
}

// TestSandboxChainRefusalsNameTheParameter maps the chain's own refusals.
func TestSandboxChainRefusalsNameTheParameter(t *testing.T) {
	body := `{"chainId":42161,"from":"` + wallet + `","transactionRequest":{"to":"` + wallet + `"}}`
	cases := []struct {
		err    error
		status int
		code   string
		param  string
	}{
		{fmt.Errorf("x: %w: have 0 wei", simchain.ErrInsufficientFundsForGas), 400, "INVALID_PARAMS", "from"},
		{fmt.Errorf("x: %w", simchain.ErrInvalidSender), 400, "INVALID_PARAMS", "from"},
		{fmt.Errorf("x: %w", simchain.ErrIntrinsicGas), 400, "INVALID_PARAMS", "transactionRequest.gasLimit"},
		{fmt.Errorf("x: %w", sandboxnet.ErrUnknownChain), 400, "INVALID_PARAMS", "chainId"},
		{fmt.Errorf("x: %w", sandboxnet.ErrUnavailable), 503, "SERVICE_UNAVAILABLE", ""},
		{fmt.Errorf("disk on fire"), 500, "INTERNAL_ERROR", ""},
	}
	for _, c := range cases {
		a := sbCall(t, sandboxServer(t, &fakeSandbox{sendErr: c.err}), "POST", "/v1/sandbox/broadcast", body)
		if a.status != c.status || a.Error == nil || a.Error.Code != c.code || (c.param != "" && a.Error.Details["param"] != c.param) {
			t.Errorf("%v: %d %+v, want %d %s %s", c.err, a.status, a.Error, c.status, c.code, c.param)
		}
	}
	a := sbCall(t, sandboxServer(t, &fakeSandbox{faucetErr: fmt.Errorf("x: %w", sandboxnet.ErrFaucetLimit)}), "POST", "/v1/sandbox/faucet",
		`{"chainId":1,"address":"`+wallet+`","token":"native","amount":"1000000000000000000000000000000"}`)
	if a.status != 400 || a.Error.Details["param"] != "amount" || a.Error.Details["max"] != "1000000000000000000000000000" {
		t.Errorf("faucet over the bound: %d %+v", a.status, a.Error)
	}
}

func TestSandboxAnswers(t *testing.T) {
	sb := &fakeSandbox{}
	s := sandboxServer(t, sb)
	a := sbCall(t, s, "POST", "/v1/sandbox/broadcast", `{"chainId":42161,"from":"`+wallet+`","transactionRequest":{"to":"`+wallet+`",
		"data":"0x095ea7b3","value":"0x10","gasLimit":"60000","from":"`+strings.ToLower(wallet)+`","chainId":42161,"gasPrice":"0x1"}}`)
	var b struct {
		TxHash, Status, RevertReason string
		ChainID, BlockNumber         uint64
	}
	if err := json.Unmarshal(a.Data, &b); err != nil || a.status != 200 || b.Status != "reverted" || b.RevertReason != "ERC20: insufficient allowance" || b.ChainID != 42161 {
		t.Fatalf("broadcast: %d %s", a.status, a.Data)
	}
	if len(sb.sent) != 1 || sb.sent[0].GasLimit != 60000 || sb.sent[0].Value.Int64() != 16 || len(sb.sent[0].Data) != 4 {
		t.Fatalf("sent %+v", sb.sent)
	}
	a = sbCall(t, s, "POST", "/v1/sandbox/faucet", `{"chainId":42161,"address":"`+wallet+`","token":"0xAF88D065E77C8CC2239327C5EDB3A432268E5831","amount":"25"}`)
	var f struct {
		Status, Amount, Balance string
		Token                   struct{ Address, Symbol string }
	}
	if err := json.Unmarshal(a.Data, &f); err != nil || f.Status != "success" || f.Token.Symbol != "USDC" || f.Amount != "25" || f.Balance != "9" {
		t.Fatalf("faucet: %d %s", a.status, a.Data)
	}
	if a := sbCall(t, s, "GET", "/v1/sandbox/tx/0x1234", ""); a.status != 400 || a.Error.Details["param"] != "txHash" {
		t.Errorf("malformed hash: %d %+v", a.status, a.Error)
	}
	if a := sbCall(t, s, "GET", "/v1/sandbox/tx/0x"+strings.Repeat("ab", 32), ""); a.status != 404 || a.Error.Code != "NOT_FOUND" {
		t.Errorf("unknown hash: %d %+v", a.status, a.Error)
	}
	for _, c := range []struct{ uri, param string }{
		{"/v1/balances", "address"},
		{"/v1/balances?address=0xnope&chains=1", "address"},
		{"/v1/balances?address=" + wallet + "&chains=1,4242", "chains"},
		{"/v1/balances?address=" + wallet + "&chains=1,1151111081099710", "chains"},
		{"/v1/balances?address=" + wallet + "&chains=1,x", "chains"},
	} {
		if a := sbCall(t, s, "GET", c.uri, ""); a.status != 400 || a.Error == nil || a.Error.Details["param"] != c.param {
			t.Errorf("%s: %d %+v", c.uri, a.status, a.Error)
		}
	}
	a = sbCall(t, s, "GET", "/v1/balances?address="+strings.ToLower(wallet)+"&chains=8453,1,8453", "")
	var bal struct {
		Address string
		Chains  []struct {
			ChainID  uint64
			Balances []struct{ Amount string }
		}
	}
	if err := json.Unmarshal(a.Data, &bal); err != nil || bal.Address != wallet || len(bal.Chains) != 2 || bal.Chains[0].ChainID != 8453 || bal.Chains[1].Balances[0].Amount != "5" {
		t.Fatalf("balances: %d %s", a.status, a.Data)
	}
}
