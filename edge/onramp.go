package edge

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/onramp"
	"github.com/swapgate/swapgate/routing/domain/scenario"
)

// OnrampDesk is the on-ramp behind the edge; the on-ramp actor is one. It
// prices purchases, opens orders, reads them, and applies what the user does
// on the checkout page. Order reports an unknown uid with
// account.ErrNotFound; Act refuses a move the order's state does not allow
// with onramp.ErrTransition.
type OnrampDesk interface {
	Catalogue() *onramp.Catalogue
	Quote(ctx context.Context, partner *account.Partner, r *onramp.Request, now time.Time) (*onramp.Quote, error)
	Checkout(ctx context.Context, partner *account.Partner, r *onramp.CheckoutRequest, now time.Time) (o *onramp.Order, checkoutURL string, err error)
	Order(ctx context.Context, uid string) (*onramp.Order, error)
	Act(ctx context.Context, uid string, a onramp.Action) (*onramp.Order, error)
}

func (s *Server) onrampRoutes() {
	s.Handle("POST", "/v1/onramp/quote", route{bucket: BucketHeavy, name: "onramp_quote"}, s.onrampQuote)
	s.Handle("POST", "/v1/onramp/checkout", route{bucket: BucketHeavy, name: "onramp_checkout", idempotent: true}, s.onrampCheckout)
	s.Handle("GET", "/v1/onramp/status", route{bucket: BucketRead, name: "onramp_status"}, s.onrampStatus)
	s.Handle("GET", "/v1/onramp/config", route{bucket: BucketRead, name: "onramp_config"}, s.onrampConfig)
	s.Handle("GET", "/v1/onramp/assets", route{bucket: BucketRead, name: "onramp_assets"}, s.onrampAssets)
	if s.deps.ProviderWebhook == nil {
		s.checkoutPageRoutes()
	}
}

// onrampFees is the fees object of the on-ramp results.
type onrampFees struct {
	NetworkFee    onramp.Cents `json:"networkFee"`
	ProcessingFee onramp.Cents `json:"processingFee"`
	PartnerFee    onramp.Cents `json:"partnerFee"`
	TotalFee      onramp.Cents `json:"totalFee"`
}

// onrampQuoteView is the specification's on-ramp quote result.
type onrampQuoteView struct {
	FiatCurrency    string       `json:"fiatCurrency"`
	FiatAmount      onramp.Cents `json:"fiatAmount"`
	CryptoAsset     string       `json:"cryptoAsset"`
	ChainID         uint64       `json:"chainId"`
	CryptoAmount    string       `json:"cryptoAmount"`
	ExchangeRate    jsonNumber   `json:"exchangeRate"`
	Fees            onrampFees   `json:"fees"`
	TotalFiatAmount onramp.Cents `json:"totalFiatAmount"`
	PaymentMethod   string       `json:"paymentMethod"`
	ExpiresAt       int64        `json:"expiresAt"`
}

// jsonNumber writes an exact decimal string as a JSON number.
type jsonNumber string

func (n jsonNumber) MarshalJSON() ([]byte, error) { return []byte(n), nil }

func quoteView(q *onramp.Quote) onrampQuoteView {
	return onrampQuoteView{
		FiatCurrency: q.Currency, FiatAmount: q.Amount, CryptoAsset: q.Symbol, ChainID: q.ChainID,
		CryptoAmount: q.CryptoAmount, ExchangeRate: jsonNumber(q.ExchangeRate),
		Fees:            onrampFees{NetworkFee: q.Fees.Network, ProcessingFee: q.Fees.Processing, PartnerFee: q.Fees.Partner, TotalFee: q.Fees.Total},
		TotalFiatAmount: q.Total, PaymentMethod: q.Method, ExpiresAt: q.ExpiresAt.Unix(),
	}
}

// onrampQuote answers POST /v1/onramp/quote: an indicative price; nothing
// is recorded (a quote is not a commitment).
func (s *Server) onrampQuote(r *Request) error {
	var body onramp.QuoteBody
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	req, aerr := s.deps.Onramp.Catalogue().Resolve(&body)
	if aerr != nil {
		return aerr
	}
	q, err := s.deps.Onramp.Quote(r.Context(), r.Partner, req, r.Now)
	if err != nil {
		return onrampError(err)
	}
	writeJSON(r, statusOK, quoteView(q))
	return nil
}

