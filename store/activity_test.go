package store

import (
	"encoding/json"
	"github.com/swapgate/swapgate/routing/domain/account"
	"math/rand/v2"
	"strconv"
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

// The hand-written record encoder must write exactly what json.Marshal
// writes for the record type the decoder reads.
func TestActivityEncoderMatchesEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for i := range 300 {
		a := account.Activity{
			PartnerID: "ptn_x", ID: "qt_0123", Kind: randText(rng), Status: randText(rng), Provider: randText(rng),
			Tool: randText(rng), FromChain: rng.Uint64(), ToChain: rng.Uint64N(1000), FromToken: randText(rng),
			ToToken: randText(rng), FromAmount: randText(rng), ToAmount: randText(rng),
			FeeMicroUSD: rng.Int64() - rng.Int64(), VolumeMicroUSD: -rng.Int64(), CreatedAt: randTime(rng),
		}
		a.FeeUSDUnknown, a.VolumeUSDUnknown = i%4 == 1, i%5 == 2
		if i%3 != 0 {
			a.Earning = &account.Earning{Ecosystem: randText(rng), FeeToken: randText(rng), FeeAmount: randText(rng), State: randText(rng)}
			if i%2 == 0 {
				a.Earning.PriceUSD = strconv.FormatFloat(rng.Float64()*4000, 'f', -1, 64)
			}
		}
		if i%3 == 2 {
			a.Earning.SettledBatch, a.Earning.SettledTo, a.Earning.SettledAt = randText(rng), randText(rng), randTime(rng)
			if i%4 == 2 {
				a.Earning.SettledChainID, a.Earning.SettledTx = rng.Uint64(), randText(rng)
			}
		}
		if i%7 < 3 {
			a.FromAddress, a.ToAddress = randText(rng), randText(rng)
			if i%7 > 0 {
				a.SendingTxHash = randText(rng)
			}
			if i%7 > 1 {
				a.ReceivingTxHash = randText(rng)
			}
		}
		want, err := json.Marshal(activityRecord{V: activityVersion, Activity: a})
		if err != nil {
			t.Fatal(err)
		}
		got, err := EncodeActivity(&a)
		if err != nil || string(got) != string(want) {
			t.Fatalf("EncodeActivity = %s, %v\nwant %s", got, err, want)
		}
		// rt is a as JSON carries it (invalid UTF-8 replaced).
		var rt activityRecord
		if err := json.Unmarshal(want, &rt); err != nil {
			t.Fatal(err)
		}
		back, err := DecodeActivity(got)
		if err != nil || !back.CreatedAt.Equal(a.CreatedAt) || (a.Earning == nil) != (back.Earning == nil) ||
			back.FeeUSDUnknown != a.FeeUSDUnknown || back.VolumeUSDUnknown != a.VolumeUSDUnknown ||
			(a.Earning != nil && back.Earning.PriceUSD != a.Earning.PriceUSD) ||
			back.FromAddress != rt.FromAddress || back.ToAddress != rt.ToAddress || back.SendingTxHash != rt.SendingTxHash || back.ReceivingTxHash != rt.ReceivingTxHash {
			t.Fatalf("DecodeActivity(%s) = %+v, %v", got, back, err)
		}
	}
}

func TestActivityEncoderRefusesUnencodableTimes(t *testing.T) {
	far := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := EncodeActivity(&account.Activity{PartnerID: "ptn_1", ID: "qt_1", CreatedAt: far}); err == nil {
		t.Error("EncodeActivity accepted year 10000")
	}
	if _, err := EncodeActivity(&account.Activity{PartnerID: "ptn_1", ID: "qt_1", CreatedAt: time.Now(), Earning: &account.Earning{SettledAt: far}}); err == nil {
		t.Error("EncodeActivity accepted a settlement in year 10000")
	}
}

// TestActivityDecodesEveryVersion: a record written before the earning kept
// its price (version 1) still reads, as a record whose figures were all
// valued; an unknown version is refused.
func TestActivityDecodesEveryVersion(t *testing.T) {
	for _, tc := range []struct {
		name, rec     string
		ok            bool
		price         string
		feeUnknown    bool
		volumeUnknown bool
		feeMicroUSD   int64
	}{
		{"version 1", `{"v":1,"partnerId":"ptn_a","id":"qt_1","kind":"quote","status":"QUOTED","provider":"aggregator","tool":"sbx-canal","fromChain":1,"toChain":8453,"fromToken":"0xa","toToken":"0xb","fromAmount":"1000000","toAmount":"990000","feeMicroUsd":2500,"volumeMicroUsd":1000000,"createdAt":"2026-03-01T12:00:00Z","earning":{"ecosystem":"evm","feeToken":"0xb","feeAmount":"2500","state":"pending"}}`,
			true, "", false, false, 2500},
		{"version 2, valued", `{"v":2,"partnerId":"ptn_a","id":"qt_2","kind":"quote","status":"QUOTED","provider":"aggregator","tool":"t","fromChain":1,"toChain":8453,"fromToken":"0xa","toToken":"0xb","fromAmount":"1","toAmount":"1","feeMicroUsd":2500,"volumeMicroUsd":1,"createdAt":"2026-03-01T12:00:00Z","earning":{"ecosystem":"evm","feeToken":"0xb","feeAmount":"2500","priceUsd":"0.99985","state":"pending"}}`,
			true, "0.99985", false, false, 2500},
		{"version 2, not valued", `{"v":2,"partnerId":"ptn_a","id":"qt_3","kind":"quote","status":"QUOTED","provider":"aggregator","tool":"t","fromChain":1,"toChain":8453,"fromToken":"0xa","toToken":"0xb","fromAmount":"1","toAmount":"1","feeMicroUsd":0,"volumeMicroUsd":0,"createdAt":"2026-03-01T12:00:00Z","feeUsdUnknown":true,"volumeUsdUnknown":true,"earning":{"ecosystem":"evm","feeToken":"0xb","feeAmount":"2500","state":"pending"}}`,
			true, "", true, true, 0},
		{"version 3", `{"v":3,"partnerId":"ptn_a","id":"qt_4","createdAt":"2026-03-01T12:00:00Z"}`, false, "", false, false, 0},
	} {
		a, err := DecodeActivity([]byte(tc.rec))
		if (err == nil) != tc.ok {
			t.Errorf("%s: err %v", tc.name, err)
			continue
		}
		if !tc.ok {
			continue
		}
		if a.Earning == nil || a.Earning.PriceUSD != tc.price || a.FeeUSDUnknown != tc.feeUnknown ||
			a.VolumeUSDUnknown != tc.volumeUnknown || a.FeeMicroUSD != tc.feeMicroUSD {
			t.Errorf("%s: %+v earning %+v", tc.name, a, a.Earning)
		}
	}
}
