package admin

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/swapgate/swapgate/routing/domain/account"
)

// Bounds on operator input. Fees and limits are bounded by the account
// model (fees by the platform maximum, account.MaxFeeBps).
const (
	maxNameLen  = 200
	maxEmailLen = 254
)

// invalidf returns an error wrapping ErrInvalid.
func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// validateName checks and trims a partner's display name.
func validateName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", invalidf("name is required")
	}
	if len(name) > maxNameLen {
		return "", invalidf("name is longer than %d bytes", maxNameLen)
	}
	if strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return "", invalidf("name contains control characters")
	}
	return name, nil
}

// validateEmail checks and trims a contact address: exactly one '@', a
// non-empty local part, and a domain with a dot that neither starts nor ends
// it. Deliverability is the operator's business, not the API's.
func validateEmail(email string) (string, error) {
	email = strings.TrimSpace(email)
	if email == "" {
		return "", invalidf("email is required")
	}
	if len(email) > maxEmailLen {
		return "", invalidf("email is longer than %d bytes", maxEmailLen)
	}
	if strings.IndexFunc(email, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return "", invalidf("email %q contains spaces", email)
	}
	local, domain, ok := strings.Cut(email, "@")
	if !ok || strings.Contains(domain, "@") {
		return "", invalidf("email %q must contain exactly one @", email)
	}
	if local == "" {
		return "", invalidf("email %q has an empty local part", email)
	}
	dot := strings.Index(domain, ".")
	if dot <= 0 || strings.HasSuffix(domain, ".") || strings.Contains(domain, "..") {
		return "", invalidf("email %q needs a domain with a dot", email)
	}
	return email, nil
}

// validateFee checks an optional fee in basis points.
func validateFee(field string, bps *int) error {
	if bps == nil {
		return nil
	}
	if err := account.CheckFeeBps(*bps); err != nil {
		return invalidf("%s %v", field, err)
	}
	return nil
}

// validateLimit checks an optional per-minute limit.
func validateLimit(field string, n *int) error {
	if n == nil {
		return nil
	}
	if err := account.CheckPerMin(*n); err != nil {
		return invalidf("%s %v", field, err)
	}
	return nil
}

// validateEcosystems checks, de-duplicates and orders a list of ecosystems.
// An empty list means all of them.
func validateEcosystems(in []string) ([]string, error) {
	all := account.Ecosystems()
	if len(in) == 0 {
		return all, nil
	}
	var out []string
	for _, e := range all {
		if slices.Contains(in, e) {
			out = append(out, e)
		}
	}
	for _, e := range in {
		if !slices.Contains(all, e) {
			return nil, invalidf("unknown ecosystem %q (want one of %s)", e, strings.Join(all, ", "))
		}
	}
	return out, nil
}

// validateID rejects IDs that cannot exist before touching the store, so a
// typo reads as "not found" rather than as a storage error.
func validateID(id string) error {
	if id == "" {
		return invalidf("id is required")
	}
	if !account.ValidID(id) {
		return fmt.Errorf("partner %q: %w", id, account.ErrNotFound)
	}
	return nil
}

// valueOr returns *p, or def when p is nil.
func valueOr(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}
