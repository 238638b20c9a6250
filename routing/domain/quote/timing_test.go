package quote

import (
	"encoding/json"
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/swapgate/swapgate/routing/domain/apierr"
)

// timingJSON is data.timing as encoding/json makes it, the form
// AppendTiming must match byte for byte.
type timingJSON struct {
	TotalMs  float64         `json:"totalMs"`
	Strategy string          `json:"strategy"`
	Legs     []legTimingJSON `json:"legs"`
}

type legTimingJSON struct {
	Provider string  `json:"provider"`
	Tool     string  `json:"tool"`
	Ms       float64 `json:"ms"`
	Outcome  string  `json:"outcome"`
	Code     string  `json:"code,omitempty"`
	Reason   string  `json:"reason,omitempty"`
}

func timingForm(t *Timing) *timingJSON {
	j := &timingJSON{TotalMs: Millis(t.Total), Strategy: t.Reason.String(), Legs: []legTimingJSON{}}
	for _, l := range t.Legs {
		j.Legs = append(j.Legs, legTimingJSON{Provider: l.Provider, Tool: l.Tool, Ms: Millis(l.Elapsed), Outcome: l.Status.String(), Code: l.Code, Reason: l.Reason})
	}
	return j
}

// TestTimingEncodingMatchesEncodingJSON compares the appended timing with
// json.Marshal of its struct form, byte for byte.
func TestTimingEncodingMatchesEncodingJSON(t *testing.T) {
	for i, tm := range []*Timing{
		{Total: 1500 * time.Millisecond, Reason: StopDeadline, Legs: []LegTiming{
			{Provider: "aggregator", Tool: "sbx-canal", Elapsed: 253 * time.Microsecond, Status: LegWon},
			{Provider: "aggregator", Tool: "sbx-<arc>&\u2028", Elapsed: 1500 * time.Millisecond, Status: LegTimedOut},
			{Provider: "intents", Tool: "", Elapsed: 0, Status: LegSkipped},
			{Provider: "intents", Tool: "x", Elapsed: 3*time.Hour + 7*time.Nanosecond, Status: LegFailed},
			{Provider: "aggregator", Status: LegFailed, Code: "UPSTREAM_ERROR", Reason: "the aggregator upstream sent an invalid answer: transactionRequest.to: \"javascript:alert(1)\" is not a valid evm address"},
			{Provider: "intents", Tool: "y", Elapsed: -time.Second, Status: LegNoRoute},
			{Provider: "pulseroute", Status: LegUnsupported, Reason: "multi-step \"routes\" <cannot> size"},
		}},
		{Total: 999 * time.Nanosecond, Reason: StopAllAnswered, Legs: []LegTiming{}},
		{Total: 42*time.Millisecond + 1*time.Microsecond, Reason: StopExpectedResults},
		{Total: time.Millisecond, Reason: StopMaxWait, Legs: []LegTiming{{Provider: "p", Tool: "t", Elapsed: 1, Status: LegAnswered}}},
	} {
		want, err := json.Marshal(timingForm(tm))
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendTiming([]byte("x"), tm); string(got) != "x"+string(want) {
			t.Errorf("case %d:\n got %s\nwant x%s", i, got, want)
		}
	}
}

