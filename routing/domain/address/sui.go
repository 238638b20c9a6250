package address

import "strings"

// validateSui accepts the canonical Sui account form, 0x + 64 hex digits.
// Short forms (0x2) are valid for packages in Move type tags but not as
// recipient accounts, where a dropped digit would go unnoticed.
func validateSui(addr string) error {
	if !strings.HasPrefix(addr, "0x") || len(addr) != 66 || !IsHex(addr[2:]) {
		return invalid("sui", "want 0x followed by 64 hex digits")
	}
	return nil
}

// validateSuiToken accepts a Sui coin type 0x<hex>::module::NAME (the package
// id may be short, as in 0x2::sui::SUI, since Sui normalises it) or a plain
// 0x + 64 hex object id.
func validateSuiToken(addr string) error {
	parts := strings.Split(addr, "::")
	switch len(parts) {
	case 1:
		return validateSui(addr)
	case 3:
		pkg := parts[0]
		if !strings.HasPrefix(pkg, "0x") || len(pkg) < 3 || len(pkg) > 66 || !IsHex(pkg[2:]) {
			return invalid("sui", "coin type package must be 0x followed by 1 to 64 hex digits")
		}
		if !isMoveIdent(parts[1]) || !isMoveIdent(parts[2]) {
			return invalid("sui", "coin type module and name must be Move identifiers")
		}
		return nil
	default:
		return invalid("sui", "want 0x<hex>::module::NAME or 0x followed by 64 hex digits")
	}
}

// isMoveIdent reports whether s is a Move identifier: a letter or underscore
// followed by letters, digits or underscores.
func isMoveIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// IsHex reports whether s is non-empty and all hex digits (the digits of
// a 0x-hex address, in either case).
func IsHex(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// validateHexAccount checks 0x + 1..maxDigits hex digits, the account form
// of Aptos and Starknet, whose tools drop leading zeros.
func validateHexAccount(format, addr string, maxDigits int) error {
	if !strings.HasPrefix(addr, "0x") || len(addr) < 3 || len(addr) > 2+maxDigits || !IsHex(addr[2:]) {
		return invalid(format, "want 0x followed by hex digits")
	}
	return nil
}
