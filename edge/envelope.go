package edge

import (
	"encoding/json"
	"strconv"

	"github.com/valyala/fasthttp"

	"github.com/swapgate/swapgate/routing/domain/apierr"
	"github.com/swapgate/swapgate/routing/domain/idempotency"
)

// The envelope writer is the only place that writes a response body, so every
// answer, errors included, has the {data, error, meta} form of the
// specification. It appends into fasthttp's response buffer with strconv and
// pre-encoded fragments, which keeps the hot read endpoints free of
// reflection and of allocations beyond the body itself.

var (
	contentTypeJSON = []byte("application/json")
	headerRequestID = []byte("X-Request-Id")
)

// writeRaw answers with status and data, where data is already-encoded JSON.
func writeRaw(r *Request, status int, data []byte) {
	beginData(r, status)
	r.buf = append(r.buf, data...)
	endData(r)
}

// beginData starts a success envelope in the request's reusable buffer,
// positioned where the data value goes, so that handlers serving
// pre-encoded fragments can append them in place; endData closes the
// envelope and hands it to fasthttp (one copy, no allocation once warm).
func beginData(r *Request, status int) {
	setHeaders(r, status)
	r.buf = append(r.buf[:0], `{"data":`...)
}

func endData(r *Request) {
	r.buf = append(r.buf, `,"error":null,"meta":`...)
	r.buf = appendMeta(r.buf, r)
	r.buf = append(r.buf, '}')
	r.Ctx.Response.SetBody(r.buf)
}

func setHeaders(r *Request, status int) {
	r.Ctx.SetStatusCode(status)
	r.Ctx.Response.Header.SetContentTypeBytes(contentTypeJSON)
	r.Ctx.Response.Header.SetBytesKV(headerRequestID, r.ID[:])
}

// writeReplay answers with an answer remembered for an Idempotency-Key:
// its status and body byte for byte, meta included, and the X-Request-Id
// of the request that acted, which is its meta.requestId (see
// idempotency.go), marked Idempotent-Replayed: true.
func writeReplay(r *Request, rec *idempotency.Record) {
	r.Ctx.SetStatusCode(rec.Status)
	r.Ctx.Response.Header.SetContentTypeBytes(contentTypeJSON)
	if rec.RequestID != "" {
		r.Ctx.Response.Header.SetBytesK(headerRequestID, rec.RequestID)
	} else {
		r.Ctx.Response.Header.SetBytesKV(headerRequestID, r.ID[:])
	}
	r.Ctx.Response.Header.SetBytesKV(headerReplayed, strTrue)
	r.Ctx.Response.SetBody(rec.Body)
}

var strTrue = []byte("true")

// writeJSON answers with status and a value encoded with encoding/json.
func writeJSON(r *Request, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		writeError(r, apierr.From(err))
		return
	}
	writeRaw(r, status, data)
}

type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// errorBodyDetails is errorBody with details, which is left out when an
// error has none and kept when it is empty (RATE_LIMIT's {}).
type errorBodyDetails struct {
	errorBody
	Details map[string]any `json:"details"`
}

// writeError answers with the error's status and the error object.
func writeError(r *Request, e *apierr.Error) {
	setHeaders(r, e.HTTPStatus())
	r.buf = append(r.buf[:0], `{"data":null,"error":`...)
	r.buf = appendErrorObject(r.buf, e)
	r.buf = append(r.buf, `,"meta":`...)
	r.buf = appendMeta(r.buf, r)
	r.buf = append(r.buf, '}')
	r.Ctx.Response.SetBody(r.buf)
}

// appendErrorObject appends the envelope's error object, {code, message,
// details}: the error of a refusal, and the data of a quote stream's error
// event (quote_stream.go).
func appendErrorObject(b []byte, e *apierr.Error) []byte {
	details := e.Details
	if e.Code == apierr.RateLimit && details == nil {
		details = map[string]any{}
	}
	var eb []byte
	var err error
	if details != nil {
		eb, err = json.Marshal(errorBodyDetails{errorBody{e.Code, e.Message}, details})
	} else {
		eb, err = json.Marshal(errorBody{e.Code, e.Message})
	}
	if err != nil {
		eb = []byte(`{"code":"INTERNAL_ERROR","message":"internal error"}`)
	}
	return append(b, eb...)
}

func appendMeta(b []byte, r *Request) []byte {
	b = append(b, `{"requestId":"`...)
	b = append(b, r.ID[:]...)
	b = append(b, `","timestamp":`...)
	b = strconv.AppendInt(b, r.Now.Unix(), 10)
	if r.Rate.Limit > 0 {
		b = append(b, `,"rateLimit":{"limit":`...)
		b = strconv.AppendInt(b, int64(r.Rate.Limit), 10)
		b = append(b, `,"remaining":`...)
		b = strconv.AppendInt(b, int64(r.Rate.Remaining), 10)
		b = append(b, `,"reset":`...)
		b = strconv.AppendInt(b, r.Rate.Reset, 10)
		b = append(b, '}')
	}
	return append(b, '}')
}

// statusOK is the common success status.
const statusOK = fasthttp.StatusOK
