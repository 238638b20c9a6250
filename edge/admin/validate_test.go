package admin

import (
	"errors"
	"slices"
	"testing"
)

func TestValidateEmail(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"ops@acme.example", "ops@acme.example", true},
		{"  ops@acme.io ", "ops@acme.io", true},
		{"a.b+c@sub.acme.co.uk", "a.b+c@sub.acme.co.uk", true},
		{"", "", false},
		{"opsacme.example", "", false},
		{"ops@@acme.example", "", false},
		{"ops@acme@example.com", "", false},
		{"@acme.example", "", false},
		{"ops@localhost", "", false},
		{"ops@.example", "", false},
		{"ops@acme.", "", false},
		{"ops@acme..example", "", false},
		{"o ps@acme.example", "", false},
	}
	for _, tt := range tests {
		got, err := validateEmail(tt.in)
		if tt.ok != (err == nil) {
			t.Errorf("validateEmail(%q) error = %v, want ok=%v", tt.in, err, tt.ok)
			continue
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("validateEmail(%q) error %v does not wrap ErrInvalid", tt.in, err)
		}
		if got != tt.want {
			t.Errorf("validateEmail(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestValidateName(t *testing.T) {
	tests := []struct {
		in string
		ok bool
	}{
		{"Acme", true},
		{"  Acme Wallet  ", true},
		{"", false},
		{"   ", false},
		{"Acme\nWallet", false},
		{string(make([]byte, maxNameLen+1)), false},
	}
	for _, tt := range tests {
		if _, err := validateName(tt.in); tt.ok != (err == nil) {
			t.Errorf("validateName(%q) error = %v, want ok=%v", tt.in, err, tt.ok)
		}
	}
}

func TestValidateNumbers(t *testing.T) {
	n := func(v int) *int { return &v }
	tests := []struct {
		name string
		err  error
		ok   bool
	}{
		{"fee nil", validateFee("f", nil), true},
		{"fee 0", validateFee("f", n(0)), true},
		{"fee at the platform maximum", validateFee("f", n(500)), true},
		{"fee above the platform maximum", validateFee("f", n(501)), false},
		{"fee -1", validateFee("f", n(-1)), false},
		{"fee 10001", validateFee("f", n(10001)), false},
		{"limit nil", validateLimit("l", nil), true},
		{"limit 1", validateLimit("l", n(1)), true},
		{"limit 0", validateLimit("l", n(0)), false},
		{"limit -5", validateLimit("l", n(-5)), false},
	}
	for _, tt := range tests {
		if tt.ok != (tt.err == nil) {
			t.Errorf("%s: error = %v, want ok=%v", tt.name, tt.err, tt.ok)
		}
		if tt.err != nil && !errors.Is(tt.err, ErrInvalid) {
			t.Errorf("%s: %v does not wrap ErrInvalid", tt.name, tt.err)
		}
	}
}

func TestValidateEcosystems(t *testing.T) {
	got, err := validateEcosystems(nil)
	if err != nil || !slices.Equal(got, []string{"evm", "solana", "bitcoin", "sui", "near"}) {
		t.Fatalf("default ecosystems = %v, %v", got, err)
	}
	got, err = validateEcosystems([]string{"near", "evm", "near"})
	if err != nil || !slices.Equal(got, []string{"evm", "near"}) {
		t.Fatalf("ecosystems = %v, %v; want canonical order without duplicates", got, err)
	}
	if _, err := validateEcosystems([]string{"evm", "tron"}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("unknown ecosystem accepted: %v", err)
	}
}
