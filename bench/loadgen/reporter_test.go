package loadgen

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestReporterTextLines(t *testing.T) {
	rec := NewRecorder()
	start := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	var out bytes.Buffer
	rep := NewReporter(&out, rec, start, false)

	// First interval: 8 fast successes, one 429, one 503, one transport
	// error; it ends exactly one second in.
	for i := range 8 {
		rec.Record(Outcome{Status: 200}, time.Duration(100+i)*time.Microsecond)
	}
	rec.Record(Outcome{Status: 429, Body: []byte(`{"data":null,"error":{"code":"RATE_LIMIT"}}`)}, 50*time.Microsecond)
	rec.Record(Outcome{Status: 503, Body: []byte(`{"data":null}`)}, 2*time.Millisecond)
	rec.Record(Outcome{Body: []byte("dial tcp: connection refused")}, 5*time.Second)
	l1, err := rep.Tick(start.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if l1.Requests != 11 || l1.Errors != 3 || l1.Class["2xx"] != 8 || l1.Class["4xx"] != 1 || l1.Class["5xx"] != 1 || l1.Transport != 1 {
		t.Fatalf("first interval counts: %+v", l1.Counts)
	}
	if l1.RPS != 11 {
		t.Fatalf("first interval rps = %v, want 11", l1.RPS)
	}
	if l1.Latency.P50 < 100 || l1.Latency.P50 > 107 || l1.Latency.Max < 4_990_000 {
		t.Fatalf("first interval latency: %+v", l1.Latency)
	}

	// Second interval: the tick comes late, after 2.5 s, so the rate is
	// over the actual span; the interval starts from empty.
	for range 5 {
		rec.Record(Outcome{Status: 200}, time.Millisecond)
	}
	l2, err := rep.Tick(start.Add(3500 * time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if l2.Requests != 5 || l2.Errors != 0 || l2.RPS != 2 || l2.Elapsed != 3500*time.Millisecond {
		t.Fatalf("second interval: %+v", l2)
	}
	if l2.Latency.Max > 1001 || l2.Latency.P50 < 999 {
		t.Fatalf("second interval latency leaked from the first: %+v", l2.Latency)
	}

	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3 || lines[0] != strings.TrimSuffix(textHeader, "\n") {
		t.Fatalf("want header and two lines, got:\n%s", out.String())
	}
	for i, want := range [][]string{
		{"1.0s", "11", "8", "1", "1", "1", "11.0"},
		{"3.5s", "5", "5", "0", "0", "0", "2.0"},
	} {
		f := strings.Fields(lines[i+1])
		if len(f) != 12 {
			t.Fatalf("line %d has %d columns: %q", i+1, len(f), lines[i+1])
		}
		for j, w := range want {
			if f[j] != w {
				t.Errorf("line %d column %d = %q, want %q (%q)", i+1, j, f[j], w, lines[i+1])
			}
		}
	}

	totals, status, lat, samples := rec.Totals()
	if totals.Requests != 16 || status[200] != 13 || status[429] != 1 || status[503] != 1 || len(status) != 3 {
		t.Fatalf("totals %+v status %v", totals, status)
	}
	if !(lat.P50 <= lat.P90 && lat.P90 <= lat.P99 && lat.P99 <= lat.P999 && lat.P999 <= lat.Max) {
		t.Fatalf("percentiles out of order: %+v", lat)
	}
	if len(samples) != 3 || samples[0].Status != 429 || samples[2].Status != 0 || !strings.Contains(samples[2].Body, "refused") {
		t.Fatalf("samples: %+v", samples)
	}
}

func TestReporterHeaderRepeats(t *testing.T) {
	rec := NewRecorder()
	start := time.Unix(0, 0)
	var out bytes.Buffer
	rep := NewReporter(&out, rec, start, false)
	for i := 1; i <= headerEvery+1; i++ {
		if _, err := rep.Tick(start.Add(time.Duration(i) * time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(out.String(), textHeader); n != 2 {
		t.Fatalf("header printed %d times over %d lines, want 2", n, headerEvery+1)
	}
}

func TestReporterJSONLines(t *testing.T) {
	rec := NewRecorder()
	start := time.Unix(100, 0)
	var out bytes.Buffer
	rep := NewReporter(&out, rec, start, true)
	rec.Record(Outcome{Status: 200, BadEnvelope: true}, 300*time.Microsecond)
	rec.Record(Outcome{Status: 200}, 200*time.Microsecond)
	if _, err := rep.Tick(start.Add(500 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	var got struct {
		ElapsedSec  float64          `json:"elapsedSec"`
		Requests    int64            `json:"requests"`
		Errors      int64            `json:"errors"`
		BadEnvelope int64            `json:"badEnvelope"`
		Classes     map[string]int64 `json:"statusClasses"`
		RPS         float64          `json:"rps"`
		Latency     Percentiles      `json:"latencyUs"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("line is not JSON: %v\n%s", err, out.String())
	}
	if got.ElapsedSec != 0.5 || got.Requests != 2 || got.Errors != 1 || got.BadEnvelope != 1 || got.Classes["2xx"] != 2 || got.RPS != 4 {
		t.Fatalf("json line: %+v", got)
	}
	if got.Latency.Max < 299 || got.Latency.P50 < 199 {
		t.Fatalf("json latency: %+v", got.Latency)
	}
}

func TestRecorderKeepsFewBoundedSamples(t *testing.T) {
	rec := NewRecorder()
	big := bytes.Repeat([]byte("x"), 4*maxSampleBody)
	for range 3 * maxErrorSamples {
		rec.Record(Outcome{Status: 500, Body: big}, time.Millisecond)
	}
	if rec.WantsSample() {
		t.Fatal("recorder still wants samples when full")
	}
	_, _, _, samples := rec.Totals()
	if len(samples) != maxErrorSamples || len(samples[0].Body) != maxSampleBody {
		t.Fatalf("kept %d samples, first %d bytes", len(samples), len(samples[0].Body))
	}
}

func TestRecorderClampsOutOfRangeLatency(t *testing.T) {
	rec := NewRecorder()
	rec.Record(Outcome{Status: 200}, 0)
	rec.Record(Outcome{Status: 200}, 2*time.Hour)
	_, _, lat, _ := rec.Totals()
	if lat.P50 < histMinUs || lat.Max < histMaxUs*999/1000 {
		t.Fatalf("latency not clamped into range: %+v", lat)
	}
}