// onrampCheckoutView is the specification's on-ramp checkout result, with
// the order's externalId and the full price it was opened at.
type onrampCheckoutView struct {
	OrderUID              string          `json:"orderUid"`
	CheckoutURL           string          `json:"checkoutUrl"`
	FiatCurrency          string          `json:"fiatCurrency"`
	FiatAmount            onramp.Cents    `json:"fiatAmount"`
	CryptoAsset           string          `json:"cryptoAsset"`
	ChainID               uint64          `json:"chainId"`
	EstimatedCryptoAmount string          `json:"estimatedCryptoAmount"`
	WalletAddress         string          `json:"walletAddress"`
	ExpiresAt             int64           `json:"expiresAt"`
	Status                onramp.State    `json:"status"`
	ExternalID            *string         `json:"externalId"`
	Quote                 onrampQuoteView `json:"quote"`
}

// onrampCheckout answers POST /v1/onramp/checkout: the order is opened
// (persisted, CREATED) and the user is to be sent to checkoutUrl.
func (s *Server) onrampCheckout(r *Request) error {
	var body onramp.CheckoutBody
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	req, aerr := s.deps.Onramp.Catalogue().ResolveCheckout(&body)
	if aerr != nil {
		return aerr
	}
	if req.Scenario, aerr = s.sandboxScenario(r, scenario.Onramp); aerr != nil {
		return aerr
	}
	o, url, err := s.deps.Onramp.Checkout(r.Context(), r.Partner, req, r.Now)
	if err != nil {
		return onrampError(err)
	}
	v := onrampCheckoutView{
		OrderUID: o.UID, CheckoutURL: url, FiatCurrency: o.Quote.Currency, FiatAmount: o.Quote.Amount,
		CryptoAsset: o.Quote.Symbol, ChainID: o.Quote.ChainID, EstimatedCryptoAmount: o.Quote.CryptoAmount,
		WalletAddress: o.Wallet, ExpiresAt: o.ExpiresAt.Unix(), Status: o.State, Quote: quoteView(&o.Quote),
	}
	if o.ExternalID != "" {
		v.ExternalID = &o.ExternalID
	}
	writeJSON(r, statusOK, v)
	return nil
}

// onrampOrderView is an order as GET /v1/onramp/status shows it: the
// checkout's fields, where it stands, and every state it went through.
type onrampOrderView struct {
	OrderUID      string          `json:"orderUid"`
	ExternalID    *string         `json:"externalId"`
	Status        onramp.State    `json:"status"`
	FiatCurrency  string          `json:"fiatCurrency"`
	FiatAmount    onramp.Cents    `json:"fiatAmount"`
	CryptoAsset   string          `json:"cryptoAsset"`
	ChainID       uint64          `json:"chainId"`
	CryptoAmount  string          `json:"cryptoAmount"`
	WalletAddress string          `json:"walletAddress"`
	TxHash        *string         `json:"txHash"`
	Fees          onrampFees      `json:"fees"`
	TotalFiat     onramp.Cents    `json:"totalFiatAmount"`
	PaymentMethod string          `json:"paymentMethod"`
	CreatedAt     int64           `json:"createdAt"`
	ExpiresAt     int64           `json:"expiresAt"`
	History       []onrampHistory `json:"history"`
}

type onrampHistory struct {
	Status onramp.State `json:"status"`
	At     int64        `json:"at"`
	TxHash *string      `json:"txHash,omitempty"`
	Reason *string      `json:"reason,omitempty"`
}

func orderView(o *onramp.Order) onrampOrderView {
	q := &o.Quote
	v := onrampOrderView{
		OrderUID: o.UID, Status: o.State, FiatCurrency: q.Currency, FiatAmount: q.Amount, CryptoAsset: q.Symbol,
		ChainID: q.ChainID, CryptoAmount: q.CryptoAmount, WalletAddress: o.Wallet,
		Fees:      onrampFees{NetworkFee: q.Fees.Network, ProcessingFee: q.Fees.Processing, PartnerFee: q.Fees.Partner, TotalFee: q.Fees.Total},
		TotalFiat: q.Total, PaymentMethod: q.Method, CreatedAt: o.CreatedAt.Unix(), ExpiresAt: o.ExpiresAt.Unix(),
	}
	if o.ExternalID != "" {
		v.ExternalID = &o.ExternalID
	}
	if o.TxHash != "" {
		v.TxHash = &o.TxHash
	}
	for _, st := range o.History {
		h := onrampHistory{Status: st.State, At: st.At.UnixMilli()}
		if st.TxHash != "" {
			h.TxHash = &st.TxHash
		}
		if st.Reason != "" {
			h.Reason = &st.Reason
		}
		v.History = append(v.History, h)
	}
	return v
}