// TestNewTimingNamesEachLegsOutcome checks the status each kind of outcome
// is shown with, the winner marked, a live upstream's leg named by its
// route's tool, a timed-out leg's time being the race's, and a failed
// leg's error code and message (an upstream answer refused at the adapter
// says why there).
func TestNewTimingNamesEachLegsOutcome(t *testing.T) {
	win := &Route{Provider: "aggregator", Tool: "sbx-canal", ToAmount: big.NewInt(1)}
	other := &Route{Provider: "aggregator", Tool: "sbx-wormway", ToAmount: big.NewInt(1)}
	live := &Route{Provider: "intents", Tool: "oneclick", ToAmount: big.NewInt(1)}
	outcomes := []LegOutcome{
		{Provider: "aggregator", Leg: "sbx-canal", Route: win, Answered: true, Elapsed: 2 * time.Millisecond},
		{Provider: "aggregator", Leg: "sbx-wormway", Route: other, Answered: true, Elapsed: 3 * time.Millisecond},
		{Provider: "aggregator", Leg: "sbx-arcbridge", Answered: true, Elapsed: time.Millisecond,
			Err: &NoRoute{Provider: "aggregator", Tool: "sbx-arcbridge", Reason: "AMOUNT_TOO_LOW"}},
		{Provider: "aggregator", Leg: "sbx-fail", Answered: true, Err: fmt.Errorf("boom"), Elapsed: 4 * time.Millisecond},
		{Provider: "aggregator", Answered: true, Elapsed: 5 * time.Millisecond,
			Err: apierr.New(apierr.UpstreamError, "the aggregator upstream sent an invalid answer: transactionRequest: missing")},
		{Provider: "aggregator", Leg: "sbx-hang"},
		{Provider: "aggregator", Leg: "sbx-dead", Skipped: true, Answered: true, Err: fmt.Errorf("open")},
		{Provider: "intents", Leg: "", Route: live, Answered: true, Elapsed: 9 * time.Millisecond},
		ExactOutputOutcome("pulseroute", "no exact output here"),
	}
	tm := NewTiming(outcomes, RaceEnd{Total: 300 * time.Millisecond, Reason: StopDeadline}, win)
	want := []LegTiming{
		{Provider: "aggregator", Tool: "sbx-canal", Elapsed: 2 * time.Millisecond, Status: LegWon},
		{Provider: "aggregator", Tool: "sbx-wormway", Elapsed: 3 * time.Millisecond, Status: LegAnswered},
		{Provider: "aggregator", Tool: "sbx-arcbridge", Elapsed: time.Millisecond, Status: LegNoRoute},
		{Provider: "aggregator", Tool: "sbx-fail", Elapsed: 4 * time.Millisecond, Status: LegFailed, Code: apierr.Internal, Reason: "internal error"},
		{Provider: "aggregator", Elapsed: 5 * time.Millisecond, Status: LegFailed, Code: apierr.UpstreamError,
			Reason: "the aggregator upstream sent an invalid answer: transactionRequest: missing"},
		{Provider: "aggregator", Tool: "sbx-hang", Elapsed: 300 * time.Millisecond, Status: LegTimedOut},
		{Provider: "aggregator", Tool: "sbx-dead", Status: LegSkipped},
		{Provider: "intents", Tool: "oneclick", Elapsed: 9 * time.Millisecond, Status: LegAnswered},
		{Provider: "pulseroute", Status: LegUnsupported, Reason: "no exact output here"},
	}
	if tm.Total != 300*time.Millisecond || tm.Reason != StopDeadline || len(tm.Legs) != len(want) {
		t.Fatalf("timing %+v", tm)
	}
	for i, w := range want {
		if tm.Legs[i] != w {
			t.Errorf("leg %d: %+v, want %+v", i, tm.Legs[i], w)
		}
	}
}

// TestNewTimingOfFewLegs checks the timing of a race of up to four legs,
// which shares its allocation with its legs, and of none.
func TestNewTimingOfFewLegs(t *testing.T) {
	r := &Route{Provider: "intents", Tool: "sbx-intents"}
	tm := NewTiming([]LegOutcome{{Provider: "intents", Leg: "sbx-intents", Route: r, Answered: true, Elapsed: time.Millisecond}},
		RaceEnd{Total: 2 * time.Millisecond, Reason: StopAllAnswered}, r)
	if len(tm.Legs) != 1 || tm.Legs[0] != (LegTiming{Provider: "intents", Tool: "sbx-intents", Elapsed: time.Millisecond, Status: LegWon}) || tm.Total != 2*time.Millisecond {
		t.Fatalf("%+v", tm)
	}
	if tm := NewTiming(nil, RaceEnd{Reason: StopAllAnswered}, nil); len(tm.Legs) != 0 || string(AppendTiming(nil, tm)) != `{"totalMs":0,"strategy":"all_answered","legs":[]}` {
		t.Fatalf("%+v", tm)
	}
}
