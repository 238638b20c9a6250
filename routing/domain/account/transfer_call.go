package account

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
)

// Gas limits of a transfer's transaction: a coin transfer to an account is
// the protocol's 21,000; an ERC-20 transfer is given room for a token with
// hooks or fee logic (a plain one uses about 35,000 to 52,000), the unused
// part never charged.
const (
	NativeTransferGas = 21_000
	TokenTransferGas  = 100_000
)

// erc20Transfer is ERC-20's transfer(address,uint256).
var erc20Transfer = func() abi.ABI {
	a, err := abi.JSON(strings.NewReader(`[{"type":"function","name":"transfer","stateMutability":"nonpayable",
		"inputs":[{"name":"to","type":"address"},{"name":"value","type":"uint256"}],"outputs":[{"name":"","type":"bool"}]}]`))
	if err != nil {
		panic(err)
	}
	return a
}()

// nativeToken is the registry's address of an EVM chain's coin.
const nativeToken = "0x0000000000000000000000000000000000000000"

// Call is the EVM transaction that pays t: for the chain's coin, value to
// the wallet; for an ERC-20 token, its transfer(wallet, amount) with no
// value. It refuses a transfer whose wallet or token is not an EVM address
// or whose amount is not a positive base-unit amount.
func (t *Transfer) Call() (to common.Address, data []byte, value *big.Int, gas uint64, err error) {
	if !common.IsHexAddress(t.Wallet) {
		return to, nil, nil, 0, fmt.Errorf("transfer %s: wallet %q is not an EVM address", t.ID, t.Wallet)
	}
	if !common.IsHexAddress(t.Token) {
		return to, nil, nil, 0, fmt.Errorf("transfer %s: token %q is not an EVM address", t.ID, t.Token)
	}
	amt, ok := new(big.Int).SetString(t.Amount, 10)
	if !ok || amt.Sign() <= 0 || amt.BitLen() > 256 {
		return to, nil, nil, 0, fmt.Errorf("transfer %s: amount %q is not a positive base-unit amount", t.ID, t.Amount)
	}
	wallet := common.HexToAddress(t.Wallet)
	if strings.EqualFold(t.Token, nativeToken) {
		return wallet, nil, amt, NativeTransferGas, nil
	}
	data, err = erc20Transfer.Pack("transfer", wallet, amt)
	if err != nil {
		return to, nil, nil, 0, fmt.Errorf("transfer %s: calldata: %w", t.ID, err)
	}
	return common.HexToAddress(t.Token), data, new(big.Int), TokenTransferGas, nil
}
