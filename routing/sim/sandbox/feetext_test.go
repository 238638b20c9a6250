package sandbox

import (
	"testing"

	"github.com/swapgate/swapgate/routing/domain/tools"
)

// TestToolFeeText checks that the fee text rendered at construction is what
// a tool outside the catalog gets rendered on demand.
func TestToolFeeText(t *testing.T) {
	f := loadFixture(t)
	m := f.market(t, Config{})
	all := m.cat.All()
	if len(all) == 0 {
		t.Fatal("empty catalog")
	}
	for _, tool := range all {
		outside := *tool
		got, want := m.toolFeeText(tool), m.toolFeeText(&outside)
		if got != want {
			t.Errorf("%s: cached %+v, rendered %+v", tool.Key, got, want)
		}
		if _, ok := m.feeText[&outside]; ok {
			t.Fatalf("%s: a copy of the tool is in the cache", tool.Key)
		}
	}
	odd := &tools.Tool{Name: "Odd", FeeBps: 7}
	if got := m.toolFeeText(odd); got.name != "Odd fee" || got.description != "Odd charges 7 bps of the input" {
		t.Errorf("uncached tool: %+v", got)
	}
}
