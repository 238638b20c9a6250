package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/swapgate/swapgate/internal/apitest"
	"github.com/swapgate/swapgate/routing/domain/webhook"
)

// example is one captured exchange, as the document will show it.
type example struct {
	name, summary string
	// method and path name the operation; path is the template
	// (/v1/sandbox/tx/{txHash}). A refusal's example goes to the shared
	// response of its status instead (errorStatus set).
	method, path string
	status       int
	errorStatus  bool
	request      any // the JSON body sent, nil for none
	// response is the answer's body (for a webhook: the delivery's) with
	// its members in the order the service wrote them.
	response *node
	// event names the webhook of a captured delivery.
	event string
	// line is the request as it was made, GET /v1/tokens?chains=1,8453.
	line string
}

// session talks to the service as a client does and keeps what it
// captured. Every answer is held to the document on arrival.
type session struct {
	ctx      context.Context
	base     string
	client   *http.Client
	contract *apitest.Contract
	examples []example
	// last is the line of the last request made, for keep.
	last string
}

// answer is one response: status, headers, and the body decoded with
// numbers kept as written (100.00 stays 100.00).
type answer struct {
	status int
	header http.Header
	raw    []byte
	body   any
}

// data is the envelope's data member.
func (a *answer) data() any { return at(a.body, "data") }

// call makes one request; key is the partner key ("" for anonymous). The
// answer must have status want and pass the document.
func (s *session) call(method, path string, body any, key string, want int, headers ...string) (*answer, error) {
	var rd io.Reader
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return nil, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(s.ctx, method, s.base+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	s.last = method + " " + path
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode != want {
		return nil, fmt.Errorf("%s %s: %d, want %d: %s", method, path, resp.StatusCode, want, b)
	}
	if err := s.contract.CheckResponse(req, resp.StatusCode, resp.Header, b); err != nil {
		return nil, err
	}
	a := &answer{status: resp.StatusCode, header: resp.Header, raw: b}
	if a.body, err = decode(b); err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	return a, nil
}

// keep records an answer as the example name of the operation at
// template, trimmed by trim when the whole answer would be too long to
// read.
func (s *session) keep(name, summary, method, template string, request any, a *answer, trim func(*node)) {
	v, err := parseNode(a.raw)
	if err != nil {
		panic("examples: an answer that decoded once does not parse: " + err.Error())
	}
	if trim != nil {
		trim(v)
	}
	s.examples = append(s.examples, example{name: name, summary: summary, method: strings.ToLower(method), path: template,
		status: a.status, errorStatus: a.status >= 400, request: request, response: v, line: s.last})
}

// capture is call and keep in one, for a request made once: path is also
// the operation's template.
func (s *session) capture(name, summary, method, path string, body any, key string, want int, trim func(*node)) (*answer, error) {
	a, err := s.call(method, path, body, key, want)
	if err != nil {
		return nil, err
	}
	template, _, _ := strings.Cut(path, "?")
	s.keep(name, summary, method, template, body, a, trim)
	return a, nil
}

// poll calls GET path until done accepts its data, or the context ends.
func (s *session) poll(path, key string, done func(data any) bool) (*answer, error) {
	for {
		a, err := s.call(http.MethodGet, path, nil, key, http.StatusOK)
		if err != nil {
			return nil, err
		}
		if done(a.data()) {
			return a, nil
		}
		select {
		case <-s.ctx.Done():
			return nil, fmt.Errorf("GET %s: still %s: %w", path, a.raw, s.ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// decode parses JSON keeping numbers as written.
func decode(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// at follows object members and array indexes (as strings of digits) in a
// decoded value; nil when one is missing.
func at(v any, keys ...string) any {
	for _, k := range keys {
		switch t := v.(type) {
		case map[string]any:
			v = t[k]
		case []any:
			var i int
			if _, err := fmt.Sscan(k, &i); err != nil || i < 0 || i >= len(t) {
				return nil
			}
			v = t[i]
		default:
			return nil
		}
	}
	return v
}

// str is at for a string.
func str(v any, keys ...string) string {
	s, _ := at(v, keys...).(string)
	return s
}

// trimArray keeps the first n items of the array at keys (below data).
func trimArray(n int, keys ...string) func(*node) {
	return func(v *node) {
		if arr := v.path(append([]string{"data"}, keys...)...); arr != nil && len(arr.items) > n {
			arr.items = arr.items[:n]
		}
	}
}

// trimEach keeps the first n items of the array member inner of every item
// of the array at outer (below data).
func trimEach(n int, outer, inner string) func(*node) {
	return func(v *node) {
		if arr := v.path("data", outer); arr != nil {
			for _, it := range arr.items {
				if in := it.get(inner); in != nil && len(in.items) > n {
					in.items = in.items[:n]
				}
			}
		}
	}
}

// query builds a path with its query string, keys in the order given.
func query(path string, kv ...string) string {
	var b strings.Builder
	b.WriteString(path)
	for i := 0; i+1 < len(kv); i += 2 {
		if i == 0 {
			b.WriteByte('?')
		} else {
			b.WriteByte('&')
		}
		b.WriteString(kv[i] + "=" + url.QueryEscape(kv[i+1]))
	}
	return b.String()
}

// receiver is the partner's webhook endpoint: it checks each delivery's
// signature and the document's schema, and keeps the first delivery of
// each event and payload kind.
type receiver struct {
	secret   []byte
	contract *apitest.Contract
	mu       sync.Mutex
	seen     map[string]bool
	got      []delivery
	errs     []error
}

type delivery struct {
	kind, event string
	body        *node
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	if !webhook.Verify(rc.secret, b, r.Header.Get(webhook.HeaderSignature)) {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if err := rc.contract.CheckWebhook(r.Header, b); err != nil {
		rc.errs = append(rc.errs, err)
	}
	v, err := decode(b)
	if err != nil {
		rc.errs = append(rc.errs, err)
		return
	}
	event := str(v, "event")
	kind := event
	switch {
	case at(v, "data", "test") == true:
		kind += "-test"
	case at(v, "data", "depositAddress") != nil:
		kind += "-intents"
	case at(v, "data", "sourceChain") != nil:
		kind += "-multi-step"
	}
	if !rc.seen[kind] {
		n, err := parseNode(b)
		if err != nil {
			rc.errs = append(rc.errs, err)
			return
		}
		rc.seen[kind] = true
		rc.got = append(rc.got, delivery{kind: kind, event: event, body: n})
	}
	w.WriteHeader(http.StatusOK)
}

// has reports whether every kind of delivery was received.
func (rc *receiver) has(kinds ...string) bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, k := range kinds {
		if !rc.seen[k] {
			return false
		}
	}
	return true
}
