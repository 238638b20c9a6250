package persistence

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"
)

// randText draws strings that exercise JSON escaping.
func randText(rng *rand.Rand) string {
	parts := []string{"", "ptn_abc", "0xaf88d065e77c8cC2239327C5EDb3A432268e5831", "sbx-stargate", `a"b\c`, "<&>", "\n\t\x01", "é✓", "\u2028", "\xff"}
	s := ""
	for range rng.IntN(3) + 1 {
		s += parts[rng.IntN(len(parts))]
	}
	return s
}

func randTime(rng *rand.Rand) time.Time {
	t := time.Unix(rng.Int64N(4_000_000_000), rng.Int64N(1e9))
	if rng.IntN(2) == 0 {
		return t.UTC()
	}
	return t.In(time.FixedZone("", (rng.IntN(27)-12)*3600))
}

// The hand-written record encoders must write exactly what json.Marshal
// writes for the record types the decoders read.
func TestRecordEncodersMatchEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for i := range 300 {
		row := LedgerRow{
			PartnerID: randText(rng), QuoteID: randText(rng), Ecosystem: randText(rng), Provider: randText(rng),
			Tool: randText(rng), FromChain: rng.Uint64(), ToChain: rng.Uint64N(1000), FromToken: randText(rng),
			ToToken: randText(rng), FromAmount: randText(rng), ToAmount: randText(rng), FeeToken: randText(rng),
			FeeAmount: randText(rng), FeeMicroUSD: rng.Int64() - rng.Int64(), VolumeMicroUSD: rng.Int64(),
			CreatedAt: randTime(rng), State: randText(rng), Seq: rng.Uint64(),
		}
		if i%2 == 0 {
			row.SettledBatch, row.SettledTo, row.SettledAt = randText(rng), randText(rng), randTime(rng)
		}
		want, err := json.Marshal(ledgerRecord{V: 1, LedgerRow: row})
		if err != nil {
			t.Fatal(err)
		}
		got, err := EncodeLedgerRow(&row)
		if err != nil || string(got) != string(want) {
			t.Fatalf("EncodeLedgerRow = %s, %v\nwant %s", got, err, want)
		}

		a := Activity{
			PartnerID: "ptn_x", ID: "qt_0123", Kind: randText(rng), Status: randText(rng), Provider: randText(rng),
			Tool: randText(rng), FromChain: rng.Uint64(), ToChain: rng.Uint64(), FromToken: randText(rng),
			ToToken: randText(rng), FromAmount: randText(rng), ToAmount: randText(rng),
			FeeMicroUSD: rng.Int64(), VolumeMicroUSD: -rng.Int64(), CreatedAt: randTime(rng),
		}
		want, err = json.Marshal(activityRecord{V: 1, Activity: a})
		if err != nil {
			t.Fatal(err)
		}
		got, err = encodeActivity(&a)
		if err != nil || string(got) != string(want) {
			t.Fatalf("encodeActivity = %s, %v\nwant %s", got, err, want)
		}
	}
}

func TestRecordEncodersRefuseUnencodableTimes(t *testing.T) {
	far := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := EncodeLedgerRow(&LedgerRow{QuoteID: "qt_1", CreatedAt: far}); err == nil {
		t.Error("EncodeLedgerRow accepted year 10000")
	}
	if _, err := encodeActivity(&Activity{PartnerID: "ptn_1", ID: "qt_1", CreatedAt: far}); err == nil {
		t.Error("encodeActivity accepted year 10000")
	}
}
