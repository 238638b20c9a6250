package edge

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"strings"

	"github.com/swapgate/swapgate/routing/apierr"
)

// decodeBody is the one strict JSON body decoder of the edge, shared by every
// endpoint that takes a body, so all of them refuse the same things the same
// way (specification, Errors):
//
//   - a Content-Type other than application/json (parameters such as charset
//     allowed), an empty body, malformed JSON or data after the object:
//     INVALID_BODY;
//   - a body that is not an object, a field of the wrong type or a field the
//     endpoint does not know: VALIDATION_ERROR with details.field naming it.
//
// Missing fields are left at their zero value for the handler to report as
// INVALID_PARAMS, which is a different rule.
func decodeBody(r *Request, v any) *apierr.Error {
	ct := string(r.Ctx.Request.Header.ContentType())
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return apierr.New(apierr.InvalidBody, "Content-Type must be application/json").With("contentType", ct)
	}
	return decodeJSON(r.Ctx.PostBody(), v)
}

// decodeJSON applies decodeBody's rules to body, whatever its origin.
func decodeJSON(body []byte, v any) *apierr.Error {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return apierr.New(apierr.InvalidBody, "request body is empty; a JSON object is required")
	}
	if !json.Valid(trimmed) {
		return apierr.New(apierr.InvalidBody, "request body is not valid JSON")
	}
	if trimmed[0] != '{' {
		return apierr.New(apierr.ValidationError, "request body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return bodyError(err)
	}
	// json.Valid accepted the whole body as one value, so nothing can follow;
	// this guards against a decoder that stops early.
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return apierr.New(apierr.InvalidBody, "unexpected data after the JSON object")
	}
	return nil
}

// bodyError maps a decoding error of a syntactically valid body to the
// specification's codes.
func bodyError(err error) *apierr.Error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			return apierr.New(apierr.ValidationError, "request body has the wrong shape").Wrap(err)
		}
		return apierr.New(apierr.ValidationError, "field "+field+" must be a "+jsonKind(te.Type.Kind().String())+", not a JSON "+te.Value).
			With("field", field).Wrap(err)
	}
	const unknown = "json: unknown field "
	if msg := err.Error(); strings.HasPrefix(msg, unknown) {
		field := strings.Trim(strings.TrimPrefix(msg, unknown), `"`)
		return apierr.New(apierr.ValidationError, "unknown field "+field).With("field", field).Wrap(err)
	}
	return apierr.New(apierr.InvalidBody, "request body is not valid JSON").Wrap(err)
}

// jsonKind names a Go kind the way a client knows it.
func jsonKind(kind string) string {
	switch kind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "slice", "array":
		return "array"
	case "map", "struct":
		return "object"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "float32", "float64":
		return "number"
	}
	return kind
}
