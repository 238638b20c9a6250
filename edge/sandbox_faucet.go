package edge

import (
	"errors"
	"math/big"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/evmtx"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// faucetBody is POST /v1/sandbox/faucet's body.
type faucetBody struct {
	ChainID *uint64 `json:"chainId"`
	Address *string `json:"address"`
	Token   *string `json:"token"`
	Amount  *string `json:"amount"`
}

// faucetView is the answer: the top-up's transaction and the new balance.
type faucetView struct {
	TxHash      string    `json:"txHash"`
	ChainID     uint64    `json:"chainId"`
	Status      string    `json:"status"`
	BlockNumber uint64    `json:"blockNumber"`
	Address     string    `json:"address"`
	Token       tokenView `json:"token"`
	Amount      string    `json:"amount"`
	Balance     string    `json:"balance"`
}

// sandboxFaucet answers POST /v1/sandbox/faucet {chainId, address, token,
// amount}: it tops address up with amount base units (a decimal string) of
// token (a registry token address of the chain, or "native" or the zero
// address for the native coin) in a faucet transaction mined on the sandbox
// chain and recorded like a broadcast. An ERC-20 top-up is a mint with its
// Transfer log from the zero address. One top-up is at most
// evmtx.MaxFaucetUnits (a billion) whole units of the asset; every
// address also starts with a genesis allocation (1,000 of each token, and
// 100 native coins or $10,000 worth, whichever is more). The answer is
// {txHash, chainId, status, blockNumber, address, token: {address, symbol,
// decimals}, amount, balance}, balance being the holder's balance of the
// asset when the answer is made (right after the top-up, unless another
// transaction of the holder's was mined in between). Refusals:
// INVALID_PARAMS naming chainId, address, token (not an asset of that
// chain) or amount (not a positive integer, or above the bound, with
// details.max).
func (s *Server) sandboxFaucet(r *Request) error {
	var body faucetBody
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	if body.ChainID == nil {
		return apierr.Param("chainId", "chainId is required")
	}
	chain, aerr := s.sandboxChainParam("chainId", *body.ChainID)
	if aerr != nil {
		return aerr
	}
	if body.Address == nil {
		return apierr.Param("address", "address is required: the address to top up")
	}
	holder, aerr := evmAddressParam("address", *body.Address)
	if aerr != nil {
		return aerr
	}
	if body.Token == nil || *body.Token == "" {
		return apierr.Param("token", `token is required: a token address of the chain, or "native"`)
	}
	tok, ok := s.deps.Registry.Token(chain.ID, *body.Token)
	if !ok || (!tok.IsNative() && !common.IsHexAddress(tok.Address)) {
		return apierr.Param("token", "token "+*body.Token+" is not an asset of chain "+strconv.FormatUint(chain.ID, 10)+
			`; see GET /v1/tokens?chains=`+strconv.FormatUint(chain.ID, 10)+` or use "native"`).With("value", *body.Token)
	}
	token := common.Address{}
	if !tok.IsNative() {
		token = common.HexToAddress(tok.Address)
	}
	if body.Amount == nil || *body.Amount == "" {
		return apierr.Param("amount", "amount is required: base units as a decimal string")
	}
	amount, ok := decimalAmount(*body.Amount)
	if !ok {
		return apierr.Param("amount", "amount must be a positive integer of base units, as a decimal string").With("value", *body.Amount)
	}
	rc, err := s.deps.Sandbox.Faucet(r.Context(), chain.ID, holder, token, amount)
	if err != nil {
		return faucetError(err, tok, *body.Amount)
	}
	bal, err := s.deps.Sandbox.Balance(r.Context(), chain.ID, holder, token)
	if err != nil {
		return sandboxError(err, "chainId")
	}
	writeJSON(r, statusOK, faucetView{
		TxHash: rc.TxHash.Hex(), ChainID: chain.ID, Status: receiptStatus(rc), BlockNumber: rc.BlockNumber,
		Address: holder.Hex(), Token: tokenView{Address: token.Hex(), Symbol: tok.Symbol, Decimals: tok.Decimals},
		Amount: amount.String(), Balance: bal.String(),
	})
	return nil
}

func faucetError(err error, tok *registry.Token, amount string) error {
	switch {
	case errors.Is(err, evmtx.ErrFaucetLimit):
		max := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(tok.Decimals)), nil)
		max.Mul(max, big.NewInt(evmtx.MaxFaucetUnits))
		return apierr.Param("amount", "amount must be between 1 and "+max.String()+" base units of "+tok.Symbol+
			" (a billion whole units) per top-up").With("value", amount).With("max", max.String()).Wrap(err)
	case errors.Is(err, evmtx.ErrUnknownToken):
		return apierr.Param("token", "token is not an asset of the chain").Wrap(err)
	case errors.Is(err, evmtx.ErrInvalidFaucetRequest):
		return apierr.Param("address", "the faucet cannot top up this address: "+chainReason(err)).Wrap(err)
	}
	return sandboxError(err, "chainId")
}

// decimalAmount parses a positive integer written in decimal digits only.
func decimalAmount(s string) (*big.Int, bool) {
	if s == "" || len(s) > 100 || strings.Trim(s, "0123456789") != "" {
		return nil, false
	}
	v, ok := new(big.Int).SetString(s, 10)
	if !ok || v.Sign() <= 0 {
		return nil, false
	}
	return v, true
}
