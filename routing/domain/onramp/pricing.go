package onramp

import (
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/swapgate/swapgate/routing/domain/gas"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// QuoteTTL is how long an on-ramp quote's price holds, and CheckoutTTL how
// long a checkout may wait for its payment before it expires.
const (
	QuoteTTL    = 60 * time.Second
	CheckoutTTL = 15 * time.Minute
)

// Market is what pricing reads of the reference data: a token's USD price
// and a chain's gas. The reference-data service satisfies it.
type Market interface {
	Price(chainID uint64, tokenAddress string) (float64, bool)
	Gas(chainID uint64) (gas.Record, bool)
}

// ErrNoPrice means the market has no price or gas for the asset's chain
// yet: the quote cannot be priced now (a transient condition, not the
// caller's mistake).
var ErrNoPrice = errors.New("onramp: no price for the asset")

// Fees are the three fees of a purchase and their sum, in the fiat currency.
type Fees struct {
	Network    Cents
	Processing Cents
	Partner    Cents
	Total      Cents
}

// Quote is a priced purchase: what the user pays, what they get, and the
// fees, all exact. It is the on-ramp quote result and the price an order
// keeps.
type Quote struct {
	Currency string
	Amount   Cents
	Symbol   string
	ChainID  uint64
	// Token is the delivered token's address ("0x000…0" for the native coin)
	// and Decimals its decimals, so that the order can deliver base units.
	Token     string
	Decimals  uint8
	Ecosystem string
	// USDRate is the currency's units per US dollar the quote used, so that
	// the order's figures convert to the dollars of a partner's stats.
	USDRate string
	// ExchangeRate is the price of one whole unit of the asset in the
	// currency, an exact decimal of at most 8 significant digits.
	ExchangeRate string
	// CryptoAmount is fiat Amount ÷ ExchangeRate in whole units of the asset,
	// truncated to the asset's display places.
	CryptoAmount string
	Fees         Fees
	Total        Cents
	Method       string
	// PartnerFeeBps is the fee tier's on-ramp rate the partner fee was
	// charged at.
	PartnerFeeBps int
	ExpiresAt     time.Time
}

// Price prices a resolved request at now with the partner's on-ramp fee in
// basis points. It fails only with ErrNoPrice.
func Price(m Market, r *Request, partnerFeeBps int, now time.Time, ttl time.Duration) (*Quote, error) {
	a := r.Asset
	usd, ok := m.Price(a.ChainID, a.Token.Address)
	nativeUSD, okNative := m.Price(a.ChainID, registry.NativeAddressEVM)
	g, okGas := m.Gas(a.ChainID)
	if !ok || usd <= 0 || !okNative || nativeUSD <= 0 || !okGas {
		return nil, fmt.Errorf("%w %s on chain %d", ErrNoPrice, a.Symbol, a.ChainID)
	}
	gasPrice, ok := new(big.Int).SetString(g.Speed.Standard.GasPrice, 10)
	if !ok {
		return nil, fmt.Errorf("%w: gas price %q of chain %d", ErrNoPrice, g.Speed.Standard.GasPrice, a.ChainID)
	}
	perUSD := r.Currency.PerUSD
	rate := significant(new(big.Rat).Mul(new(big.Rat).SetFloat64(usd), perUSD), 8)
	if rate.Sign() == 0 {
		return nil, fmt.Errorf("%w %s on chain %d: zero", ErrNoPrice, a.Symbol, a.ChainID)
	}
	// Network fee: the delivery's gas × price in wei, as native coin, in
	// dollars, in the currency, rounded up to the cent.
	wei := new(big.Int).Mul(gasPrice, big.NewInt(a.TransferGas()))
	native := new(big.Rat).SetFrac(wei, new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil))
	network := roundUp(new(big.Rat).Mul(new(big.Rat).Mul(native, new(big.Rat).SetFloat64(nativeUSD)), perUSD))
	if network == 0 {
		network = 1
	}
	fees := Fees{Network: network, Processing: bpsOf(r.Amount, r.Method.FeeBps), Partner: bpsOf(r.Amount, partnerFeeBps)}
	fees.Total = fees.Network + fees.Processing + fees.Partner
	crypto := truncate(new(big.Rat).Quo(r.Amount.Rat(), rate), a.Places())
	return &Quote{
		Currency: r.Currency.Code, Amount: r.Amount, Symbol: a.Symbol, ChainID: a.ChainID,
		Token: a.Token.Address, Decimals: a.Decimals, Ecosystem: a.Ecosystem, USDRate: perUSD.RatString(),
		ExchangeRate: decimalString(rate, 40), CryptoAmount: decimalString(crypto, a.Places()),
		Fees: fees, Total: r.Amount + fees.Total, Method: r.Method.ID, PartnerFeeBps: partnerFeeBps,
		ExpiresAt: now.Add(ttl).Truncate(time.Second),
	}, nil
}

// BaseUnits is CryptoAmount in the token's base units, what a delivery
// transfers.
func (q *Quote) BaseUnits() *big.Int {
	r, ok := new(big.Rat).SetString(q.CryptoAmount)
	if !ok {
		return new(big.Int)
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(q.Decimals)), nil)))
	return new(big.Int).Quo(r.Num(), r.Denom())
}

// microUSD converts an amount of the quote's currency to micro-dollars (the
// unit of a partner's stats and earnings), truncated.
func (q *Quote) microUSD(c Cents) int64 {
	perUSD, ok := new(big.Rat).SetString(q.USDRate)
	if !ok || perUSD.Sign() == 0 {
		return 0
	}
	r := new(big.Rat).Quo(c.Rat(), perUSD)
	r.Mul(r, big.NewRat(1_000_000, 1))
	return new(big.Int).Quo(r.Num(), r.Denom()).Int64()
}

// PartnerFeeBaseUnits is the partner fee converted to the delivered asset
// at the quote's rate, in the asset's base units: the ledger keeps a fee
// in a token of the ecosystem where it settles, and an on-ramp fee settles
// in the ecosystem of the asset delivered.
func (q *Quote) PartnerFeeBaseUnits() *big.Int {
	rate, ok := new(big.Rat).SetString(q.ExchangeRate)
	if !ok || rate.Sign() == 0 {
		return new(big.Int)
	}
	r := new(big.Rat).Quo(q.Fees.Partner.Rat(), rate)
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(q.Decimals)), nil)))
	return new(big.Int).Quo(r.Num(), r.Denom())
}
