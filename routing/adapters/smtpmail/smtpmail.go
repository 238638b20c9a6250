// Package smtpmail sends the service's mail (the partner portal's sign-in
// codes) through an SMTP relay named by a URL:
//
//	smtp://[user:password@]host[:port]   port 25 by default
//
// The connection is upgraded with STARTTLS whenever the server offers it,
// and credentials, when the URL has some, are sent with PLAIN auth, which
// net/smtp allows only over TLS or to localhost. Messages are plain text,
// UTF-8, one recipient each.
package smtpmail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/mail"
	"net/smtp"
	"net/url"
	"strings"
	"time"
)

// DefaultTimeout bounds one message's whole SMTP conversation when the
// caller's context has no deadline.
const DefaultTimeout = 15 * time.Second

// Sender sends mail through one relay.
type Sender struct {
	addr, host string
	auth       smtp.Auth
	from       string
	// TLSConfig, when set, replaces the default STARTTLS configuration
	// (tests give their own roots).
	TLSConfig *tls.Config
	now       func() time.Time
}

// ParseURL checks an --smtp-url value.
func ParseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("malformed URL: %w", err)
	}
	if u.Scheme != "smtp" || u.Hostname() == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return nil, fmt.Errorf("must be smtp://[user:password@]host[:port], got %q", u.Redacted())
	}
	return u, nil
}

// CheckFrom checks an --smtp-from value: one address, optionally with a
// name ("Swapgate <portal@example.com>").
func CheckFrom(from string) error {
	if _, err := mail.ParseAddress(from); err != nil {
		return fmt.Errorf("must be an email address, got %q: %w", from, err)
	}
	return nil
}

// New returns a sender through the relay at rawURL, from the address from.
func New(rawURL, from string) (*Sender, error) {
	u, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	if err := CheckFrom(from); err != nil {
		return nil, err
	}
	port := u.Port()
	if port == "" {
		port = "25"
	}
	s := &Sender{addr: net.JoinHostPort(u.Hostname(), port), host: u.Hostname(), from: from, now: time.Now}
	if u.User != nil {
		pw, _ := u.User.Password()
		s.auth = smtp.PlainAuth("", u.User.Username(), pw, u.Hostname())
	}
	return s, nil
}

// Send sends one plain-text message to one recipient.
func (s *Sender) Send(ctx context.Context, to, subject, text string) error {
	if _, err := mail.ParseAddress(to); err != nil || strings.ContainsAny(to, "\r\n<>") {
		// The address is not repeated: errors are logged, addresses are not.
		return errors.New("smtpmail: recipient address malformed")
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	deadline, _ := ctx.Deadline()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", s.addr)
	if err != nil {
		return fmt.Errorf("smtpmail: dial %s: %w", s.addr, err)
	}
	_ = conn.SetDeadline(deadline)
	c, err := smtp.NewClient(conn, s.host)
	if err != nil {
		_ = conn.Close()
		return fmt.Errorf("smtpmail: greeting from %s: %w", s.addr, err)
	}
	defer c.Close()
	if ok, _ := c.Extension("STARTTLS"); ok {
		cfg := s.TLSConfig
		if cfg == nil {
			cfg = &tls.Config{ServerName: s.host, MinVersion: tls.VersionTLS12}
		}
		if err := c.StartTLS(cfg); err != nil {
			return fmt.Errorf("smtpmail: STARTTLS with %s: %w", s.addr, err)
		}
	}
	if s.auth != nil {
		if err := c.Auth(s.auth); err != nil {
			return fmt.Errorf("smtpmail: auth with %s: %w", s.addr, err)
		}
	}
	from, _ := mail.ParseAddress(s.from)
	if err := c.Mail(from.Address); err != nil {
		return fmt.Errorf("smtpmail: MAIL FROM: %w", err)
	}
	if err := c.Rcpt(to); err != nil {
		return fmt.Errorf("smtpmail: RCPT TO: %w", err)
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("smtpmail: DATA: %w", err)
	}
	if _, err := w.Write(s.message(to, subject, text)); err != nil {
		return fmt.Errorf("smtpmail: write message: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("smtpmail: message refused: %w", err)
	}
	if err := c.Quit(); err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("smtpmail: QUIT: %w", err)
	}
	return nil
}

// message is the RFC 5322 message: headers, a blank line, the text with
// CRLF line ends.
func (s *Sender) message(to, subject, text string) []byte {
	var b strings.Builder
	b.WriteString("From: " + s.from + "\r\n")
	b.WriteString("To: " + to + "\r\n")
	b.WriteString("Subject: " + mime.QEncoding.Encode("utf-8", subject) + "\r\n")
	b.WriteString("Date: " + s.now().UTC().Format(time.RFC1123Z) + "\r\n")
	b.WriteString("MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n")
	for _, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		b.WriteString(line + "\r\n")
	}
	return []byte(b.String())
}