// onrampStatus answers GET /v1/onramp/status?orderUid=.
func (s *Server) onrampStatus(r *Request) error {
	uid := string(r.Ctx.QueryArgs().Peek("orderUid"))
	if uid == "" {
		return apierr.Param("orderUid", "orderUid is required")
	}
	if !onramp.ValidUID(uid) {
		return apierr.Param("orderUid", "orderUid is not an order uid (ord_ and 26 characters)").With("value", uid)
	}
	o, err := s.deps.Onramp.Order(r.Context(), uid)
	if errors.Is(err, account.ErrNotFound) {
		return (&apierr.Error{Code: apierr.NotFound, Message: "no order " + uid}).With("param", "orderUid")
	} else if err != nil {
		return apierr.From(err)
	}
	writeJSON(r, statusOK, orderView(o))
	return nil
}

// onrampConfigView is GET /v1/onramp/config: what an integrator needs to
// build a purchase form.
type onrampConfigView struct {
	FiatCurrencies []onrampCurrencyView `json:"fiatCurrencies"`
	PaymentMethods []onrampMethodView   `json:"paymentMethods"`
	Countries      []string             `json:"supportedCountries"`
	QuoteTTL       int                  `json:"quoteTtlSeconds"`
	CheckoutTTL    int                  `json:"checkoutTtlSeconds"`
	AnonymousFee   int                  `json:"anonymousPartnerFeeBps"`
}

type onrampCurrencyView struct {
	Code      string       `json:"code"`
	MinAmount onramp.Cents `json:"minAmount"`
	MaxAmount onramp.Cents `json:"maxAmount"`
}

type onrampMethodView struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	FeeBps     int      `json:"processingFeeBps"`
	Currencies []string `json:"currencies"`
}

func (s *Server) onrampConfig(r *Request) error {
	c := s.deps.Onramp.Catalogue()
	v := onrampConfigView{Countries: c.Countries, QuoteTTL: int(onramp.QuoteTTL.Seconds()),
		CheckoutTTL: int(onramp.CheckoutTTL.Seconds()), AnonymousFee: account.AnonymousOnrampFeeBps}
	for _, cur := range c.Currencies {
		v.FiatCurrencies = append(v.FiatCurrencies, onrampCurrencyView{Code: cur.Code, MinAmount: cur.Minimum, MaxAmount: cur.Maximum})
	}
	for _, m := range c.Methods {
		currencies := m.Currency
		if len(currencies) == 0 {
			currencies = c.Codes()
		}
		v.PaymentMethods = append(v.PaymentMethods, onrampMethodView{ID: m.ID, Name: m.Name, FeeBps: m.FeeBps, Currencies: currencies})
	}
	writeJSON(r, statusOK, v)
	return nil
}

type onrampAssetView struct {
	Symbol   string `json:"symbol"`
	Name     string `json:"name"`
	ChainID  uint64 `json:"chainId"`
	Chain    string `json:"chainKey"`
	Address  string `json:"address"`
	Decimals uint8  `json:"decimals"`
	LogoURI  string `json:"logoURI"`
}

// onrampAssets answers GET /v1/onramp/assets[?chainId=]: the assets the
// on-ramp delivers, with their chain and registry address.
func (s *Server) onrampAssets(r *Request) error {
	var only uint64
	if raw := r.Ctx.QueryArgs().Peek("chainId"); len(raw) > 0 {
		id, err := strconv.ParseUint(string(raw), 10, 64)
		if err != nil || id == 0 {
			// 0 would read as no filter at all.
			return apierr.Param("chainId", "chainId must be a chain ID (a positive integer)").With("value", string(raw))
		}
		only = id
	}
	assets := []onrampAssetView{}
	for _, a := range s.deps.Onramp.Catalogue().Assets {
		if only != 0 && a.ChainID != only {
			continue
		}
		assets = append(assets, onrampAssetView{Symbol: a.Symbol, Name: a.Token.Name, ChainID: a.ChainID, Chain: a.Chain,
			Address: a.Token.Address, Decimals: a.Decimals, LogoURI: s.tokenLogo(a.Token, nil)})
	}
	writeJSON(r, statusOK, map[string]any{"assets": assets})
	return nil
}

// onrampError maps what the desk reports: a market with no price yet is
// the service's momentary condition, anything else an internal error.
func onrampError(err error) error {
	if errors.Is(err, onramp.ErrNoPrice) {
		return apierr.New(apierr.ServiceUnavailable, "the asset has no price yet; retry shortly").Wrap(err)
	}
	return apierr.From(err)
}
