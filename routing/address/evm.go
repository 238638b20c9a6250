package address

import (
	"strings"

	"github.com/ethereum/go-ethereum/common"
)

// validateEVM accepts 0x + 40 hex digits. All-lower and all-upper input
// carries no checksum and is accepted; mixed case must pass EIP-55, because
// a mixed-case address that fails it is almost surely mistyped.
func validateEVM(addr string) error {
	if len(addr) != 42 || !(strings.HasPrefix(addr, "0x") || strings.HasPrefix(addr, "0X")) {
		return invalid("evm", "want 0x followed by 40 hex digits")
	}
	if !common.IsHexAddress(addr) {
		return invalid("evm", "non-hex characters")
	}
	body := addr[2:]
	if body == strings.ToLower(body) || body == strings.ToUpper(body) {
		return nil
	}
	m, err := common.NewMixedcaseAddressFromString("0x" + body)
	if err != nil {
		return invalid("evm", err.Error())
	}
	if !m.ValidChecksum() {
		return invalid("evm", "EIP-55 checksum mismatch")
	}
	return nil
}
