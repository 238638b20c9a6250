package jsonenc

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	cases := []string{
		"", "plain", `quote " and \ backslash`, "<script>&amp;</script>",
		"\b\f\n\r\t\x00\x01\x1f\x7f", "héllo wörld ✓ 𝄞", "\u2028\u2029",
		"bad \xff utf8 \xc3", "0xaf88d065e77c8cC2239327C5EDb3A432268e5831",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune{'a', 'Z', '"', '\\', '<', '>', '&', '\n', 0, 0x1f, 'é', '\u2028', '\u2029', '𝄞', 0xfffd}
	for range 500 {
		var rs []rune
		for range rng.IntN(20) {
			rs = append(rs, alphabet[rng.IntN(len(alphabet))])
		}
		s := string(rs)
		if rng.IntN(4) == 0 {
			s += "\xe2\x80" // truncated multi-byte sequence
		}
		cases = append(cases, s)
	}
	for _, s := range cases {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
		}
	}
}

func TestAppendFloatMatchesEncodingJSON(t *testing.T) {
	cases := []float64{0, 1, -1, 0.005, 1e-6, 9.99e-7, 1e-7, 123456.789, 1e20, 1e21, -1e21, 1.5e300, 5e-324, math.MaxFloat64}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		cases = append(cases, math.Float64frombits(rng.Uint64()))
	}
	for _, f := range cases {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		want, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendFloat(nil, f); string(got) != string(want) {
			t.Errorf("AppendFloat(%v) = %s, want %s", f, got, want)
		}
	}
}

func TestObjectMatchesEncodingJSON(t *testing.T) {
	type inner struct {
		A string `json:"a"`
		B int64  `json:"b,omitempty"`
	}
	type rec struct {
		V       int       `json:"v"`
		Name    string    `json:"name"`
		Count   uint64    `json:"count"`
		Delta   int64     `json:"delta"`
		At      time.Time `json:"at"`
		Note    string    `json:"note,omitempty"`
		Settled time.Time `json:"settled,omitzero"`
		Inner   *inner    `json:"inner,omitempty"`
		Last    string    `json:"last"`
	}
	zone := time.FixedZone("x", 5*3600+30*60)
	cases := []rec{
		{V: 1, Name: "a<b", Count: math.MaxUint64, Delta: math.MinInt64, At: time.Unix(1_700_000_000, 123456789).UTC()},
		{V: 1, Name: "", At: time.Unix(1_700_000_000, 0).In(zone), Note: "n\"", Settled: time.Unix(1, 1).UTC(), Inner: &inner{A: "<x>", B: 7}},
		{V: 1, At: time.Unix(5, 0).UTC(), Inner: &inner{}, Last: "end"},
		{V: 1, At: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)},
		{V: 1, At: time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)},
	}
	for _, r := range cases {
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		o := Begin([]byte("prefix"))
		o.Int("v", int64(r.V))
		o.String("name", r.Name)
		o.Uint("count", r.Count)
		o.Int("delta", r.Delta)
		o.Time("at", r.At)
		o.StringOmitEmpty("note", r.Note)
		o.TimeOmitZero("settled", r.Settled)
		if r.Inner != nil {
			o.BeginObject("inner")
			o.String("a", r.Inner.A)
			if r.Inner.B != 0 {
				o.Int("b", r.Inner.B)
			}
			o.EndObject()
		}
		o.String("last", r.Last)
		got, err := o.End()
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != "prefix"+string(want) {
			t.Errorf("Object = %s, want prefix%s", got, want)
		}
	}
}

func TestObjectRefusesWhatMarshalJSONRefuses(t *testing.T) {
	for _, at := range []time.Time{time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)} {
		if _, err := json.Marshal(at); err == nil {
			t.Fatalf("encoding/json accepted %v", at)
		}
		o := Begin(nil)
		o.Time("at", at)
		if _, err := o.End(); err == nil {
			t.Errorf("Object accepted %v", at)
		}
	}
}
