package address

import "github.com/mr-tron/base58"

// validateSolana accepts base58 (Bitcoin alphabet) that decodes to exactly
// 32 bytes. Off-curve keys (program-derived addresses) are valid accounts,
// so no curve check is made.
func validateSolana(addr string) error {
	if len(addr) < 32 || len(addr) > 44 {
		return invalid("solana", "want 32 to 44 base58 characters")
	}
	b, err := base58.Decode(addr)
	if err != nil {
		return invalid("solana", "not base58")
	}
	if len(b) != 32 {
		return invalid("solana", "does not decode to 32 bytes")
	}
	return nil
}
