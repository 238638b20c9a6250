package edge

import (
	"errors"
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
// chain=&minFeeUsd=: the partner's quotes, swaps and on-ramp orders, newest
// first, a page at a time. chain matches the source or the destination
// chain; minFeeUsd keeps fee-bearing rows whose fee is at least that much,
// so minFeeUsd=0 is the per-swap earnings breakdown (feeUsd > 0). status
// (at most 64 bytes) and cursor (at most 256) are printable text.
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
	acts, next, err := s.deps.Accounts.Activities(r.Context(), r.Partner.ID, q)
	if errors.Is(err, account.ErrBadCursor) {
		return apierr.Param("cursor", "cursor is not one this endpoint returned")
	}
	if err != nil {
		return apierr.From(err)
	}
	out := make([]transactionView, 0, len(acts))
	for _, a := range acts {
		out = append(out, transactionView{
			ID: a.ID, Kind: a.Kind, Status: a.Status, Provider: a.Provider, Tool: a.Tool,
			FromChain: a.FromChain, ToChain: a.ToChain, FromToken: a.FromToken, ToToken: a.ToToken,
			FromAmount: a.FromAmount, ToAmount: a.ToAmount,
			FeeUSD: knownMicroUSD(a.FeeMicroUSD, a.FeeUSDUnknown), VolumeUSD: knownMicroUSD(a.VolumeMicroUSD, a.VolumeUSDUnknown),
			CreatedAt: isoTime(a.CreatedAt),
		})
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
