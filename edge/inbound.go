package edge

import (
	"context"
	"errors"

	"github.com/swapgate/swapgate/routing/domain/account"
	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/inbound"
)

// InboundDeposits registers multi-step deposits and reads them back; the
// inbound runner is one. An unknown transaction is account.ErrNotFound.
type InboundDeposits interface {
	Register(ctx context.Context, body []byte) (*inbound.Record, *apierr.Error)
	Deposit(ctx context.Context, txHash string) (*inbound.Record, error)
}

func (s *Server) inboundRoutes() {
	s.Handle("POST", "/v1/inbound-receiver/register", route{bucket: BucketHeavy, name: "inbound-register", idempotent: true}, s.registerDeposit)
	s.Handle("GET", "/v1/inbound-receiver/deposits/{txHash}", route{bucket: BucketRead, name: "inbound-deposit"}, s.inboundDeposit)
}

// inboundView is a registered deposit: the deposit.* payload's fields and
// its times. status is one of RECEIVED, BRIDGING, SWAPPING, FALLBACK and
// the terminal COMPLETED, REFUNDED_USDCH (the DEX leg failed; the user
// holds the bridged USDCh on 369) and FAILED.
type inboundView struct {
	inbound.Data
	QuoteID   string `json:"quoteId,omitempty"`
	CreatedAt string `json:"createdAt"`
	UpdatedAt string `json:"updatedAt"`
}

func inboundViewOf(d *inbound.Record) inboundView {
	return inboundView{Data: d.Deposit.Data(), QuoteID: d.QuoteID,
		CreatedAt: isoTime(d.Deposit.CreatedAt), UpdatedAt: isoTime(d.Deposit.UpdatedAt)}
}

// registerDeposit answers POST /v1/inbound-receiver/register: the six-field
// registration of a confirmed step 1, signed by the depositor (EIP-712
// RegisterDeposit); step 2 then runs by itself.
func (s *Server) registerDeposit(r *Request) error {
	if err := jsonContentType(r); err != nil {
		return err
	}
	d, err := s.deps.Inbound.Register(r.Context(), r.Ctx.PostBody())
	if err != nil {
		return err
	}
	writeJSON(r, statusOK, inboundViewOf(d))
	return nil
}

// inboundDeposit answers GET /v1/inbound-receiver/deposits/{txHash}.
func (s *Server) inboundDeposit(r *Request) error {
	h, _ := r.Ctx.UserValue("txHash").(string)
	if !isTxHash(h) {
		return apierr.Param("txHash", "txHash must be 0x and 64 hex digits").With("value", h)
	}
	d, err := s.deps.Inbound.Deposit(r.Context(), h)
	if errors.Is(err, account.ErrNotFound) {
		e := apierr.Param("txHash", "no deposit is registered for this transaction").With("value", h)
		e.Status = 404
		return e
	}
	if err != nil {
		return apierr.From(err)
	}
	writeJSON(r, statusOK, inboundViewOf(d))
	return nil
}
