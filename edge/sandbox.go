package edge

import (
	"context"
	"errors"
	"math/big"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/address"
	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/evmtx"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// SandboxChain is the sandbox chain the sandbox endpoints drive: one
// simulated EVM chain per EVM chain of the registry, where a client plays
// the wallet. actors/sandboxchain.Service satisfies it. Its values and
// errors are package evmtx's (the edge does not import the simulator):
// errors it returns wrap evmtx's request errors, ErrUnknownToken,
// ErrFaucetLimit, ErrUnknownChain and ErrUnavailable.
type SandboxChain interface {
	// Send executes and mines a transaction request, answering once it is
	// recorded; a revert is a receipt with Status 0.
	Send(ctx context.Context, chainID uint64, from common.Address, tx evmtx.TxRequest) (*evmtx.Receipt, error)
	// Faucet tops holder up with amount of token (the zero address: the
	// native coin) in a mined faucet transaction.
	Faucet(ctx context.Context, chainID uint64, holder, token common.Address, amount *big.Int) (*evmtx.Receipt, error)
	// Transaction finds a mined transaction by hash on any chain.
	Transaction(ctx context.Context, hash common.Hash) (evmtx.Mined, bool)
	// Balance is holder's balance of one asset of a chain.
	Balance(ctx context.Context, chainID uint64, holder, token common.Address) (*big.Int, error)
	// Balances lists holder's balance of every asset of a chain, the
	// native coin first.
	Balances(ctx context.Context, chainID uint64, holder common.Address) ([]evmtx.Balance, error)
}

// sandboxRoutes registers the endpoints of sandbox mode, where the service
// runs the sandbox chain and a client plays the wallet; outside sandbox
// mode (no Deps.Sandbox) they do not exist and answer 404 NOT_FOUND.
// Choices where the specification is silent:
//   - Broadcast and faucet act (they mine a transaction and record it,
//     synced) and so share the heavy bucket with quote and execute; both
//     honour Idempotency-Key, so a retried broadcast with the same key
//     mines nothing twice.
//   - A transaction lookup and balances are reads: the read bucket.
//   - Every sandbox chain is an EVM chain of the registry; any other chain
//     id is INVALID_PARAMS naming the parameter that carried it.
func (s *Server) sandboxRoutes() {
	s.Handle("POST", "/v1/sandbox/broadcast", route{bucket: BucketHeavy, name: "sandbox-broadcast", idempotent: true}, s.sandboxBroadcast)
	s.Handle("POST", "/v1/sandbox/faucet", route{bucket: BucketHeavy, name: "sandbox-faucet", idempotent: true}, s.sandboxFaucet)
	s.Handle("GET", "/v1/sandbox/tx/{txHash}", route{bucket: BucketRead, name: "sandbox-tx"}, s.sandboxTx)
}

// sandboxChainParam checks that a chain id names a sandbox chain (an EVM
// chain of the registry), naming param when it does not.
func (s *Server) sandboxChainParam(param string, id uint64) (*registry.Chain, *apierr.Error) {
	v := strconv.FormatUint(id, 10)
	c, ok := s.deps.Registry.Chain(id)
	if !ok {
		return nil, apierr.Param(param, "unknown chain ID "+v).With("value", v)
	}
	if c.ChainType != registry.EVM {
		return nil, apierr.Param(param, "chain "+v+" is "+string(c.ChainType)+"; the sandbox chain runs the EVM chains").With("value", v)
	}
	return c, nil
}

// evmAddressParam checks an EVM address (EIP-55 on mixed case), naming param.
func evmAddressParam(param, v string) (common.Address, *apierr.Error) {
	if v == "" {
		return common.Address{}, apierr.Param(param, param+" is required")
	}
	if err := address.Validate("evm", v); err != nil {
		return common.Address{}, apierr.Param(param, param+" is not a valid EVM address: "+err.Error()).With("value", v)
	}
	return common.HexToAddress(v), nil
}

// sandboxError maps the sandbox chain's errors to the envelope's; param
// names where a refused request's chain id came from.
func sandboxError(err error, chainParam string) error {
	switch {
	case errors.Is(err, evmtx.ErrUnknownChain):
		return apierr.Param(chainParam, "not a sandbox chain").Wrap(err)
	case errors.Is(err, evmtx.ErrUnavailable):
		return apierr.New(apierr.ServiceUnavailable, "the sandbox chain cannot take changes now; try again later").Wrap(err)
	}
	return err
}

// tokenView is an asset as the sandbox endpoints show it; the native coin
// has the zero address.
type tokenView struct {
	Address  string `json:"address"`
	Symbol   string `json:"symbol"`
	Decimals uint8  `json:"decimals"`
}

func viewToken(t evmtx.Token) tokenView {
	return tokenView{Address: t.Address.Hex(), Symbol: t.Symbol, Decimals: t.Decimals}
}

// receiptStatus is a receipt's status word.
func receiptStatus(r *evmtx.Receipt) string {
	if r.Succeeded() {
		return "success"
	}
	return "reverted"
}

// txHashParam parses a transaction hash: 0x and 64 hex digits.
func txHashParam(param, v string) (common.Hash, *apierr.Error) {
	h := strings.TrimPrefix(strings.TrimPrefix(v, "0x"), "0X")
	if len(h) != 64 || len(v) != 66 || strings.Trim(strings.ToLower(h), "0123456789abcdef") != "" {
		return common.Hash{}, apierr.Param(param, param+" must be 0x followed by 64 hex digits").With("value", v)
	}
	return common.HexToHash(v), nil
}
