package httpjson

import (
	"math/big"
	"strings"
	"testing"
)

func TestAddressChecksTheChainsCodec(t *testing.T) {
	cases := []struct {
		name, format, in string
		bad              bool
	}{
		{name: "evm checksummed", format: "evm", in: "0x1231DEB6f5749EF6cE6943a275A1D3E7486F4EaE"},
		{name: "evm lower case", format: "evm", in: "0x1231deb6f5749ef6ce6943a275a1d3e7486f4eae"},
		{name: "evm bad checksum", format: "evm", in: "0x1231DEB6f5749EF6cE6943a275A1D3E7486F4Eae", bad: true},
		{name: "evm script", format: "evm", in: "javascript:alert(1)", bad: true},
		{name: "evm short", format: "evm", in: "0x1234", bad: true},
		{name: "evm words", format: "evm", in: "not-an-address", bad: true},
		{name: "evm empty", format: "evm", in: "", bad: true},
		{name: "evm zero", format: "evm", in: "0x0000000000000000000000000000000000000000", bad: true},
		{name: "solana", format: "solana", in: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"},
		{name: "solana not base58", format: "solana", in: "0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl", bad: true},
		{name: "evm address on solana", format: "solana", in: "0x1231deb6f5749ef6ce6943a275a1d3e7486f4eae", bad: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := testUpstream.Address("to", tc.format, tc.in)
			if !tc.bad {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			checkBadAnswer(t, err, "to")
		})
	}
}

func TestRequiredAndUint256(t *testing.T) {
	if err := testUpstream.Required("id", "tx-1"); err != nil {
		t.Errorf("present field refused: %v", err)
	}
	for _, s := range []string{"", "  "} {
		checkBadAnswer(t, testUpstream.Required("id", s), "id")
	}
	if err := testUpstream.Uint256("amount", MaxUint256); err != nil {
		t.Errorf("2^256-1 refused: %v", err)
	}
	checkBadAnswer(t, testUpstream.Uint256("amount", new(big.Int).Add(MaxUint256, big.NewInt(1))), "amount")
	checkBadAnswer(t, testUpstream.Uint256("amount", big.NewInt(-1)), "amount")
}

// TestBadAnswerIsBounded: a refusal quotes at most a bounded part of an
// upstream's value, however long the value.
func TestBadAnswerIsBounded(t *testing.T) {
	huge := strings.Repeat("é", 10_000)
	err := testUpstream.Address("to", "evm", huge)
	checkBadAnswer(t, err, "to")
	if n := len(err.Message); n > 400 {
		t.Fatalf("message of %d bytes", n)
	}
	if !strings.Contains(err.Message, "…") {
		t.Errorf("message %q does not mark the cut", err.Message)
	}
	if long := testUpstream.BadAnswer("%s", strings.Repeat("x", 5000)); len(long.Message) > 400 {
		t.Errorf("BadAnswer message of %d bytes", len(long.Message))
	}
}

func TestTxHash(t *testing.T) {
	for _, ok := range []string{
		"0x5e1c2b8f0b3f5b6f8a3c0d9e2f1a4b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a",
		"5e1c2b8f0b3f5b6f8a3c0d9e2f1a4b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a",
		"5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW",
		"te6cckEBAQEAIAAAOwAAAAAAAAA",
		"Rk9PL2Jhcitx_-Y=",
	} {
		if err := testUpstream.TxHash("txHash", ok); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "0x", "javascript:alert(1)", "0x12 34", "<script>", "a\"b", strings.Repeat("a", 129)} {
		checkBadAnswer(t, testUpstream.TxHash("txHash", bad), "txHash")
	}
}
