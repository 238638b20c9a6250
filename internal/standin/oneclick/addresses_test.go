package oneclick

import (
	"strconv"
	"testing"

	"github.com/swapgate/swapgate/routing/domain/address"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// Every deposit address the stand-in hands out is a valid address of its
// origin chain, by that chain's codec: the adapter checks it as it checks
// 1Click's, and refuses a leg whose deposit address is not.
func TestDepositAddressesAreValidForTheirChain(t *testing.T) {
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range reg.Chains() {
		if c.IntentsBlockchain == "" {
			continue
		}
		for i := 0; i < 20; i++ {
			addr := depositAddress(Asset{Blockchain: c.IntentsBlockchain}, QuoteRequest{OriginAsset: "a", DestinationAsset: "b",
				Amount: strconv.Itoa(1000 + i), Recipient: "r", RefundTo: "f", Deadline: "d"})
			if err := address.Validate(c.AddressFormat, addr); err != nil {
				t.Errorf("chain %d (%s, %s): deposit address %q: %v", c.ID, c.IntentsBlockchain, c.AddressFormat, addr, err)
				break
			}
			n++
		}
	}
	if n == 0 {
		t.Fatal("no intents chain in the registry")
	}
}
