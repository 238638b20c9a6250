package apierr

import (
	"net/http"
	"testing"
)

// The package writes its statuses as numbers (it may not import net/http);
// each is held here to net/http's name for it, and every code to the status
// the contract gives it.
func TestStatusesAreNetHTTPs(t *testing.T) {
	for _, c := range []struct{ got, want int }{
		{statusBadRequest, http.StatusBadRequest},
		{statusUnauthorized, http.StatusUnauthorized},
		{statusNotFound, http.StatusNotFound},
		{statusMethodNotAllowed, http.StatusMethodNotAllowed},
		{statusConflict, http.StatusConflict},
		{statusTooManyRequests, http.StatusTooManyRequests},
		{statusInternalServerError, http.StatusInternalServerError},
		{statusBadGateway, http.StatusBadGateway},
		{statusServiceUnavailable, http.StatusServiceUnavailable},
		{statusGatewayTimeout, http.StatusGatewayTimeout},
	} {
		if c.got != c.want {
			t.Errorf("status %d, net/http says %d (%s)", c.got, c.want, http.StatusText(c.want))
		}
	}
	for code, want := range map[string]int{
		InvalidParams: 400, Unauthorized: 401, NoRouteFound: 404, RateLimit: 429, Internal: 500,
		UpstreamError: 502, RPCFailure: 502, ServiceUnavailable: 503, UpstreamTimeout: 504,
		MethodNotAllowed: 405, PriceChanged: 409, "NO_SUCH_CODE": 500,
	} {
		if got := New(code, "m").HTTPStatus(); got != want {
			t.Errorf("%s answers %d, want %d", code, got, want)
		}
	}
}
