package account

import (
	"errors"
	"testing"
)

func TestParseWallet(t *testing.T) {
	formats := []string{"evm", "solana", "bitcoin", "sui", "aptos", "ton"}
	cases := []struct {
		in, key string // key "" means refused
	}{
		{"0xaf88d065e77c8cC2239327C5EDb3A432268e5831", "0xaf88d065e77c8cc2239327c5edb3a432268e5831"}, // EIP-55
		{"0xAF88D065E77C8CC2239327C5EDB3A432268E5831", "0xaf88d065e77c8cc2239327c5edb3a432268e5831"}, // all upper: no checksum
		{"0xaf88d065e77c8cc2239327c5edb3a432268e5831", "0xaf88d065e77c8cc2239327c5edb3a432268e5831"},
		{"0xaF88d065e77c8cC2239327C5EDb3A432268e5831", ""},                                             // mixed case, checksum broken: not taken as an Aptos account
		{"7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV", "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV"}, // Solana, kept as written
		{"bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"},
		{"0x" + "00000000000000000000000000000000000000000000000000000000000000Ab", "0x" + "00000000000000000000000000000000000000000000000000000000000000ab"}, // Sui
		{"", ""},
		{"not-an-address", ""},
		{"0xaf88d065e77c8cc2239327c5edb3a432268e583", "0xaf88d065e77c8cc2239327c5edb3a432268e583"}, // 39 digits: an Aptos account
		{"7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV ", ""},
	}
	for _, c := range cases {
		key, err := ParseWallet(formats, c.in)
		if c.key == "" {
			if err == nil || !errors.Is(err, ErrBadWallet) {
				t.Errorf("ParseWallet(%q) = %q, %v; want refused", c.in, key, err)
			}
			continue
		}
		if err != nil || key != c.key {
			t.Errorf("ParseWallet(%q) = %q, %v; want %q", c.in, key, err, c.key)
		}
	}
	if _, err := ParseWallet([]string{"evm"}, "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV"); err == nil {
		t.Error("a Solana wallet taken where no chain is Solana's")
	}
}

func TestActivityWallets(t *testing.T) {
	a := &Activity{FromAddress: "0xAF88D065E77C8CC2239327C5EDB3A432268E5831", ToAddress: "0xaf88d065e77c8cC2239327C5EDb3A432268e5831"}
	if w := a.Wallets(); len(w) != 1 || w[0] != "0xaf88d065e77c8cc2239327c5edb3a432268e5831" {
		t.Errorf("one wallet in two cases: %v", w)
	}
	a.ToAddress = "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV"
	if w := a.Wallets(); len(w) != 2 || w[1] != a.ToAddress {
		t.Errorf("two wallets: %v", w)
	}
	q := ActivityQuery{Wallet: "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV"}
	if q.Match(a) {
		t.Error("a quote's line (kind quote) matched a wallet")
	}
	a.Kind = ActivitySwap
	if !q.Match(a) {
		t.Error("the receiver's wallet does not match the swap")
	}
	q.Wallet = "7ecdhsygxxyscszyep35khn8vvw3svaulktzxwcfltv"
	if q.Match(a) {
		t.Error("a Solana wallet matched in another case")
	}
}
