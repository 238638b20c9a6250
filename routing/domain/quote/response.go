package quote

import (
	"encoding/json"
	"strconv"

	"github.com/swapgate/swapgate/routing/codec/jsonenc"
)

// AppendResponse appends the data object of a GET /v1/quote answer,
// {quote, provider, feeBps, isDryQuote, expiresAt, timing}, for a quote in any
// shape: Shape A is appended without reflection (AppendShapeA), and Shapes
// B and C, which only pulseroute quotes take, are marshalled with
// encoding/json. req is the request as the client made it; its Dry flag is
// what isDryQuote reports. An error means Shape B or C could not be
// marshalled; dst is then returned as it was given. A quote whose wallet
// was checked (is.Preflight) carries checks (or null with checksError),
// approvals and calls after expiresAt. The race's timing
// (data.timing, AppendTiming) closes the object when the quote carries one.
func AppendResponse(dst []byte, prices LivePrices, req *Request, is *Issued) ([]byte, error) {
	rt := is.Route
	expiresAt := is.ExpiresAt.Unix()
	b := append(dst, `{"quote":`...)
	switch rt.Shape {
	case ShapeDirect:
		q, err := json.Marshal(rt.Direct)
		if err != nil {
			return dst, err
		}
		b = append(b, q...)
	case ShapeMultiStep:
		q, err := json.Marshal(rt.MultiStep)
		if err != nil {
			return dst, err
		}
		b = append(b, q...)
	default:
		b = AppendShapeA(b, prices, req, rt, expiresAt)
	}
	b = append(b, `,"provider":`...)
	b = jsonenc.AppendString(b, is.Provider)
	b = append(b, `,"feeBps":`...)
	b = strconv.AppendInt(b, int64(is.FeeBps), 10)
	b = append(b, `,"isDryQuote":`...)
	b = strconv.AppendBool(b, req.Dry)
	b = append(b, `,"expiresAt":`...)
	b = strconv.AppendInt(b, expiresAt, 10)
	if is.Preflight != nil {
		b = appendPreflight(b, is.Preflight)
	}
	if is.Timing != nil {
		b = append(b, `,"timing":`...)
		b = AppendTiming(b, is.Timing)
	}
	return append(b, '}'), nil
}
