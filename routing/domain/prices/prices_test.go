package prices

import (
	"context"
	"errors"
	"testing"
	"time"
)

type fixed struct {
	m   map[string]Price
	err error
}

func (f fixed) Prices(context.Context, uint64) (map[string]Price, error) { return f.m, f.err }

func TestLayered(t *testing.T) {
	at := time.Date(2025, 9, 18, 10, 0, 0, 0, time.UTC)
	boom := errors.New("boom")
	a := map[string]Price{"0xa": {USD: 1, ObservedAt: at}, "0xb": {USD: 2, ObservedAt: at}}
	b := map[string]Price{"0xb": {USD: 20, ObservedAt: at}, "near": {USD: 3, ObservedAt: at}}
	for _, tc := range []struct {
		name    string
		p, s    fixed
		want    map[string]float64
		wantErr bool
	}{
		{"primary wins, secondary fills", fixed{m: a}, fixed{m: b}, map[string]float64{"0xa": 1, "0xb": 2, "near": 3}, false},
		{"primary down: secondary alone, error kept", fixed{err: boom}, fixed{m: b}, map[string]float64{"0xb": 20, "near": 3}, true},
		{"secondary down: primary alone, error kept", fixed{m: a}, fixed{err: boom}, map[string]float64{"0xa": 1, "0xb": 2}, true},
		{"both down", fixed{err: boom}, fixed{err: boom}, nil, true},
		{"both empty", fixed{m: map[string]Price{}}, fixed{}, map[string]float64{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Layered{Primary: tc.p, Secondary: tc.s}.Prices(context.Background(), 1)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if len(got) != len(tc.want) || (tc.want == nil) != (got == nil) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k].USD != v {
					t.Errorf("%s = %v, want %v", k, got[k].USD, v)
				}
			}
		})
	}
}

func TestFresh(t *testing.T) {
	obs := time.Date(2025, 9, 18, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		now    time.Time
		maxAge time.Duration
		want   bool
	}{
		{"just observed", obs, 5 * time.Minute, true},
		{"at the limit", obs.Add(5 * time.Minute), 5 * time.Minute, true},
		{"past the limit", obs.Add(5*time.Minute + 1), 5 * time.Minute, false},
		{"no limit", obs.Add(24 * time.Hour), 0, true},
		{"observed in the future", obs.Add(-time.Minute), 5 * time.Minute, true},
	} {
		if got := Fresh(obs, tc.now, tc.maxAge); got != tc.want {
			t.Errorf("%s: Fresh = %v, want %v", tc.name, got, tc.want)
		}
	}
}
