package account

import (
	"errors"
	"testing"

	"github.com/swapgate/swapgate/routing/domain/address"
)

func TestValidateFeeWallet(t *testing.T) {
	tests := []struct {
		eco, addr string
		wantErr   error
	}{
		{"evm", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", nil},
		{"evm", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", address.ErrInvalid},
		{"solana", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", nil},
		{"bitcoin", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", nil},
		{"bitcoin", "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx", address.ErrInvalid},
		{"sui", "0xdba34672e30cb065b1f93e3ab55318768fd6fef66c15942c9f7cb846e2f900e7", nil},
		{"near", "partner.near", nil},
		{"near", "fees.partner.testnet", nil},
		{"near", "17208628f84f5d6ad33f0da3bbbeb27ffcb398eac501a31bd6ad2011e36133a1", address.ErrInvalid},
		{"near", "partner.aurora", address.ErrInvalid},
		{"near", "Partner.near", address.ErrInvalid},
		{"ton", "EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs", ErrUnknownEcosystem},
		{"", "x", ErrUnknownEcosystem},
	}
	for _, tt := range tests {
		t.Run(tt.eco+"/"+tt.addr, func(t *testing.T) {
			err := ValidateFeeWallet(tt.eco, tt.addr)
			if tt.wantErr == nil && err != nil {
				t.Fatalf("got %v, want nil", err)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("got %v, want %v", err, tt.wantErr)
			}
		})
	}
}
