package edge

import (
	"strings"
	"time"

	"github.com/swapgate/swapgate/routing/domain/apierr"
)

// SandboxMailbox is the sandbox's stand-in for an inbox: in sandbox mode
// without an SMTP relay, the mail the service sends (the portal's sign-in
// codes) is kept there and read back through GET /v1/sandbox/mailbox.
type SandboxMailbox interface {
	// Mail lists the messages sent to an address, newest first.
	Mail(to string) []SentMail
}

// SentMail is one message the service sent.
type SentMail struct {
	To, Subject, Text string
	SentAt            time.Time
}

// sandboxMailbox answers GET /v1/sandbox/mailbox?email=: the messages sent
// to an address, newest first, each {to, subject, text, sentAt}. It exists
// only in sandbox mode without SMTP (Deps.Mailbox), where anyone who knows
// a sandbox partner's address may read its codes: the sandbox holds no
// real funds, and this is how a sandbox partner signs in to the portal
// without a mail server. email is required, one address of at most 254
// bytes; an address nothing was sent to has an empty list.
func (s *Server) sandboxMailbox(r *Request) error {
	email, ok := query(r, "email")
	email = strings.TrimSpace(email)
	switch {
	case !ok || email == "":
		return apierr.Param("email", "email is required: the address whose mail to list")
	case len(email) > 254 || strings.Count(email, "@") != 1 || strings.ContainsAny(email, " \t\r\n<>\""):
		return apierr.Param("email", "email must be one email address").With("value", email)
	}
	type message struct {
		To      string `json:"to"`
		Subject string `json:"subject"`
		Text    string `json:"text"`
		SentAt  string `json:"sentAt"`
	}
	mail := s.deps.Mailbox.Mail(email)
	out := struct {
		Email    string    `json:"email"`
		Messages []message `json:"messages"`
	}{Email: email, Messages: make([]message, 0, len(mail))}
	for _, m := range mail {
		out.Messages = append(out.Messages, message{To: m.To, Subject: m.Subject, Text: m.Text, SentAt: m.SentAt.UTC().Format(attemptTimeFormat)})
	}
	writeJSON(r, statusOK, out)
	return nil
}
