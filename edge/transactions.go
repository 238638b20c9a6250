package edge

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/apierr"
)

// transactionView is one item of GET /v1/partner/transactions. Chain ids fit JSON numbers exactly (all are below 2^53); USD
// figures are exact decimal strings.
type transactionView struct {
	ID         string `json:"id"`
	Kind       string `json:"kind"`
	Status     string `json:"status"`
	Provider   string `json:"provider"`
	Tool       string `json:"tool"`
	FromChain  uint64 `json:"fromChain"`
	ToChain    uint64 `json:"toChain"`
	FromToken  string `json:"fromToken"`
	ToToken    string `json:"toToken"`
	FromAmount string `json:"fromAmount"`
	ToAmount   string `json:"toAmount"`
	FeeUSD     string `json:"feeUsd,omitempty"`
	VolumeUSD  string `json:"volumeUsd,omitempty"`
	CreatedAt  string `json:"createdAt"`
	// The swap's sender and receiver and its source and destination
	// transactions: null until known (a quote never executed has none).
	FromAddress     *string `json:"fromAddress"`
	ToAddress       *string `json:"toAddress"`
	SendingTxHash   *string `json:"sendingTxHash"`
	ReceivingTxHash *string `json:"receivingTxHash"`
}

// newTransactionView is a's item of GET /v1/partner/transactions, which
// the portal's pages and export show too.
func newTransactionView(a *account.Activity) transactionView {
	return transactionView{
		ID: a.ID, Kind: a.Kind, Status: a.Status, Provider: a.Provider, Tool: a.Tool,
		FromChain: a.FromChain, ToChain: a.ToChain, FromToken: a.FromToken, ToToken: a.ToToken,
		FromAmount: a.FromAmount, ToAmount: a.ToAmount,
		FeeUSD: knownMicroUSD(a.FeeMicroUSD, a.FeeUSDUnknown), VolumeUSD: knownMicroUSD(a.VolumeMicroUSD, a.VolumeUSDUnknown),
		CreatedAt:   isoTime(a.CreatedAt),
		FromAddress: known(a.FromAddress), ToAddress: known(a.ToAddress),
		SendingTxHash: known(a.SendingTxHash), ReceivingTxHash: known(a.ReceivingTxHash),
	}
}

// known is v, or nil (JSON null) when it is not known yet ("").
func known(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}

// walletFormats is the address formats of the registry's chains, each
// once: what a wallet that names no chain may be written in.
func (s *Server) walletFormats() []string {
	var out []string
	for _, c := range s.deps.Registry.Chains() {
		if !slices.Contains(out, c.AddressFormat) {
			out = append(out, c.AddressFormat)
		}
	}
	return out
}

// walletMessage is the refusal of a wallet filter, the API's and the
// portal's.
func walletMessage(err error) string {
	return "wallet must be an account address of a chain Swapgate routes on (EVM in any case, a mixed-case one with its EIP-55 checksum; others exactly as written): " + err.Error()
}

// knownMicroUSD formats a figure, or leaves it out ("") when it could not
// be valued.
func knownMicroUSD(v int64, unknown bool) string {
	if unknown {
		return ""
	}
	return formatMicroUSD(v)
}

// microUSD is one USD in micro-USD.
var microUSD = decimal.NewFromInt(1_000_000)

// transactions answers GET /v1/partner/transactions?limit=&cursor=&status=&
// chain=&minFeeUsd=&wallet=: the partner's quotes, swaps and on-ramp
// orders, newest first, a page at a time. chain matches the source or the
// destination chain; minFeeUsd keeps fee-bearing rows whose fee is at
// least that much, so minFeeUsd=0 is the per-swap earnings breakdown
// (feeUsd > 0); wallet keeps the swaps whose sender or receiver it is (an
// EVM address in any case; see account.ParseWallet). status (at most 64
// bytes) and cursor (at most 256) are printable text.
func (s *Server) transactions(r *Request) error {
	var q account.ActivityQuery
	if v, ok := query(r, "limit"); ok {
		n, err := positiveIntParam("limit", v)
		if err != nil {
			return err
		}
		if n > account.MaxActivityLimit {
			return apierr.Param("limit", "limit must be at most "+strconv.Itoa(account.MaxActivityLimit)).With("value", v)
		}
		q.Limit = n
	}
	if v, ok := query(r, "cursor"); ok {
		// A cursor is the store's, and far shorter than this.
		if err := textParam("cursor", v, 256); err != nil {
			return err
		}
		q.Cursor = v
	}
	if v, ok := query(r, "status"); ok {
		if err := textParam("status", v, 64); err != nil {
			return err
		}
		q.Status = strings.TrimSpace(v)
	}
	if v, ok := query(r, "chain"); ok {
		id, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil || id == 0 {
			return apierr.Param("chain", "chain must be a chain ID (a positive integer)").With("value", v)
		}
		q.Chain = id
	}
	if v, ok := query(r, "minFeeUsd"); ok {
		d, err := decimal.NewFromString(strings.TrimSpace(v))
		if err != nil || d.IsNegative() || d.GreaterThan(decimal.NewFromInt(1_000_000_000_000)) {
			return apierr.Param("minFeeUsd", "minFeeUsd must be a non-negative decimal number of USD").With("value", v)
		}
		// Rounding up keeps "fee >= minFeeUsd" exact for inputs finer than
		// a micro-dollar.
		m := d.Mul(microUSD).Ceil().IntPart()
		q.MinFeeMicroUSD = &m
	}
	if v, ok := query(r, "wallet"); ok {
		w, err := account.ParseWallet(s.walletFormats(), strings.TrimSpace(v))
		if err != nil {
			return apierr.Param("wallet", walletMessage(err)).With("value", v)
		}
		q.Wallet = w
	}
	acts, next, err := s.deps.Accounts.Activities(r.Context(), r.Partner.ID, q)
	if errors.Is(err, account.ErrBadCursor) {
		return apierr.Param("cursor", "cursor is not one this endpoint returned")
	}
	if err != nil {
		return apierr.From(err)
	}
	out := make([]transactionView, 0, len(acts))
	for _, a := range acts {
		out = append(out, newTransactionView(a))
	}
	var nextCursor *string
	if next != "" {
		nextCursor = &next
	}
	writeJSON(r, statusOK, struct {
		Transactions []transactionView `json:"transactions"`
		NextCursor   *string           `json:"nextCursor"`
	}{out, nextCursor})
	return nil
}
