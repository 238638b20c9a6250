package httpjson

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/swapgate/swapgate/routing/domain/apierr"
)

func TestClassify(t *testing.T) {
	cases := []struct {
		status int
		body   string
		want   Kind
	}{
		{429, `{}`, RateLimited},
		{503, `{"message":"Down for MAINTENANCE until 12:00"}`, Maintenance},
		{503, `{"message":"overloaded"}`, Failed},
		{504, ``, TimedOut},
		{401, ``, CredentialsRefused},
		{403, ``, CredentialsRefused},
		{400, `{"message":"bad"}`, Rejected},
		{500, ``, Failed},
		{502, ``, Failed},
		{404, ``, Other},
		{302, ``, Other},
		{422, ``, Other},
	}
	for _, tc := range cases {
		if got := Classify(tc.status, []byte(tc.body)); got != tc.want {
			t.Errorf("Classify(%d, %s) = %d, want %d", tc.status, tc.body, got, tc.want)
		}
	}
}

func TestStatusError(t *testing.T) {
	cases := []struct {
		kind    Kind
		headers map[string]string
		code    string
		message string
		detail  string // a detail that must be present, "" for none
	}{
		{RateLimited, map[string]string{"Retry-After": "12"}, apierr.UpstreamError, "the test upstream is rate limiting us", "retryAfter"},
		{RateLimited, nil, apierr.UpstreamError, "the test upstream is rate limiting us", ""},
		{Maintenance, nil, apierr.UpstreamMaintenance, "the test upstream is under maintenance", ""},
		{TimedOut, nil, apierr.UpstreamTimeout, "the test upstream timed out", ""},
		{CredentialsRefused, nil, apierr.UpstreamError, "the test upstream refused our credentials", ""},
		{Rejected, nil, apierr.UpstreamError, "the test upstream refused the request: tokenIn is not valid", ""},
		{Failed, nil, apierr.UpstreamError, "the test upstream failed", ""},
		{Other, nil, apierr.UpstreamError, "the test upstream answered tokenIn is not valid", ""},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("kind %d %v", tc.kind, tc.headers), func(t *testing.T) {
			cause := errors.New("test: HTTP 418")
			f := &Failure{
				Response: &Response{Status: 418, headers: tc.headers},
				Message:  "tokenIn is not valid",
				Details:  map[string]any{"upstreamCode": 1011},
				Cause:    cause,
			}
			e := testUpstream.StatusError(f, tc.kind)
			if e.Code != tc.code || e.Message != tc.message {
				t.Errorf("got %s %q, want %s %q", e.Code, e.Message, tc.code, tc.message)
			}
			want := map[string]any{"provider": "aggregator", "upstreamStatus": 418,
				"upstreamMessage": "tokenIn is not valid", "upstreamCode": 1011}
			for k, v := range want {
				if e.Details[k] != v {
					t.Errorf("details[%s] = %v, want %v", k, e.Details[k], v)
				}
			}
			if tc.detail != "" && e.Details[tc.detail] != tc.headers["Retry-After"] {
				t.Errorf("details %v lack %s", e.Details, tc.detail)
			}
			if tc.detail == "" && e.Details["retryAfter"] != nil {
				t.Errorf("details %v carry an absent header", e.Details)
			}
			if !errors.Is(e, cause) {
				t.Error("cause not wrapped")
			}
		})
	}
}

func TestTransportError(t *testing.T) {
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	cases := []struct {
		name string
		ctx  context.Context
		err  error
		code string
	}{
		{"fasthttp timeout", context.Background(), fasthttp.ErrTimeout, apierr.UpstreamTimeout},
		{"dial timeout", context.Background(), fasthttp.ErrDialTimeout, apierr.UpstreamTimeout},
		{"deadline", context.Background(), fmt.Errorf("dial: %w", context.DeadlineExceeded), apierr.UpstreamTimeout},
		{"caller deadline passed", expired, io.EOF, apierr.UpstreamTimeout},
		{"refused", context.Background(), errors.New("connection refused"), apierr.UpstreamError},
		{"cancelled", context.Background(), context.Canceled, apierr.UpstreamError},
	}
	for _, tc := range cases {
		e := testUpstream.TransportError(tc.ctx, tc.err)
		if e.Code != tc.code || e.Details["provider"] != "aggregator" {
			t.Errorf("%s: got %+v, want %s", tc.name, e, tc.code)
		}
		if !errors.Is(e, tc.err) {
			t.Errorf("%s: cause %v not wrapped", tc.name, tc.err)
		}
	}
}
