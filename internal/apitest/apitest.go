// Package apitest holds HTTP answers to Swapgate's contract, the OpenAPI
// document of package api, so that tests fail when the service answers
// anything the document does not describe: an undocumented status, a
// missing documented header, or a body its schema refuses (the document's
// objects are closed, so an undocumented field fails too). The end-to-end
// tests send every response they receive through Contract.CheckResponse.
//
// It uses kin-openapi (openapi3 to load and validate the document,
// routers/gorillamux to find the operation of a request, openapi3filter to
// validate a response against it) rather than hand-written checks, so that
// the document is read as any other OpenAPI tool reads it. Only tests import
// this package.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/swapgate/swapgate/api"
)

// Contract is the loaded document with the router that finds the operation
// of a request. Loading takes a while; a test binary loads it once and
// shares it, which is safe: checking a response only reads it.
type Contract struct {
	doc    *openapi3.T
	router routers.Router
}

// Load parses the embedded document, resolving its references, and builds
// its router. It does not validate the document (Validate does, and
// internal/apitest's own tests call it): validation walks every schema and
// example, which takes seconds under the race detector, and every test
// binary that checks answers loads the document.
func Load() (*Contract, error) {
	return Parse(api.Document())
}

// Parse is Load for a document given as bytes.
func Parse(document []byte) (*Contract, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(document)
	if err != nil {
		return nil, fmt.Errorf("apitest: load the document: %w", err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("apitest: route the document: %w", err)
	}
	return &Contract{doc: doc, router: router}, nil
}

// Validate checks that the document is valid OpenAPI 3.1 and that every
// example matches the schema it illustrates.
func (c *Contract) Validate() error {
	if err := c.doc.Validate(context.Background(), openapi3.EnableExamplesValidation()); err != nil {
		return fmt.Errorf("apitest: the document is not valid OpenAPI: %w", err)
	}
	return nil
}

// Doc is the loaded document, for tests that compare it with the server.
func (c *Contract) Doc() *openapi3.T { return c.doc }

// outside lists the paths the document deliberately leaves out, and why:
// none of them answers in the JSON interface the document describes.
var outside = []struct{ prefix, why string }{
	{"/metrics", "Prometheus text for the operator's scraper"},
	{"/checkout/", "the hosted checkout's pages, for the buyer's browser (their own tests hold them)"},
	{"/portal/", "the partner portal's pages, for a partner's browser (their own tests hold them)"},
	{"/docs", "the rendered reference of this document, for a person's browser"},
	{"/onramp/webhooks/", "a live on-ramp provider's signed webhooks, called by the provider, not an integrator: the document describes MoonPay's as provider-facing (x-mode live), and their own tests hold the answers"},
	{"/logos/", "the SVG logos of tokens, chains and tools that logoURI fields name, for a client's img elements"},
	{"/rpc/", "the sandbox chains' Ethereum JSON-RPC 2.0 nodes, for wallets and Ethereum clients, not the envelope (their own tests hold them)"},
}

// Outside reports whether path is one the document deliberately does not
// describe, and why.
func Outside(path string) (why string, ok bool) {
	for _, o := range outside {
		if path == strings.TrimSuffix(o.prefix, "/") || strings.HasPrefix(path, o.prefix) {
			return o.why, true
		}
	}
	return "", false
}

// CheckResponse validates one answer to req: its status must be documented
// for the operation, the headers documented as required must be there and
// match, and the body must match the schema of that status (a
// text/event-stream body event by event, see checkEventStream). A request the
// document has no operation for must have been refused in the envelope:
// 404 NOT_FOUND for an unknown path, 405 METHOD_NOT_ALLOWED for a known path
// with another method. Paths Outside the document are not checked.
func (c *Contract) CheckResponse(req *http.Request, status int, header http.Header, body []byte) error {
	if _, ok := Outside(req.URL.Path); ok {
		return nil
	}
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		return c.checkUnrouted(req, err, status, header, body)
	}
	opts := &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}
	// A schema error names where in the body it is and why, without the
	// schema itself, which the document shows better than a test log.
	opts.WithCustomSchemaErrorFunc(schemaErrorMessage)
	if isEventStream(header.Get("Content-Type")) {
		return c.checkEventStream(req, route, params, status, header, body, opts)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                opts,
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return fmt.Errorf("%s %s answered %d, which the document refuses: %w", req.Method, req.URL.Path, status, err)
	}
	return nil
}

// schemaErrorMessage names where in a body a schema error is and why,
// without the schema itself.
func schemaErrorMessage(e *openapi3.SchemaError) string {
	return "at /" + strings.Join(e.JSONPointer(), "/") + ": " + e.Reason
}

