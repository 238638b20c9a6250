package sandboxchain

// NewIdleRelayer is a relayer that does not run by itself: a test moves
// it one scan at a time with Step.
func NewIdleRelayer(chains RelayChains, ids []uint64, o RelayerOptions) *Relayer {
	return newRelayer(chains, ids, o)
}

// Step runs one scan: new messages read, those due delivered.
func (r *Relayer) Step() { r.step() }
