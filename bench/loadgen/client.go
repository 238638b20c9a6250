package loadgen

import (
	"bytes"
	"crypto/tls"
	"net"
	"time"

	"github.com/valyala/fasthttp"
)

// envelopePrefix is how every Swapgate response body starts; checking the
// prefix is cheap enough to do on every answer.
var envelopePrefix = []byte(`{"data":`)

// newHostClient returns a client that dials only the pinned loopback
// address, holds one connection per worker and waits at most timeout for a
// free one.
func newHostClient(t Target, workers int, timeout time.Duration) *fasthttp.HostClient {
	hc := &fasthttp.HostClient{
		Addr:                   t.Dial,
		Name:                   "swapgate-bench",
		MaxConns:               workers,
		MaxConnWaitTimeout:     timeout,
		ReadTimeout:            timeout,
		WriteTimeout:           timeout,
		MaxIdleConnDuration:    time.Minute,
		DisablePathNormalizing: true,
	}
	if t.Scheme == "https" {
		hc.IsTLS = true
		host, _, err := net.SplitHostPort(t.Host)
		if err != nil {
			host = t.Host
		}
		hc.TLSConfig = &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	}
	return hc
}

// requester sends one scenario request at a time; each worker owns one, so
// request and response buffers are reused without locking.
type requester struct {
	hc       *fasthttp.HostClient
	target   Target
	scenario Scenario
	// full is scenario when it has requests other than a plain GET.
	full    RequestScenario
	apiKey  string
	timeout time.Duration
	rec     *Recorder
	req     fasthttp.Request
	resp    fasthttp.Response
	uri     []byte
}

// do sends the seq-th request and classifies its answer.
func (r *requester) do(seq uint64) Outcome {
	r.req.Reset()
	r.resp.Reset()
	r.uri = append(r.uri[:0], r.target.Scheme...)
	r.uri = append(r.uri, "://"...)
	r.uri = append(r.uri, r.target.Host...)
	r.uri = append(r.uri, r.target.PathPrefix...)
	method := fasthttp.MethodGet
	var body []byte
	if r.full != nil {
		sr := r.full.Request(seq)
		r.uri = append(r.uri, sr.Path...)
		if sr.Method != "" {
			method = sr.Method
		}
		body = sr.Body
	} else {
		r.uri = append(r.uri, r.scenario.Path(seq)...)
	}
	r.req.SetRequestURIBytes(r.uri)
	r.req.Header.SetMethod(method)
	if len(body) > 0 {
		r.req.Header.SetContentType("application/json")
		r.req.SetBody(body)
	}
	if r.apiKey != "" {
		r.req.Header.Set("X-API-Key", r.apiKey)
	}
	if err := r.hc.DoTimeout(&r.req, &r.resp, r.timeout); err != nil {
		return Outcome{Status: 0, Body: []byte(err.Error())}
	}
	answer := r.resp.Body()
	o := Outcome{Status: r.resp.StatusCode(), BadEnvelope: !bytes.HasPrefix(answer, envelopePrefix)}
	if o.Failed() && r.rec.WantsSample() {
		o.Body = bytes.Clone(answer)
	}
	return o
}