// checkUnrouted checks the refusal of a request no operation matches.
func (c *Contract) checkUnrouted(req *http.Request, routeErr error, status int, header http.Header, body []byte) error {
	want, code := http.StatusNotFound, "NOT_FOUND"
	if errors.Is(routeErr, routers.ErrMethodNotAllowed) {
		want, code = http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED"
	} else if !errors.Is(routeErr, routers.ErrPathNotFound) {
		return fmt.Errorf("%s %s: no operation of the document matches: %w", req.Method, req.URL.Path, routeErr)
	}
	if status != want {
		return fmt.Errorf("%s %s is not in the document (%v), so it must be %d %s, not %d", req.Method, req.URL.Path, routeErr, want, code, status)
	}
	if header.Get("X-Request-Id") == "" {
		return fmt.Errorf("%s %s: %d without X-Request-Id", req.Method, req.URL.Path, status)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("%s %s: %d is not JSON: %w", req.Method, req.URL.Path, status, err)
	}
	envelope := c.doc.Components.Schemas["ErrorEnvelope"].Value
	if err := envelope.VisitJSON(v, openapi3.EnableJSONSchema2020(), openapi3.MultiErrors()); err != nil {
		return fmt.Errorf("%s %s: %d is not the error envelope: %w", req.Method, req.URL.Path, status, err)
	}
	if got, _ := v.(map[string]any)["error"].(map[string]any)["code"].(string); got != code {
		return fmt.Errorf("%s %s: %d must carry %s, not %q", req.Method, req.URL.Path, status, code, got)
	}
	return nil
}

// Operation is one operation of the document with the extensions that tie
// it to the server's route table.
type Operation struct {
	Method, Path string
	// Bucket is x-rate-limit-bucket: heavy, read or none.
	Bucket string
	// PartnerOnly is set when the operation's security has no anonymous
	// alternative.
	PartnerOnly bool
	// Idempotent is set when the operation takes the Idempotency-Key header.
	Idempotent bool
	// AnonymousFree is x-anonymous-free.
	AnonymousFree bool
	// Mode is x-mode: empty when the operation is served in every mode;
	// "sandbox" for sandbox mode only; "live" for a provider-facing
	// operation of live mode with its provider configured.
	Mode string
}

// Operations lists the document's operations, sorted by path and method.
func (c *Contract) Operations() []Operation {
	var out []Operation
	for path, item := range c.doc.Paths.Map() {
		for method, op := range item.Operations() {
			o := Operation{Method: method, Path: path}
			o.Bucket, _ = op.Extensions["x-rate-limit-bucket"].(string)
			o.Mode, _ = op.Extensions["x-mode"].(string)
			o.AnonymousFree, _ = op.Extensions["x-anonymous-free"].(bool)
			sec := c.doc.Security
			if op.Security != nil {
				sec = *op.Security
			}
			o.PartnerOnly = !slices.ContainsFunc(sec, func(r openapi3.SecurityRequirement) bool { return len(r) == 0 })
			for _, p := range op.Parameters {
				if p.Value != nil && p.Value.In == openapi3.ParameterInHeader && p.Value.Name == "Idempotency-Key" {
					o.Idempotent = true
				}
			}
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b Operation) int {
		if a.Path != b.Path {
			return strings.Compare(a.Path, b.Path)
		}
		return strings.Compare(a.Method, b.Method)
	})
	return out
}

// CheckWebhook validates one webhook delivery the service sent: its
// X-Service-Event names one of the document's webhooks, the delivery
// headers that webhook documents are there and match, and the body matches
// the webhook's schema and names the same event.
func (c *Contract) CheckWebhook(header http.Header, body []byte) error {
	event := header.Get("X-Service-Event")
	item := c.doc.Webhooks[event]
	if item == nil || item.Post == nil {
		return fmt.Errorf("webhook %q is not in the document", event)
	}
	op := item.Post
	opts := []openapi3.SchemaValidationOption{openapi3.EnableJSONSchema2020(), openapi3.MultiErrors()}
	for _, p := range op.Parameters {
		if p.Value == nil || p.Value.In != openapi3.ParameterInHeader {
			continue
		}
		v := header.Get(p.Value.Name)
		if v == "" {
			if p.Value.Required {
				return fmt.Errorf("webhook %s without its %s header", event, p.Value.Name)
			}
			continue
		}
		if err := p.Value.Schema.Value.VisitJSON(v, opts...); err != nil {
			return fmt.Errorf("webhook %s: header %s %q: %w", event, p.Value.Name, v, err)
		}
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("webhook %s: the body is not JSON: %w", event, err)
	}
	schema := op.RequestBody.Value.Content.Get("application/json").Schema.Value
	if err := schema.VisitJSON(v, opts...); err != nil {
		return fmt.Errorf("webhook %s: the body does not match the document: %w", event, err)
	}
	if got, _ := v.(map[string]any)["event"].(string); got != event {
		return fmt.Errorf("webhook %s: the body says event %q", event, got)
	}
	return nil
}
