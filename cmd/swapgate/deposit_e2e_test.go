package main

import (
	"net/http"
	"strings"
	"testing"
)

// An intents quote is executed by depositing to its address: execute says
// where, submit reports the deposit transaction, and status follows it in
// the intents provider's vocabulary.
func TestIntentsDepositSubmitAndStatus(t *testing.T) {
	ts := startServer(t, nil)
	var q struct {
		Quote struct {
			ID, DepositAddress string
		}
		Provider string
	}
	ts.get(quotePath("fromChain", "1", "toChain", "900000002", "fromToken", usdcEth, "toToken", "native",
		"fromAmount", "250000000", "fromAddress", wallet, "toAddress", tonAddress)).decode(t, &q)
	if q.Provider != "intents" || q.Quote.DepositAddress == "" {
		t.Fatalf("intents quote %+v", q)
	}
	var ex struct {
		Kind    string
		Deposit struct {
			Address, Mode, Memo, Amount, Token string
			ChainID                            uint64
		}
		TransactionRequests []struct{ To string }
	}
	ts.do(http.MethodPost, "/v1/execute", []byte(`{"quoteId":"`+q.Quote.ID+`"}`)).decode(t, &ex)
	if ex.Kind != "deposit" || ex.Deposit.Address != q.Quote.DepositAddress || ex.Deposit.Mode != "SIMPLE" || ex.Deposit.Memo != "" ||
		ex.Deposit.Amount != "250000000" || ex.Deposit.ChainID != 1 || len(ex.TransactionRequests) != 1 {
		t.Fatalf("execute: %+v", ex)
	}
	ts.do(http.MethodPost, "/v1/execute", []byte(`{"quoteId":"`+q.Quote.ID+`","depositMode":"MEMO"}`)).decode(t, &ex)
	if ex.Deposit.Mode != "MEMO" || ex.Deposit.Memo == "" {
		t.Fatalf("MEMO mode: %+v", ex.Deposit)
	}
	ts.do(http.MethodPost, "/v1/execute", []byte(`{"quoteId":"`+q.Quote.ID+`","depositMode":"FAST"}`)).wantError(t, 400, "INVALID_PARAMS", "depositMode")

	type depositStatus struct {
		Status, DepositAddress, QuoteID, TxHash string
		SwapDetails                             *struct {
			AmountIn            string
			OriginChainTxHashes []string
		}
	}
	var st depositStatus
	status := "/v1/execute/deposit/status?depositAddress=" + q.Quote.DepositAddress
	ts.get(status).decode(t, &st)
	if st.Status != "PENDING_DEPOSIT" || st.QuoteID != q.Quote.ID {
		t.Fatalf("before the deposit: %+v", st)
	}
	ts.get("/v1/execute/deposit/status").wantError(t, 400, "INVALID_PARAMS", "depositAddress")
	ts.get("/v1/execute/deposit/status?depositAddress=0x0000000000000000000000000000000000000001").wantError(t, 404, "INVALID_PARAMS", "depositAddress")

	submit := func(body string) *envelope {
		return ts.do(http.MethodPost, "/v1/execute/deposit/submit", []byte(body))
	}
	hash := "0x" + "ab12" + "00000000000000000000000000000000000000000000000000000000000c"
	submit(`{"depositAddress":"`+q.Quote.DepositAddress+`"}`).wantError(t, 400, "INVALID_PARAMS", "txHash")
	submit(`{"txHash":"`+hash+`"}`).wantError(t, 400, "INVALID_PARAMS", "depositAddress")
	submit(`{"txHash":"0x12","depositAddress":"`+q.Quote.DepositAddress+`"}`).wantError(t, 400, "INVALID_PARAMS", "txHash")
	submit(`{"txHash":"`+hash+`","depositAddress":"0x0000000000000000000000000000000000000001"}`).wantError(t, 400, "INVALID_PARAMS", "depositAddress")
	submit(`{"txHash":"`+hash+`","depositAddress":"`+q.Quote.DepositAddress+`","extra":1}`).wantError(t, 400, "VALIDATION_ERROR", "")
	for _, memo := range []string{`"` + strings.Repeat("m", 129) + `"`, `"a\u0000"`, `"a\nb"`} {
		submit(`{"txHash":"`+hash+`","depositAddress":"`+q.Quote.DepositAddress+`","memo":`+memo+`}`).wantError(t, 400, "INVALID_PARAMS", "memo")
	}
	ts.get(status+"&depositMemo="+strings.Repeat("m", 129)).wantError(t, 400, "INVALID_PARAMS", "depositMemo")
	ts.get(status+"&depositMemo=a%00").wantError(t, 400, "INVALID_PARAMS", "depositMemo")
	submit(`{"txHash":"`+hash+`","depositAddress":"`+q.Quote.DepositAddress+`"}`).decode(t, &st)
	if st.Status != "KNOWN_DEPOSIT_TX" || st.TxHash != hash || st.SwapDetails == nil || st.SwapDetails.AmountIn != "250000000" {
		t.Fatalf("submitted: %+v", st)
	}
	ts.get(status).decode(t, &st)
	if st.TxHash != hash || st.QuoteID != q.Quote.ID {
		t.Fatalf("status after submit: %+v", st)
	}
	// The deposit transaction is also a swap GET /v1/status follows.
	var sw struct{ Status, QuoteID string }
	ts.get("/v1/status?txHash="+hash).decode(t, &sw)
	if sw.Status != "PENDING" || sw.QuoteID != q.Quote.ID {
		t.Fatalf("swap status of the deposit: %+v", sw)
	}
}
