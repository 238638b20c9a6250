package txm

import (
	"context"
	"errors"
	"math/big"

	"github.com/swapgate/swapgate/routing/domain/txintent"
)

type manager struct {
	opts Options
}

func newManager(opts Options) (*manager, error) {
	if opts.Store == nil || opts.Signer == nil {
		return nil, errors.New("txm: a store and a signer are required")
	}
	return &manager{opts: opts}, nil
}

func (m *manager) onFinal(purpose string, h Hook)  {}
func (m *manager) start(ctx context.Context) error { return errors.New("txm: not implemented") }
func (m *manager) stop()                           {}
func (m *manager) submit(ctx context.Context, r txintent.Request) (*txintent.Intent, error) {
	return nil, errors.New("txm: not implemented")
}
func (m *manager) wake() {}
func (m *manager) balance(ctx context.Context, chainID uint64) (*big.Int, error) {
	return nil, ErrUnknownChain
}
func (m *manager) stats() Stats { return Stats{} }
