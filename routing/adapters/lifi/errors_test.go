package lifi

import (
	"errors"
	"fmt"
	"testing"

	"github.com/swapgate/swapgate/routing/adapters/httpjson"
	"github.com/swapgate/swapgate/routing/domain/apierr"
)

// TestResponseErrorPrecedence pins which of LI.FI's code and the HTTP status
// decides when they disagree.
func TestResponseErrorPrecedence(t *testing.T) {
	cases := []struct {
		status, code int
		want         string
		message      string
	}{
		{400, codeRateLimit, apierr.UpstreamError, "the aggregator upstream is rate limiting us"},
		{401, codeTimeout, apierr.UpstreamTimeout, "the aggregator upstream timed out"},
		{504, codeValidation, apierr.UpstreamTimeout, "the aggregator upstream timed out"},
		{500, codeRPCFailure, apierr.RPCFailure, "the aggregator upstream failed to reach a chain: m"},
		{429, codeRPCFailure, apierr.UpstreamError, "the aggregator upstream is rate limiting us"},
		{504, codeRPCFailure, apierr.UpstreamTimeout, "the aggregator upstream timed out"},
		{500, codeUnauthorized, apierr.UpstreamError, "the aggregator upstream refused our credentials"},
		{401, codeValidation, apierr.UpstreamError, "the aggregator upstream refused our credentials"},
		{500, codeValidation, apierr.UpstreamError, "the aggregator upstream refused the request: m"},
		{429, codeFailedToBuildTx, apierr.TransactionBuildFailed, "the aggregator could not build the transaction"},
		{418, 0, apierr.UpstreamError, "the aggregator upstream answered m"},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%d code %d", tc.status, tc.code), func(t *testing.T) {
			body := fmt.Sprintf(`{"message":"m","code":%d}`, tc.code)
			err := responseError(&httpjson.Response{Status: tc.status, Body: []byte(body)})
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.Code != tc.want || ae.Message != tc.message {
				t.Fatalf("err = %v, want %s %q", err, tc.want, tc.message)
			}
			if code, ok := ae.Details["upstreamCode"]; (tc.code != 0) != ok || (ok && code != tc.code) {
				t.Errorf("upstreamCode detail %v, want %d", code, tc.code)
			}
		})
	}
}
