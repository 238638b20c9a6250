package simchain

import (
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
)

// Faucet tops holder up with amount of token (the zero address: the native
// coin) in a transaction of its own from FaucetAddress, mined like any
// other, so that the top-up has a hash, a block and a receipt. For an
// ERC-20 the faucet calls the token's mint, which emits Transfer from the
// zero address; for the native coin it sends the value, freshly created.
// Faucet transactions pay no gas (their gas price is zero).
//
// It returns ErrUnknownToken or ErrInvalidFaucetRequest without mining
// anything; a faucet transaction that fails all the same (native coin sent
// to a contract that refuses it) is mined and returned with an error.
func (c *Chain) Faucet(holder, token common.Address, amount *big.Int) (*Receipt, error) {
	if c.tokens[token] == nil {
		return nil, fmt.Errorf("%w: %s on chain %d", ErrUnknownToken, token.Hex(), c.id)
	}
	switch {
	case holder == (common.Address{}) || holder == c.faucet:
		return nil, fmt.Errorf("%w: no holder", ErrInvalidFaucetRequest)
	case amount == nil || amount.Sign() <= 0:
		return nil, fmt.Errorf("%w: the amount must be positive", ErrInvalidFaucetRequest)
	case new(big.Int).Add(c.balance(token, holder), amount).Cmp(maxUint256) > 0:
		return nil, fmt.Errorf("%w: the balance would exceed 2^256-1", ErrInvalidFaucetRequest)
	}
	var r *Receipt
	if token == (common.Address{}) {
		r = c.apply(c.faucet, holder, amount, nil, BlockGasLimit, zero, amount)
	} else {
		data, err := erc20ABI.Pack("mint", holder, amount)
		if err != nil {
			return nil, fmt.Errorf("simchain: faucet: encode mint: %w", err)
		}
		r = c.apply(c.faucet, token, zero, data, BlockGasLimit, zero, nil)
	}
	if !r.Succeeded() {
		return r, fmt.Errorf("simchain: faucet transaction %s failed: %s", r.TxHash.Hex(), r.RevertReason)
	}
	return r, nil
}
