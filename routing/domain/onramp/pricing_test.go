package onramp

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/gas"
	"github.com/swapgate/swapgate/routing/domain/registry"
)

// fixedMarket prices tokens from a table and gives every chain the same
// standard gas price.
type fixedMarket struct {
	prices   map[string]float64 // "<chainID>/<lower-case address>"
	gasPrice string
}

func (m fixedMarket) Price(chainID uint64, token string) (float64, bool) {
	p, ok := m.prices[key(chainID, token)]
	return p, ok
}

func (m fixedMarket) Gas(chainID uint64) (gas.Record, bool) {
	return gas.Record{ChainID: chainID, Speed: gas.Speeds{Standard: gas.Tier{GasPrice: m.gasPrice}}}, m.gasPrice != ""
}

func key(chainID uint64, token string) string {
	return fmt.Sprintf("%d/%s", chainID, strings.ToLower(token))
}

func testCatalogue(t *testing.T) *Catalogue {
	t.Helper()
	reg, err := registry.Load()
	if err != nil {
		t.Fatal(err)
	}
	return NewCatalogue(reg)
}

func tokenAddr(t *testing.T, c *Catalogue, chainID uint64, symbol string) string {
	t.Helper()
	a, ok := c.Asset(symbol, chainID)
	if !ok {
		t.Fatalf("no asset %s on %d", symbol, chainID)
	}
	return a.Token.Address
}

// TestPriceAddsUpExactly holds the fee arithmetic to hand-computed exact
// decimals: basis-point fees round half up to the cent, the network fee
// rounds up, the exchange rate keeps 8 significant digits, cryptoAmount is
// truncated, and totalFee and totalFiatAmount add up to the cent.
func TestPriceAddsUpExactly(t *testing.T) {
	c := testCatalogue(t)
	const gwei20 = "20000000000"
	m := fixedMarket{gasPrice: gwei20, prices: map[string]float64{
		key(42161, registry.NativeAddressEVM):      3000.5,
		key(42161, tokenAddr(t, c, 42161, "USDC")): 1.0,
		key(369, registry.NativeAddressEVM):        0.0000312345678912,
		key(1, registry.NativeAddressEVM):          3000.5,
		key(1, tokenAddr(t, c, 1, "USDT")):         0.9995,
	}}
	cases := []struct {
		name                                     string
		body                                     QuoteBody
		bps                                      int
		gasPrice                                 string
		rate, crypto                             string
		network, processing, partner, total, all string
	}{
		{name: "USD to USDC on Arbitrum by credit card, anonymous tier",
			body: QuoteBody{FiatAmount: f(100), FiatCurrency: s("USD"), CryptoAsset: s("USDC"), ChainID: u(42161)}, bps: 150,
			// 65,000 gas × 20 gwei = 0.0013 ETH × 3000.5 = 3.90065 → 3.91 (up)
			rate: "1", crypto: "100", network: "3.91", processing: "2.99", partner: "1.50", total: "8.40", all: "108.40"},
		{name: "EUR to ETH on Arbitrum by debit card at 75 bps",
			body: QuoteBody{FiatAmount: f(250.55), FiatCurrency: s("eur"), CryptoToken: s("eth"), CryptoChain: s("Arbitrum"), PaymentMode: s("debit_card")}, bps: 75,
			// rate 3000.5 × 0.92 = 2760.46; network 21,000 × 20 gwei × 3000.5 × 0.92 = 1.1593932 → 1.16;
			// processing 250.55 × 1.49% = 3.733195 → 3.73; partner 250.55 × 0.75% = 1.879125 → 1.88
			rate: "2760.46", crypto: "0.09076385", network: "1.16", processing: "3.73", partner: "1.88", total: "6.77", all: "257.32"},
		{name: "half up at the cent on a small amount",
			body: QuoteBody{FiatAmount: f(20.50), FiatCurrency: s("USD"), CryptoAsset: s("USDC"), ChainID: u(42161)}, bps: 150,
			// partner 0.3075 → 0.31; processing 0.61295 → 0.61
			rate: "1", crypto: "20.5", network: "3.91", processing: "0.61", partner: "0.31", total: "4.83", all: "25.33"},
		{name: "a coin worth a fraction of a cent keeps 8 significant digits, 8 places",
			body: QuoteBody{FiatAmount: f(20), FiatCurrency: s("USD"), CryptoAsset: s("PLS"), CryptoChain: s("pls")}, bps: 0,
			gasPrice: "30000000000000000",
			// network 21,000 × 0.03 PLS × $0.0000312345678912 = $0.0196... → 0.02
			rate: "0.000031234568", crypto: "640316.20350888", network: "0.02", processing: "0.60", partner: "0.00", total: "0.62", all: "20.62"},
		{name: "GBP by bank transfer, a stablecoin off its peg",
			body: QuoteBody{FiatAmount: f(1000), FiatCurrency: s("GBP"), CryptoAsset: s("USDT"), ChainID: u(1), PaymentMethod: s("bank_transfer")}, bps: 100,
			// rate 0.9995 × 0.79 = 0.789605; 1000 / 0.789605 = 1266.4560... (6 places);
			// network 65,000 × 20 gwei × 3000.5 × 0.79 = 3.0815135 → 3.09
			rate: "0.789605", crypto: "1266.456012", network: "3.09", processing: "5.00", partner: "10.00", total: "18.09", all: "1018.09"},
	}
	now := time.Unix(1_700_000_000, 0)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, aerr := c.Resolve(&tc.body)
			if aerr != nil {
				t.Fatalf("resolve: %v", aerr)
			}
			mk := m
			if tc.gasPrice != "" {
				mk.gasPrice = tc.gasPrice
			}
			q, err := Price(mk, req, tc.bps, now, QuoteTTL)
			if err != nil {
				t.Fatal(err)
			}
			got := []string{q.ExchangeRate, q.CryptoAmount, q.Fees.Network.String(), q.Fees.Processing.String(),
				q.Fees.Partner.String(), q.Fees.Total.String(), q.Total.String()}
			want := []string{tc.rate, tc.crypto, tc.network, tc.processing, tc.partner, tc.total, tc.all}
			for i, name := range []string{"exchangeRate", "cryptoAmount", "networkFee", "processingFee", "partnerFee", "totalFee", "totalFiatAmount"} {
				if got[i] != want[i] {
					t.Errorf("%s = %s, want %s", name, got[i], want[i])
				}
			}
			if q.Fees.Total != q.Fees.Network+q.Fees.Processing+q.Fees.Partner || q.Total != q.Amount+q.Fees.Total {
				t.Errorf("fees do not add up: %+v total %s", q.Fees, q.Total)
			}
			if q.ExpiresAt != now.Add(QuoteTTL) {
				t.Errorf("expiresAt = %v", q.ExpiresAt)
			}
		})
	}
}

