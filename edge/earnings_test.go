package edge

import "testing"

func TestFormatMicroUSD(t *testing.T) {
	for _, tc := range []struct {
		in   int64
		want string
	}{
		{0, "0.00"}, {5, "0.000005"}, {10_000, "0.01"}, {12_300_000, "12.30"}, {12_345_678, "12.345678"},
		{12_345_600, "12.3456"}, {1_000_000_000_000, "1000000.00"}, {-1_500_000, "-1.50"},
		{-9223372036854775808, "-9223372036854.775808"},
	} {
		if got := formatMicroUSD(tc.in); got != tc.want {
			t.Errorf("formatMicroUSD(%d) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
