package edge

import (
	"context"
	"errors"
	"time"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/apierr"
)

// AccountStore is what the partner account endpoints (fee wallets, earnings,
// stats, transactions) read and write: two aggregates of the store, a
// partner's fee wallets and its ledger. Every method is scoped to one
// partner and reads only that partner's keys.
type AccountStore interface {
	FeeWalletStore
	LedgerReader
}

// FeeWalletStore keeps a partner's fee wallets, one per ecosystem; an
// acknowledged write is durable.
type FeeWalletStore interface {
	FeeWallets(ctx context.Context, partnerID string) ([]account.FeeWallet, error)
	PutFeeWallet(ctx context.Context, partnerID, ecosystem, address string) error
	DeleteFeeWallet(ctx context.Context, partnerID, ecosystem string) error
}

// LedgerReader reads a partner's ledger: its activity (quotes and what
// they became), the earnings they carry, and statistics over a period.
type LedgerReader interface {
	Earnings(ctx context.Context, partnerID string) (*account.Earnings, error)
	Activities(ctx context.Context, partnerID string, q account.ActivityQuery) ([]*account.Activity, string, error)
	Stats(ctx context.Context, partnerID string, from, to time.Time) (*account.Stats, error)
}

// accountRoutes registers the partner account endpoints. They all need a
// key and count against the read bucket.
func (s *Server) accountRoutes() {
	rt := func(name string) route { return route{bucket: BucketRead, auth: authRequired, name: name} }
	s.Handle("GET", "/v1/partner/me/fee-wallets", rt("fee-wallets"), s.listFeeWallets)
	s.Handle("PUT", "/v1/partner/me/fee-wallets", rt("fee-wallets-put"), s.putFeeWallet)
	s.Handle("DELETE", "/v1/partner/me/fee-wallets/{ecosystem}", rt("fee-wallets-delete"), s.deleteFeeWallet)
	s.Handle("GET", "/v1/partner/me/earnings", rt("earnings"), s.earnings)
	s.Handle("GET", "/v1/partner/stats", rt("stats"), s.stats)
	s.Handle("GET", "/v1/partner/transactions", rt("transactions"), s.transactions)
}

// feeWalletView is the specification's Fee wallet resource.
type feeWalletView struct {
	Ecosystem string `json:"ecosystem"`
	Address   string `json:"address"`
	CreatedAt string `json:"createdAt"`
	UpdatedAt string `json:"updatedAt"`
}

// feeWalletBody is the body of PUT /v1/partner/me/fee-wallets.
type feeWalletBody struct {
	Ecosystem string `json:"ecosystem"`
	Address   string `json:"address"`
}

// ecosystemParam checks a fee ecosystem name against the five of the
// specification; names are case-sensitive, as listed there.
func ecosystemParam(param, v string) *apierr.Error {
	if v == "" {
		return apierr.Param(param, param+" is required")
	}
	if !account.ValidEcosystem(v) {
		return apierr.Param(param, "unsupported ecosystem "+v+"; want one of evm, solana, bitcoin, sui, near").
			With("ecosystem", v)
	}
	return nil
}

// listFeeWallets answers GET /v1/partner/me/fee-wallets.
func (s *Server) listFeeWallets(r *Request) error {
	ws, err := s.deps.Accounts.FeeWallets(r.Context(), r.Partner.ID)
	if err != nil {
		return apierr.From(err)
	}
	out := make([]feeWalletView, 0, len(ws))
	for _, w := range ws {
		out = append(out, feeWalletView{Ecosystem: w.Ecosystem, Address: w.Address,
			CreatedAt: isoTime(w.CreatedAt), UpdatedAt: isoTime(w.UpdatedAt)})
	}
	writeJSON(r, statusOK, struct {
		PartnerID string          `json:"partnerId"`
		Wallets   []feeWalletView `json:"wallets"`
	}{r.Partner.ID, out})
	return nil
}

// putFeeWallet answers PUT /v1/partner/me/fee-wallets: an upsert, one wallet
// per ecosystem. The address is checked with the ecosystem's real codec
// (checksums included) before anything is stored.
func (s *Server) putFeeWallet(r *Request) error {
	var body feeWalletBody
	if err := decodeBody(r, &body); err != nil {
		return err
	}
	if err := ecosystemParam("ecosystem", body.Ecosystem); err != nil {
		return err
	}
	if body.Address == "" {
		return apierr.Param("address", "address is required").With("ecosystem", body.Ecosystem)
	}
	if err := account.ValidateFeeWallet(body.Ecosystem, body.Address); err != nil {
		return apierr.Param("address", "address is not a valid "+body.Ecosystem+" fee wallet: "+err.Error()).
			With("ecosystem", body.Ecosystem)
	}
	if err := s.deps.Accounts.PutFeeWallet(r.Context(), r.Partner.ID, body.Ecosystem, body.Address); err != nil {
		return apierr.From(err)
	}
	writeJSON(r, statusOK, struct {
		PartnerID string `json:"partnerId"`
		Ecosystem string `json:"ecosystem"`
		Address   string `json:"address"`
	}{r.Partner.ID, body.Ecosystem, body.Address})
	return nil
}

// deleteFeeWallet answers DELETE /v1/partner/me/fee-wallets/{ecosystem}. A
// missing wallet is 404 with INVALID_PARAMS, as the specification asks.
func (s *Server) deleteFeeWallet(r *Request) error {
	eco, _ := r.Ctx.UserValue("ecosystem").(string)
	if err := ecosystemParam("ecosystem", eco); err != nil {
		return err
	}
	err := s.deps.Accounts.DeleteFeeWallet(r.Context(), r.Partner.ID, eco)
	if errors.Is(err, account.ErrNotFound) {
		e := apierr.Param("ecosystem", "no fee wallet is registered for "+eco).With("ecosystem", eco)
		e.Status = 404
		return e
	}
	if err != nil {
		return apierr.From(err)
	}
	writeJSON(r, statusOK, struct {
		PartnerID string `json:"partnerId"`
		Ecosystem string `json:"ecosystem"`
		Deleted   bool   `json:"deleted"`
	}{r.Partner.ID, eco, true})
	return nil
}

// isoTime formats a stored time as the specification's ISO 8601 strings.
func isoTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }
