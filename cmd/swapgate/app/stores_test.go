package app

import (
	"github.com/swapgate/swapgate/actors/sandboxchain"
	"github.com/swapgate/swapgate/internal/storecontract"
)

// The chain log's contract suite restates its consumer's methods (the
// suites may not import the simulator); these hold the two together, so
// that a method the chain owner comes to need is one the suite covers.
var (
	_ sandboxchain.Store         = storecontract.ChainLog(nil)
	_ sandboxchain.DeliveryStore = storecontract.ChainLog(nil)
)
