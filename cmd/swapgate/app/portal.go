package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/swapgate/swapgate/edge"
	"github.com/swapgate/swapgate/edge/admin"
	"github.com/swapgate/swapgate/routing/adapters/smtpmail"
	"github.com/swapgate/swapgate/routing/sim/mailbox"
)

// portalService builds the partner portal's collaborators: its mail goes
// through --smtp-url when one is set; in sandbox mode without one, into the
// sandbox mailbox, which the edge then serves at GET /v1/sandbox/mailbox.
// Live mode without SMTP serves no portal, since nobody could receive a
// sign-in code. Keys are rotated by the operator's own partner operations,
// so a rotation from the portal is the CLI's rotation (dated, every
// session ended, the edge's cached partner dropped); so are the
// allowedOrigins a partner sets there.
func (a *App) portalService(cfg Config) (*edge.PortalService, edge.SandboxMailbox, error) {
	var mailer edge.Mailer
	var box edge.SandboxMailbox
	switch {
	case cfg.SMTPURL != "":
		s, err := smtpmail.New(cfg.SMTPURL, cfg.SMTPFrom)
		if err != nil {
			return nil, nil, fmt.Errorf("app: --smtp-url: %w", err)
		}
		mailer = s
	case cfg.Mode != ModeLive:
		b := mailbox.New(nil)
		mailer, box = b, sandboxMailbox{b}
	default:
		a.log.Info("partner portal off: live mode needs --smtp-url to send sign-in codes")
		return nil, nil, nil
	}
	keys := portalKeys{admin.NewLocal(a.stores.Partners, func(id string) {
		if a.edge != nil {
			a.edge.InvalidatePartner(id)
		}
	})}
	a.log.Info("partner portal on", slog.Bool("smtp", cfg.SMTPURL != ""))
	return &edge.PortalService{Store: a.stores.Portal, Mailer: mailer, Keys: keys, Origins: keys,
		CodeKey: a.stores.Portal.PortalCodeKey()}, box, nil
}

// portalKeys rotates a partner's key and sets its allowedOrigins through
// the operator's operations.
type portalKeys struct{ l *admin.Local }

func (k portalKeys) SetAllowedOrigins(ctx context.Context, partnerID string, origins []string) error {
	_, err := k.l.SetOrigins(ctx, partnerID, origins)
	return err
}

func (k portalKeys) RotateKey(ctx context.Context, partnerID string) (string, error) {
	res, err := k.l.RotateKey(ctx, partnerID)
	if err != nil {
		return "", err
	}
	return res.APIKey, nil
}

// sandboxMailbox is the sandbox mailbox as the edge reads it.
type sandboxMailbox struct{ b *mailbox.Box }

func (m sandboxMailbox) Mail(to string) []edge.SentMail {
	msgs := m.b.Messages(to)
	out := make([]edge.SentMail, len(msgs))
	for i, x := range msgs {
		out[i] = edge.SentMail{To: x.To, Subject: x.Subject, Text: x.Text, SentAt: x.SentAt}
	}
	return out
}
