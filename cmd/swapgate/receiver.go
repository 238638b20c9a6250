package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/swapgate/swapgate/routing/domain/webhook"
)

// runReceiver is `swapgate webhook-receiver`: a local HTTPS endpoint for
// trying webhooks out. It makes a self-signed certificate for 127.0.0.1
// and localhost, writes it where the server can be told to trust it
// (SSL_CERT_FILE), and prints one JSON line per delivery saying whether its
// X-Service-Signature verified against the secret. With --fail-share it
// answers that share of deliveries 500, so that the sender's retries can be
// watched (and loaded, as the bench suite's webhook-storm does).
func runReceiver(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("webhook-receiver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:9443", "HTTPS listen address (loopback)")
	secret := fs.String("secret", "", "the webhook signing secret to verify deliveries with (required)")
	certOut := fs.String("cert-out", "receiver-cert.pem", "where to write the receiver's certificate (PEM)")
	failShare := fs.Float64("fail-share", 0, "share of deliveries answered 500 to force retries, in [0, 1): every 1/share-th one")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *failShare < 0 || *failShare >= 1 {
		fmt.Fprintln(stderr, "swapgate webhook-receiver: --fail-share must be in [0, 1)")
		return 2
	}
	if *secret == "" {
		fmt.Fprintln(stderr, "swapgate webhook-receiver: --secret is required")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rcv, err := startReceiver(*addr, []byte(*secret), *certOut, *failShare, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "swapgate webhook-receiver: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "listening on https://%s/ — certificate in %s\n", rcv.Addr(), *certOut)
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = rcv.srv.Shutdown(sctx)
	return 0
}

// receiver is a running local webhook receiver.
type receiver struct {
	srv *http.Server
	ln  net.Listener
}

func (r *receiver) Addr() string { return r.ln.Addr().String() }

// receivedDelivery is the line printed for each delivery.
type receivedDelivery struct {
	Event          string `json:"event"`
	Delivery       string `json:"delivery"`
	Timestamp      string `json:"timestamp"`
	SignatureValid bool   `json:"signatureValid"`
	// Answered is the status the receiver answered with.
	Answered int             `json:"answered"`
	Body     json.RawMessage `json:"body"`
}

// startReceiver starts the receiver on addr; failShare of the deliveries
// with a valid signature (every one whose count crosses a multiple of
// 1/failShare, so that the share holds from the first few on and runs
// repeat) are answered 500.
func startReceiver(addr string, secret []byte, certOut string, failShare float64, out io.Writer) (*receiver, error) {
	cert, pemBytes, err := selfSigned()
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(certOut, pemBytes, 0o644); err != nil {
		return nil, fmt.Errorf("write certificate: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	var mu sync.Mutex
	var valid int64 // deliveries with a valid signature so far, under mu
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "read error", http.StatusBadRequest)
			return
		}
		ok := webhook.Verify(secret, body, r.Header.Get(webhook.HeaderSignature))
		mu.Lock()
		defer mu.Unlock()
		status := http.StatusNoContent
		if !ok {
			// As the specification tells receivers: refuse a bad signature.
			status = http.StatusUnauthorized
		} else {
			valid++
			if int64(float64(valid)*failShare) > int64(float64(valid-1)*failShare) {
				status = http.StatusInternalServerError
			}
		}
		line, _ := json.Marshal(receivedDelivery{Event: r.Header.Get(webhook.HeaderEvent), Delivery: r.Header.Get(webhook.HeaderDelivery),
			Timestamp: r.Header.Get(webhook.HeaderTimestamp), SignatureValid: ok, Answered: status, Body: json.RawMessage(body)})
		fmt.Fprintf(out, "%s\n", line)
		switch status {
		case http.StatusUnauthorized:
			http.Error(w, "bad signature", status)
		case http.StatusInternalServerError:
			http.Error(w, "failing on purpose (--fail-share)", status)
		default:
			w.WriteHeader(status)
		}
	})
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}
	rcv := &receiver{srv: srv, ln: ln}
	go func() {
		if err := srv.ServeTLS(ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(out, "receiver stopped: %v\n", err)
		}
	}()
	return rcv, nil
}

// selfSigned makes a one-day ECDSA certificate for 127.0.0.1, ::1 and
// localhost.
func selfSigned() (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: "swapgate local webhook receiver"},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pemBytes, nil
}
