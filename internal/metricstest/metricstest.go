// Package metricstest reads Prometheus collectors in tests: it gathers a
// collector through a registry of its own, so that a test sees exactly what
// a scrape would (the registry also checks the collector's descriptions and
// label consistency), and flattens the result into one value per series.
package metricstest

import (
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Values gathers cs and returns every series' value keyed by its name and
// labels as the exposition format writes them, labels sorted by name:
// `swapgate_x_total{a="1",b="2"}`. A histogram contributes its _count and
// _sum and one _bucket series per bound (le as %g, +Inf included).
func Values(t testing.TB, cs ...prometheus.Collector) map[string]float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			t.Fatalf("register collector: %v", err)
		}
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			labels := m.GetLabel()
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				out[Key(f.GetName(), labels)] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[Key(f.GetName(), labels)] = m.GetGauge().GetValue()
			case dto.MetricType_UNTYPED:
				out[Key(f.GetName(), labels)] = m.GetUntyped().GetValue()
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				out[Key(f.GetName()+"_count", labels)] = float64(h.GetSampleCount())
				out[Key(f.GetName()+"_sum", labels)] = h.GetSampleSum()
				for _, b := range h.GetBucket() {
					le := &dto.LabelPair{Name: ptr("le"), Value: ptr(strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64))}
					out[Key(f.GetName()+"_bucket", append(labels[:len(labels):len(labels)], le))] = float64(b.GetCumulativeCount())
				}
				inf := &dto.LabelPair{Name: ptr("le"), Value: ptr("+Inf")}
				out[Key(f.GetName()+"_bucket", append(labels[:len(labels):len(labels)], inf))] = float64(h.GetSampleCount())
			}
		}
	}
	return out
}

// Key renders a series name with its labels sorted by name.
func Key(name string, labels []*dto.LabelPair) string {
	if len(labels) == 0 {
		return name
	}
	pairs := make([]string, 0, len(labels))
	for _, l := range labels {
		pairs = append(pairs, l.GetName()+"="+strconv.Quote(l.GetValue()))
	}
	sort.Strings(pairs)
	return name + "{" + strings.Join(pairs, ",") + "}"
}

func ptr(s string) *string { return &s }
