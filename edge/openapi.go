package edge

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/swapgate/swapgate/api"
)

// openapiDocument returns the API document compacted, encoded once when the
// server is built: it is the contract the tests hold every answer to (see
// package api), and serving the embedded bytes means a client reads exactly
// that contract.
func openapiDocument() ([]byte, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, api.Document()); err != nil {
		return nil, fmt.Errorf("edge: the embedded API document is not JSON: %w", err)
	}
	return buf.Bytes(), nil
}

// openapi answers GET /v1/openapi.json with the document itself, not
// wrapped in the envelope: tools and the /docs page read it as an OpenAPI
// document. It is the one JSON answer outside the envelope besides the
// metrics; its refusals (a rate limit, a refused key) are enveloped as
// everywhere, and it carries X-Request-Id like every answer.
func (s *Server) openapi(r *Request) error {
	setHeaders(r, statusOK)
	r.Ctx.Response.SetBodyRaw(s.document)
	return nil
}
