package swap

import (
	"math/big"
	"strings"
	"testing"

	"github.com/swapgate/swapgate/routing/domain/quote"
)

// MatchTicket follows a transaction broadcast without execute only when it
// is the quote's own: its calldata, chain, recipient, value and sender;
// each difference is refused with what differs.
func TestMatchTicket(t *testing.T) {
	const (
		router = "0x1111111111111111111111111111111111111111"
		wallet = "0x2222222222222222222222222222222222222222"
		other  = "0x3333333333333333333333333333333333333333"
	)
	ticket := func() *quote.Ticket {
		return &quote.Ticket{ID: "qt_1", FromAddress: wallet, Txs: []quote.TicketTx{
			{To: router, Data: "0xabcd", Value: "0x10", ChainID: 42161}}}
	}
	tx := func() SourceTx {
		return SourceTx{ChainID: 42161, From: strings.ToUpper(wallet[:2]) + wallet[2:], To: router, Value: big.NewInt(16),
			CallRef: quote.CallRef([]byte{0xab, 0xcd})}
	}
	cases := []struct {
		name   string
		ticket func(*quote.Ticket)
		tx     func(*SourceTx)
		why    string // "" matches
	}{
		{"the quote's transaction", nil, nil, ""},
		{"a reverted one is still the quote's", nil, func(s *SourceTx) { s.Reverted = true }, ""},
		{"the request's from wins over fromAddress", func(t *quote.Ticket) { t.FromAddress, t.Txs[0].From = other, wallet }, nil, ""},
		{"no value on either side", func(t *quote.Ticket) { t.Txs[0].Value = "" }, func(s *SourceTx) { s.Value = nil }, ""},
		{"a decimal value", func(t *quote.Ticket) { t.Txs[0].Value = "16" }, nil, ""},
		{"another calldata", nil, func(s *SourceTx) { s.CallRef = quote.CallRef([]byte{0xab}) }, "calldata is not quote qt_1's"},
		{"another chain", nil, func(s *SourceTx) { s.ChainID = 8453 }, "on chain 42161, not 8453"},
		{"another recipient", nil, func(s *SourceTx) { s.To = other }, "sent to " + other},
		{"a contract creation", nil, func(s *SourceTx) { s.To = "" }, "contract creation"},
		{"another value", nil, func(s *SourceTx) { s.Value = big.NewInt(17) }, "sends 17 wei, quote qt_1's 16"},
		{"no value where the quote sends some", nil, func(s *SourceTx) { s.Value = nil }, "sends 0 wei"},
		{"another sender", nil, func(s *SourceTx) { s.From = other }, "sent from " + other},
		{"an indicative quote", func(t *quote.Ticket) { t.Indicative = true }, nil, "indicative"},
		{"a serialized transaction is never an EVM one", func(t *quote.Ticket) { t.Txs[0].Encoding = "base64" }, nil, "calldata is not"},
		{"a value that is no number", func(t *quote.Ticket) { t.Txs[0].Value = "0xzz" }, nil, "is not a number"},
	}
	for _, c := range cases {
		tk, s := ticket(), tx()
		if c.ticket != nil {
			c.ticket(tk)
		}
		if c.tx != nil {
			c.tx(&s)
		}
		ok, why := MatchTicket(tk, s)
		switch {
		case c.why == "" && !ok:
			t.Errorf("%s: refused: %s", c.name, why)
		case c.why != "" && (ok || !strings.Contains(why, c.why)):
			t.Errorf("%s: ok %v, why %q, want %q", c.name, ok, why, c.why)
		}
	}
}
