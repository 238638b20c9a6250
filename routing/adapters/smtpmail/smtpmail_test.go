package smtpmail

import (
	"bufio"
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// relay is a minimal SMTP server speaking the exchange RFC 5321 describes
// (greeting 220, EHLO 250, MAIL/RCPT 250, DATA 354 ... 250, QUIT 221),
// recording the commands and the message it received.
func relay(t *testing.T) (addr string, got chan string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	got = make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		var log strings.Builder
		say := func(s string) { _, _ = c.Write([]byte(s + "\r\n")) }
		say("220 relay.test ESMTP")
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				got <- log.String()
				return
			}
			cmd := strings.TrimRight(line, "\r\n")
			log.WriteString(cmd + "\n")
			switch up := strings.ToUpper(cmd); {
			case strings.HasPrefix(up, "EHLO"):
				say("250-relay.test")
				say("250 8BITMIME")
			case strings.HasPrefix(up, "MAIL"), strings.HasPrefix(up, "RCPT"):
				say("250 OK")
			case up == "DATA":
				say("354 go ahead")
				for {
					l, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if l == ".\r\n" {
						break
					}
					log.WriteString("> " + l)
				}
				say("250 queued")
			case up == "QUIT":
				say("221 bye")
				got <- log.String()
				return
			default:
				say("502 unknown")
			}
		}
	}()
	return ln.Addr().String(), got
}

func TestSend(t *testing.T) {
	addr, got := relay(t)
	s, err := New("smtp://"+addr, "Swapgate <portal@swapgate.example>")
	if err != nil {
		t.Fatal(err)
	}
	s.now = func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }
	if err := s.Send(context.Background(), "ops@acme.example", "Your sign-in code", "Code: 123456\nValid 10 minutes."); err != nil {
		t.Fatal(err)
	}
	log := <-got
	for _, want := range []string{"MAIL FROM:<portal@swapgate.example>", "RCPT TO:<ops@acme.example>", "> To: ops@acme.example\r\n",
		"> Subject: Your sign-in code\r\n", "> Code: 123456\r\n", "> Valid 10 minutes.\r\n", "QUIT"} {
		if !strings.Contains(log, want) {
			t.Errorf("relay did not get %q:\n%s", want, log)
		}
	}
}

func TestSendRefusesInjection(t *testing.T) {
	s, err := New("smtp://127.0.0.1:1", "portal@swapgate.example")
	if err != nil {
		t.Fatal(err)
	}
	for _, to := range []string{"a@b.co\r\nBcc: x@y.z", "not an address"} {
		if err := s.Send(context.Background(), to, "s", "t"); err == nil || !strings.Contains(err.Error(), "malformed") {
			t.Errorf("Send to %q: %v", to, err)
		}
	}
}

func TestParseURL(t *testing.T) {
	for raw, ok := range map[string]bool{"smtp://mail.example.com": true, "smtp://u:p@mail.example.com:587": true,
		"smtps://mail.example.com": false, "http://x": false, "smtp://": false, "smtp://h/path": false, "smtp://h?x=1": false} {
		if _, err := ParseURL(raw); (err == nil) != ok {
			t.Errorf("ParseURL(%q) = %v", raw, err)
		}
	}
	for from, ok := range map[string]bool{"a@b.co": true, "Swapgate <a@b.co>": true, "nope": false, "": false} {
		if err := CheckFrom(from); (err == nil) != ok {
			t.Errorf("CheckFrom(%q) = %v", from, err)
		}
	}
}
