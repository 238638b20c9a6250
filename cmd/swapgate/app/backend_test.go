package app

import (
	"strings"
	"testing"
)

func TestCheckStoreURL(t *testing.T) {
	tests := []struct {
		in string
		// err is a part of the refusal, "" when the value is accepted.
		err string
	}{
		{"", ""},
		{"postgres://swapgate@db.internal/swapgate", ""},
		{"postgresql://swapgate:s3cret@db.internal:5433/swapgate?sslmode=require", ""},
		{"postgres:///swapgate?host=/run/postgresql", ""},
		{"host=/run/postgresql dbname=swapgate sslmode=disable", ""},
		{"mysql://db/swapgate", `scheme "mysql"`},
		{"./data", "must be a postgres:// URL"},
		{"postgres://u:s3cret@db:notaport/swapgate", "does not parse"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			err := CheckStoreURL(tt.in)
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Fatalf("got %v, want a refusal with %q", err, tt.err)
			case err != nil && strings.Contains(err.Error(), "s3cret"):
				t.Fatalf("the refusal echoes the password: %v", err)
			}
		})
	}
}

func TestStoreKind(t *testing.T) {
	if StoreKind("") != "pebble" || StoreKind("postgres://db/x") != "postgres" {
		t.Fatal("wrong kinds")
	}
}
