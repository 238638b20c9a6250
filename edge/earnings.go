package edge

import (
	"strconv"
	"strings"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/apierr"
)

// earningsNotes is the summary's operational note on settlement cadence.
const earningsNotes = "Earnings are recorded at quote time; an on-ramp order's fee when the order completes. Settlement is run by the operations team " +
	"per ecosystem; each run pays every pending row of that ecosystem to the fee wallet registered " +
	"at the time of the run, one transfer per chain and token; a row is settled once its transfer is confirmed on-chain, " +
	"and a settled item names the transfer's chainId and txHash. Pending rows of an ecosystem without a registered fee wallet wait " +
	"for the first run after a wallet is registered; changing or deleting a wallet never affects " +
	"rows already settled."

// earningsItem is one ecosystem's total in the earnings summary; a settled
// item is one transfer's, named by its chain and transaction (absent for
// earnings settled before payouts were sent on-chain).
type earningsItem struct {
	Ecosystem string `json:"ecosystem"`
	ChainID   uint64 `json:"chainId,omitempty"`
	TxHash    string `json:"txHash,omitempty"`
	TotalUSD  string `json:"totalUsd"`
	RowCount  int    `json:"rowCount"`
}

// earnings answers GET /v1/partner/me/earnings from the partner's ledger
// rows, summed in integer micro-USD so the totals are exact.
func (s *Server) earnings(r *Request) error {
	e, err := s.deps.Accounts.Earnings(r.Context(), r.Partner.ID)
	if err != nil {
		return apierr.From(err)
	}
	writeJSON(r, statusOK, struct {
		PartnerID string         `json:"partnerId"`
		Pending   []earningsItem `json:"pending"`
		Settled   []earningsItem `json:"settled"`
		Notes     string         `json:"notes"`
	}{r.Partner.ID, earningsItems(e.Pending), earningsItems(e.Settled), earningsNotes})
	return nil
}

func earningsItems(gs []account.EarningsGroup) []earningsItem {
	out := make([]earningsItem, 0, len(gs))
	for _, g := range gs {
		out = append(out, earningsItem{Ecosystem: g.Ecosystem, ChainID: g.ChainID, TxHash: g.TxHash,
			TotalUSD: formatMicroUSD(g.TotalMicroUSD), RowCount: g.RowCount})
	}
	return out
}

// formatMicroUSD writes integer micro-USD as an exact decimal string with 2
// to 6 decimals: trailing zeros are trimmed down to cents (12.30, 12.345678,
// 0.000005).
func formatMicroUSD(n int64) string {
	neg := n < 0
	u := uint64(n)
	if neg {
		u = -u
	}
	frac := strconv.FormatUint(u%1_000_000, 10)
	frac = strings.Repeat("0", 6-len(frac)) + frac
	for len(frac) > 2 && frac[len(frac)-1] == '0' {
		frac = frac[:len(frac)-1]
	}
	s := strconv.FormatUint(u/1_000_000, 10) + "." + frac
	if neg {
		return "-" + s
	}
	return s
}
