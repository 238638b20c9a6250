package address

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

type fixture struct {
	Format  string `json:"format"`
	Address string `json:"address"`
	Valid   bool   `json:"valid"`
	Note    string `json:"note"`
}

func loadFixtures(t testing.TB) []fixture {
	t.Helper()
	b, err := os.ReadFile("testdata/addresses.json")
	if err != nil {
		t.Fatalf("read fixtures: %v", err)
	}
	var fs []fixture
	if err := json.Unmarshal(b, &fs); err != nil {
		t.Fatalf("decode fixtures: %v", err)
	}
	return fs
}

func TestValidateFixtures(t *testing.T) {
	fs := loadFixtures(t)
	formats := map[string]bool{}
	for _, f := range fs {
		formats[f.Format] = true
		t.Run(f.Format+"/"+f.Note, func(t *testing.T) {
			err := Validate(f.Format, f.Address)
			if f.Valid && err != nil {
				t.Fatalf("Validate(%q, %q) = %v, want nil", f.Format, f.Address, err)
			}
			if !f.Valid {
				if err == nil {
					t.Fatalf("Validate(%q, %q) = nil, want error", f.Format, f.Address)
				}
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("error %v does not wrap ErrInvalid", err)
				}
			}
		})
	}
	for _, want := range []string{"evm", "solana", "bitcoin", "sui", "near", "ton", "tron", "xrp", "doge", "stellar"} {
		if !formats[want] {
			t.Errorf("no fixture for format %s", want)
		}
	}
}

func TestValidateToken(t *testing.T) {
	tests := []struct {
		format, addr string
		valid        bool
	}{
		{"evm", "native", true},
		{"bitcoin", "NATIVE", true},
		{"evm", "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", true},
		{"evm", "0xa0b86991c6218b36c1d19D4a2e9eb0ce3606eb48", false},
		{"solana", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", true},
		{"solana", "1111111111111111111111111111111", false},
		{"sui", "0xdba34672e30cb065b1f93e3ab55318768fd6fef66c15942c9f7cb846e2f900e7::usdc::USDC", true},
		{"sui", "0x2::sui::SUI", true},
		{"sui", "0xdba34672e30cb065b1f93e3ab55318768fd6fef66c15942c9f7cb846e2f900e7", true},
		{"sui", "0x2::sui", false},
		{"sui", "0x2::1sui::SUI", false},
		{"sui", "0x::sui::SUI", false},
		{"sui", "0xzz::sui::SUI", false},
		{"near", "usdt.tether-token.near", true},
		{"tron", "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", true},
		{"ton", "EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs", true},
		{"ton", "EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDt", false},
	}
	for _, tt := range tests {
		t.Run(tt.format+"/"+tt.addr, func(t *testing.T) {
			err := ValidateToken(tt.format, tt.addr)
			if tt.valid != (err == nil) {
				t.Fatalf("ValidateToken(%q, %q) = %v, want valid=%v", tt.format, tt.addr, err, tt.valid)
			}
		})
	}
}

func TestErrorsNameFormatAndReason(t *testing.T) {
	err := Validate("tron", "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u")
	if err == nil || !strings.Contains(err.Error(), "tron") || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("error %v should name the format and the reason", err)
	}
}

func TestCRC16XModem(t *testing.T) {
	// The standard check value of CRC-16/XMODEM over "123456789".
	if got := crc16XModem([]byte("123456789")); got != 0x31C3 {
		t.Fatalf("crc16XModem = %#x, want 0x31c3", got)
	}
}

var fuzzFormats = []string{"evm", "solana", "bitcoin", "sui", "near", "ton", "tron", "xrp", "doge", "stellar",
	"zec", "ltc", "bch", "dash", "aptos", "starknet", "cardano", "aleo", "other"}

func FuzzValidate(f *testing.F) {
	for _, fx := range loadFixtures(f) {
		f.Add(fx.Address)
	}
	f.Add("bitcoincash:")
	f.Add("u1")
	f.Add("0x::a::b")
	f.Fuzz(func(t *testing.T, addr string) {
		for _, format := range fuzzFormats {
			if err := Validate(format, addr); err != nil && !errors.Is(err, ErrInvalid) {
				t.Fatalf("Validate(%q, %q) error %v does not wrap ErrInvalid", format, addr, err)
			}
			_ = ValidateToken(format, addr)
		}
	})
}

// TestOverlongAddresses: past maxAddressLen every format refuses before its
// codec runs (base58 decoding is quadratic in the length).
func TestOverlongAddresses(t *testing.T) {
	long := "Ae2" + strings.Repeat("2", maxAddressLen)
	formats := map[string]bool{}
	for _, f := range loadFixtures(t) {
		formats[f.Format] = true
	}
	for f := range formats {
		if err := Validate(f, long); !errors.Is(err, ErrInvalid) {
			t.Errorf("Validate(%s, %d characters) = %v", f, len(long), err)
		}
		if err := ValidateToken(f, long); !errors.Is(err, ErrInvalid) {
			t.Errorf("ValidateToken(%s, %d characters) = %v", f, len(long), err)
		}
	}
}
