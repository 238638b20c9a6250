package account

import (
	"testing"
	"time"
)

func TestUsageCountCheck(t *testing.T) {
	hour := time.Date(2026, 11, 26, 14, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		c    UsageCount
		ok   bool
	}{
		{"heavy", UsageCount{PartnerID: "ptn_a", Bucket: UsageHeavy, Hour: hour, Admitted: 1}, true},
		{"read, refused only", UsageCount{PartnerID: "ptn_a", Bucket: UsageRead, Hour: hour, Refused: 2}, true},
		{"the same hour in another zone", UsageCount{PartnerID: "ptn_a", Bucket: UsageRead, Hour: hour.In(time.FixedZone("x", 3600))}, true},
		{"no partner", UsageCount{Bucket: UsageHeavy, Hour: hour}, false},
		{"unknown bucket", UsageCount{PartnerID: "ptn_a", Bucket: "none", Hour: hour}, false},
		{"not the start of an hour", UsageCount{PartnerID: "ptn_a", Bucket: UsageHeavy, Hour: hour.Add(time.Second)}, false},
	}
	for _, tc := range tests {
		if err := tc.c.Check(); (err == nil) != tc.ok {
			t.Errorf("%s: Check() = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
	if got := UsageHourOf(hour.Add(59*time.Minute + 59*time.Second)); !got.Equal(hour) || got.Location() != time.UTC {
		t.Fatalf("UsageHourOf = %s", got)
	}
}
