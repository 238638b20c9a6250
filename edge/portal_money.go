package edge

import (
	"strconv"
	"strings"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// The portal writes money for people, not for programs: USD as "$1,000.22"
// (rounded to the cent, half away from zero, thousands grouped), a token
// amount in the token's own decimals with its symbol ("1,250.5 USDC"),
// where the API and the CSV export keep their exact machine forms
// ("1000.22044", base units).

// portalUSD writes an amount of micro-USD as dollars and cents.
func portalUSD(micro int64) string {
	neg := micro < 0
	u := uint64(micro)
	if neg {
		u = -u
	}
	cents := (u + 5_000) / 10_000
	c := strconv.FormatUint(cents%100, 10)
	if len(c) < 2 {
		c = "0" + c
	}
	s := "$" + groupThousands(strconv.FormatUint(cents/100, 10)) + "." + c
	if neg && cents != 0 {
		return "-" + s
	}
	return s
}

// portalKnownUSD is portalUSD, or "" for an amount not valued.
func portalKnownUSD(micro int64, unknown bool) string {
	if unknown {
		return ""
	}
	return portalUSD(micro)
}

// portalEarnings are the earnings groups as the portal's overview lists
// them, their totals in dollars and cents.
func portalEarnings(gs []account.EarningsGroup) []earningsItem {
	out := make([]earningsItem, 0, len(gs))
	for _, g := range gs {
		out = append(out, earningsItem{Ecosystem: g.Ecosystem, TotalUSD: portalUSD(g.TotalMicroUSD), RowCount: g.RowCount})
	}
	return out
}

// portalTokenAmount writes an amount of base units of a token in its own
// decimals, trailing zeros dropped, with its symbol: "1,250.5 USDC". An
// amount that is not a whole number of base units, or a token the
// registry does not know, is written as it was given.
func portalTokenAmount(reg *registry.Registry, chainID uint64, token, baseUnits string) string {
	if baseUnits == "" || strings.TrimLeft(baseUnits, "0123456789") != "" {
		return baseUnits
	}
	tok, ok := reg.Token(chainID, token)
	if !ok {
		return baseUnits
	}
	return formatUnits(baseUnits, int(tok.Decimals)) + " " + tok.Symbol
}

// formatUnits places the decimal point decimals digits from the right of
// a string of digits, drops trailing zeros and leading ones, and groups
// the whole part's thousands.
func formatUnits(digits string, decimals int) string {
	digits = strings.TrimLeft(digits, "0")
	if len(digits) <= decimals {
		digits = strings.Repeat("0", decimals-len(digits)+1) + digits
	}
	whole, frac := digits[:len(digits)-decimals], strings.TrimRight(digits[len(digits)-decimals:], "0")
	s := groupThousands(whole)
	if frac != "" {
		s += "." + frac
	}
	return s
}

// groupThousands puts a comma between each group of three digits of a
// whole number written in digits.
func groupThousands(d string) string {
	if len(d) <= 3 {
		return d
	}
	var b strings.Builder
	head := len(d) % 3
	if head > 0 {
		b.WriteString(d[:head])
	}
	for i := head; i < len(d); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(d[i : i+3])
	}
	return b.String()
}
