package edge

import (
	"context"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/evmtx"
	"github.com/swapgate/swapgate/routing/domain/noderead"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// BalanceReader lists an address's balances of a chain's assets: over
// JSON-RPC where a node is configured, from the sandbox chain otherwise.
// A chain it cannot read is evmtx.ErrUnknownChain.
type BalanceReader interface {
	Balances(ctx context.Context, chainID uint64, holder common.Address) ([]evmtx.Balance, error)
	Serves(chainID uint64) bool
}

// chainBalancesView is one chain's balances of an address.
type chainBalancesView struct {
	ChainID  uint64        `json:"chainId"`
	Address  string        `json:"address"`
	Balances []balanceView `json:"balances"`
}

// balanceView is one asset's balance, in base units.
type balanceView struct {
	Token  tokenView `json:"token"`
	Amount string    `json:"amount"`
}

// balances answers GET /v1/balances?address=&chains= from a node where
// one is configured for the chain and from the sandbox chain otherwise: data is {address, chains: [{chainId, address, balances: [{token:
// {address, symbol, decimals}, amount}]}]}, one entry per chain in the
// order asked (default: every chain it can read, in registry order), each
// listing the native coin (the zero address) first and then every registry
// token of the chain, zero balances included, amounts in base units as
// decimal strings. address is shown in its EIP-55 form.
//
// Refusals, INVALID_PARAMS: no address, or one invalid for a chain asked
// (param address); an unknown chain id, or a chain that is not EVM
// (Solana, Bitcoin, Sui, the intents chains), which the sandbox chain does
// not run (param chains): an error rather than an empty entry, so that a
// client does not read "no funds" where there is no chain. The endpoint
// exists in sandbox mode and wherever a node is configured.
//
// A chain whose read fails fails the request, naming chainId: 504
// UPSTREAM_TIMEOUT when its node did not answer within --rpc-timeout, 502
// RPC_FAILURE when it answered with an error or could not be reached.
func (s *Server) balances(r *Request) error {
	addr, ok := query(r, "address")
	if !ok || addr == "" {
		return apierr.Param("address", "address is required")
	}
	var chains []*registry.Chain
	if v, ok := query(r, "chains"); ok && v != "" {
		var err *apierr.Error
		if chains, err = s.chainListParam("chains", v); err != nil {
			return err
		}
		for _, c := range chains {
			if !s.deps.Balances.Serves(c.ID) {
				return apierr.Param("chains", "no balances can be read on chain "+c.Key+": not an EVM chain with a node or a sandbox chain").
					With("chainId", c.ID)
			}
		}
	} else {
		for _, c := range s.deps.Registry.Chains() {
			if s.deps.Balances.Serves(c.ID) {
				chains = append(chains, c)
			}
		}
	}
	holder, aerr := evmAddressParam("address", addr)
	if aerr != nil {
		return aerr
	}
	out := struct {
		Address string              `json:"address"`
		Chains  []chainBalancesView `json:"chains"`
	}{Address: holder.Hex(), Chains: make([]chainBalancesView, 0, len(chains))}
	for _, c := range chains {
		bals, err := s.deps.Balances.Balances(r.Context(), c.ID, holder)
		if err != nil {
			if e := sandboxError(err, "chains"); e != err {
				return e
			}
			// A node that did not answer within --rpc-timeout is
			// UPSTREAM_TIMEOUT, any other failed read RPC_FAILURE.
			return noderead.Failure("could not read balances on chain "+c.Key, err).With("chainId", c.ID)
		}
		cv := chainBalancesView{ChainID: c.ID, Address: holder.Hex(), Balances: make([]balanceView, len(bals))}
		for i, b := range bals {
			cv.Balances[i] = balanceView{Token: viewToken(b.Token), Amount: b.Amount.String()}
		}
		out.Chains = append(out.Chains, cv)
	}
	writeJSON(r, statusOK, out)
	return nil
}
