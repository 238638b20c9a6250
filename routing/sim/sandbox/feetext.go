package sandbox

import (
	"fmt"

	"github.com/swapgate/swapgate/routing/domain/tools"
)

// feeText is the name and description a tool's fee is listed under. They
// depend only on the tool, so the market renders them once per catalog tool
// rather than formatting them into every route it builds.
type feeText struct {
	name, description string
}

// newFeeText renders a tool's fee text.
func newFeeText(t *tools.Tool) feeText {
	return feeText{name: t.Name + " fee", description: fmt.Sprintf("%s charges %d bps of the input", t.Name, t.FeeBps)}
}

// feeTexts renders the fee text of every tool in a catalog.
func feeTexts(cat *tools.Catalog) map[*tools.Tool]feeText {
	out := make(map[*tools.Tool]feeText, len(cat.All()))
	for _, t := range cat.All() {
		out[t] = newFeeText(t)
	}
	return out
}

// toolFeeText is a tool's fee text, rendered now for a tool outside the
// catalog the market was built with.
func (m *Market) toolFeeText(t *tools.Tool) feeText {
	if ft, ok := m.feeText[t]; ok {
		return ft
	}
	return newFeeText(t)
}