func TestPriceWithoutMarketData(t *testing.T) {
	c := testCatalogue(t)
	req, aerr := c.Resolve(&QuoteBody{FiatAmount: f(100), FiatCurrency: s("USD"), CryptoAsset: s("ETH"), ChainID: u(8453)})
	if aerr != nil {
		t.Fatal(aerr)
	}
	if _, err := Price(fixedMarket{}, req, 150, time.Now(), QuoteTTL); err == nil || !strings.Contains(err.Error(), "no price") {
		t.Fatalf("err = %v, want ErrNoPrice", err)
	}
}

func TestBaseUnitsAndPartnerFeeInTheAsset(t *testing.T) {
	q := Quote{CryptoAmount: "0.09076385", Decimals: 18, ExchangeRate: "2760.46", Fees: Fees{Partner: 188}, USDRate: "0.92"}
	if got := q.BaseUnits().String(); got != "90763850000000000" {
		t.Errorf("base units = %s", got)
	}
	// 1.88 / 2760.46 ETH = 0.000681046... ETH, truncated to wei.
	if got := q.PartnerFeeBaseUnits().String(); got != "681045912637748" {
		t.Errorf("partner fee = %s wei", got)
	}
	// 1.88 EUR / 0.92 = 2.043478... USD.
	if got := q.microUSD(q.Fees.Partner); got != 2_043_478 {
		t.Errorf("partner fee = %d µUSD", got)
	}
}

func f(v float64) *float64 { return &v }
func s(v string) *string   { return &v }
func u(v uint64) *uint64   { return &v }
