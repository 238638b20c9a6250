package address

// validateNEAR applies NEAR's account ID rules: 2 to 64 characters; parts
// separated by '.'; each part lower-case letters and digits, joined by a
// single '-' or '_', with no separator at either end or doubled. Implicit
// accounts (64 lower-case hex digits) satisfy the same rules.
func validateNEAR(addr string) error {
	if len(addr) < 2 || len(addr) > 64 {
		return invalid("near", "want 2 to 64 characters")
	}
	// prevSep: the previous character was a separator ('.', '-' or '_'),
	// or we are at the start, where a separator is not allowed either.
	prevSep := true
	for i := 0; i < len(addr); i++ {
		c := addr[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			prevSep = false
		case c == '.' || c == '-' || c == '_':
			if prevSep {
				return invalid("near", "separator at start or doubled")
			}
			prevSep = true
		default:
			return invalid("near", "only a-z, 0-9, '.', '-' and '_' are allowed")
		}
	}
	if prevSep {
		return invalid("near", "separator at end")
	}
	return nil
}
