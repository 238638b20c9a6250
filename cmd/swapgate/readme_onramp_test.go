package main

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/swapgate/swapgate/internal/browsertest"
)

// TestReadmeOnrampWalkthrough follows the README's on-ramp walkthrough as
// a person does: the receiver and the service from the README's own
// command lines, the partner and its webhooks, the quote and the checkout
// with curl as written, then the checkout URL opened in Chromium and Pay
// pressed; the page moves to COMPLETED by itself and the browser lands on
// the redirect URL, the order's status. The second block then shows the
// order COMPLETED, the USDC arrived, the partner's fee pending and the
// order as an onramp transaction, and the receiver printed the three
// onramp events with valid signatures.
func TestReadmeOnrampWalkthrough(t *testing.T) {
	tools := []string{"sed"}
	needTools(t, tools...)
	browser := browsertest.New(t)
	dir, rcv, receiverAddr, ts := startReadmeTerminals(t)

	// Before: the wallet's USDC on Base, to see the delivery land.
	const wallet, usdcBase = "0x8ba1f109551bD432803012645Ac136ddd64DBA72", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
	before := readmeUSDCBalance(t, ts, wallet, usdcBase)

	heading := "## Buying crypto with fiat: the on-ramp"
	script := readmeBlockAfter(t, "In a third, a partner") + "\n" + readmeBlock(t, heading)
	script = strings.ReplaceAll(script, "127.0.0.1:9443", receiverAddr)
	// The person's shell keeps $KEY, $WALLET and $ORDER_UID for the second
	// block; the test's shell ends, so it prints them for the next one.
	script += "\n" + `printf '{"data":{"key":"%s","wallet":"%s","orderUid":"%s"}}\n' "$KEY" "$WALLET" "$ORDER_UID"`
	answers := runWalkthroughIn(t, ts, dir, script, tools...)
	// The partner block: fee wallet, webhook, test event, deliveries; then
	// the on-ramp's webhook, quote and checkout; then the shell's variables.
	if len(answers) != 8 {
		t.Fatalf("%d answers, want 8 (fee wallet, webhook, test event, deliveries, onramp webhook, quote, checkout, variables)", len(answers))
	}
	var shell struct{ Key, Wallet, OrderUID string }
	answers[7].decode(t, &shell)
	var quote, order struct {
		OrderUID, CheckoutURL, Status, EstimatedCryptoAmount, ExternalID string
		FiatAmount                                                       json.Number
		Fees                                                             struct{ PartnerFee json.Number }
	}
	answers[5].decode(t, &quote)
	answers[6].decode(t, &order)
	if quote.FiatAmount.String() != "100.00" || quote.Fees.PartnerFee.String() == "" {
		t.Fatalf("quote %+v", quote)
	}
	if order.Status != "CREATED" || order.ExternalID != "cart-42" || !strings.HasPrefix(order.CheckoutURL, ts.base+"/checkout/"+order.OrderUID) {
		t.Fatalf("order %+v (service at %s)", order, ts.base)
	}

	// The browser: the page shows the order, Pay moves it along without a
	// reload, and the redirect lands on the order's status.
	browser.Run("open the checkout", 30*time.Second, chromedp.Navigate(order.CheckoutURL), chromedp.WaitVisible(chromedp.CSS("#action-pay button")))
	if got := browser.Text("#total", 10*time.Second); !strings.HasSuffix(got, " EUR") || !strings.HasPrefix(got, "10") {
		t.Fatalf("the page's total %q", got)
	}
	if got := browser.Text("#crypto-amount", 10*time.Second); got != order.EstimatedCryptoAmount+" USDC" {
		t.Fatalf("the page shows %q, the order %s USDC", got, order.EstimatedCryptoAmount)
	}
	browser.Screenshot("readme-onramp-checkout")
	browser.Run("press Pay", 10*time.Second, chromedp.Click(chromedp.CSS("#action-pay button")))
	want := ts.base + "/v1/onramp/status?orderUid=" + order.OrderUID
	var landed string
	for deadline := time.Now().Add(60 * time.Second); ; {
		loc, err := browsertest.Eval[string](browser, "location.href", 5*time.Second)
		if err == nil && loc == want {
			landed = loc
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the browser never reached %s (at %q, %v)", want, loc, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	page, err := browsertest.Eval[string](browser, "document.body.innerText", 5*time.Second)
	if err != nil || !strings.Contains(page, `"status":"COMPLETED"`) {
		t.Fatalf("the redirect %s shows %q (%v)", landed, page, err)
	}

	// The second block: status, balances, earnings, transactions.
	if shell.OrderUID != order.OrderUID || shell.Wallet != wallet {
		t.Fatalf("the shell kept %+v", shell)
	}
	after := runWalkthroughIn(t, ts, dir, "KEY="+shell.Key+"\nWALLET="+shell.Wallet+"\nORDER_UID="+shell.OrderUID+"\n"+
		readmeBlockAfter(t, "`\"signatureValid\":true`. The same, with curl:"), tools...)
	if len(after) != 4 {
		t.Fatalf("%d answers, want 4 (status, balances, earnings, transactions)", len(after))
	}
	var status struct {
		Status  string
		History []struct{ Status, TxHash string }
	}
	after[0].decode(t, &status)
	var steps []string
	for _, h := range status.History {
		steps = append(steps, h.Status)
	}
	if status.Status != "COMPLETED" || strings.Join(steps, ",") != "CREATED,PAYMENT_RECEIVED,CRYPTO_SENT,COMPLETED" {
		t.Fatalf("status %+v", status)
	}
	got := new(big.Int).Sub(readmeUSDCBalance(t, ts, wallet, usdcBase), before)
	if want := readmeBaseUnits(t, order.EstimatedCryptoAmount, 6); got.Cmp(want) != 0 {
		t.Fatalf("the wallet got %s base units of USDC, the order says %s", got, want)
	}
	var earnings struct {
		Pending []struct {
			Ecosystem, TotalUSD string
			RowCount            int
		}
	}
	after[2].decode(t, &earnings)
	var txs struct {
		Transactions []struct{ Kind, ID, Status, FeeUSD string }
	}
	after[3].decode(t, &txs)
	if len(earnings.Pending) != 1 || earnings.Pending[0].Ecosystem != "evm" || earnings.Pending[0].RowCount != 1 ||
		len(txs.Transactions) != 1 || earnings.Pending[0].TotalUSD != txs.Transactions[0].FeeUSD {
		t.Fatalf("earnings %s, transactions %s", after[2].Data, after[3].Data)
	}
	if len(txs.Transactions) != 1 || txs.Transactions[0].Kind != "onramp" || txs.Transactions[0].ID != order.OrderUID ||
		txs.Transactions[0].Status != "COMPLETED" {
		t.Fatalf("transactions %s", after[3].Data)
	}

	// The receiver printed the three events, signatures valid.
	rcv.waitFor(t, "the receiver prints onramp.completed", func(stdout, _ string) string {
		var seen []string
		for _, raw := range strings.Split(strings.TrimSpace(stdout), "\n") {
			var p struct {
				Event          string
				SignatureValid bool
				Body           struct{ Data struct{ OrderUID string } }
			}
			if json.Unmarshal([]byte(raw), &p) != nil || !strings.HasPrefix(p.Event, "onramp.") {
				continue
			}
			if !p.SignatureValid || p.Body.Data.OrderUID != order.OrderUID {
				t.Fatalf("delivery %s", raw)
			}
			seen = append(seen, p.Event)
		}
		if strings.Join(seen, ",") == "onramp.payment_received,onramp.crypto_sent,onramp.completed" {
			return "yes"
		}
		return ""
	})
}

// readmeUSDCBalance reads a wallet's balance of one token on Base.
func readmeUSDCBalance(t *testing.T, ts *testServer, wallet, token string) *big.Int {
	t.Helper()
	var b struct {
		Chains []struct {
			Balances []struct {
				Token  struct{ Address string }
				Amount string
			}
		}
	}
	ts.get("/v1/balances?address="+wallet+"&chains=8453").decode(t, &b)
	for _, c := range b.Chains {
		for _, bal := range c.Balances {
			if strings.EqualFold(bal.Token.Address, token) {
				n, ok := new(big.Int).SetString(bal.Amount, 10)
				if !ok {
					t.Fatalf("balance %q", bal.Amount)
				}
				return n
			}
		}
	}
	t.Fatalf("no %s balance on Base", token)
	return nil
}

// readmeBaseUnits turns a decimal string into base units of a token with
// that many decimals.
func readmeBaseUnits(t *testing.T, amount string, decimals int) *big.Int {
	t.Helper()
	whole, frac, _ := strings.Cut(amount, ".")
	if len(frac) > decimals {
		t.Fatalf("%s has more than %d decimals", amount, decimals)
	}
	n, ok := new(big.Int).SetString(whole+frac+strings.Repeat("0", decimals-len(frac)), 10)
	if !ok {
		t.Fatalf("amount %q", amount)
	}
	return n
}
