package edge

import (
	"html"
	"html/template"
	"strconv"
	"strings"
)

// barChart draws a series as an inline SVG bar chart, on the server: no
// chart library and nothing loaded, so the portal's Content-Security-Policy
// holds. Each bar carries its label and value as a <title> (a tooltip),
// the chart its name as its accessible label, and the axis its maximum.
// The SVG scales to its container (viewBox), so it fits a 390 px screen.
func barChart(name string, labels []string, values []float64, format func(float64) string) template.HTML {
	const w, h, top, bottom, left = 600.0, 160.0, 14.0, 18.0, 4.0
	maxV := 0.0
	for _, v := range values {
		maxV = max(maxV, v)
	}
	n := float64(max(len(values), 1))
	slot := (w - left) / n
	bw := max(slot*0.7, 1)
	plot := h - top - bottom
	var b strings.Builder
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }
	b.WriteString(`<svg class="chart" viewBox="0 0 600 160" role="img" aria-label="` + html.EscapeString(name) + `" data-chart="` + html.EscapeString(name) + `">`)
	b.WriteString(`<line class="axis" x1="0" y1="` + f(h-bottom) + `" x2="600" y2="` + f(h-bottom) + `"/>`)
	b.WriteString(`<text class="max" x="2" y="10">max ` + html.EscapeString(format(maxV)) + `</text>`)
	for i, v := range values {
		bh := 0.0
		if maxV > 0 {
			bh = v / maxV * plot
		}
		x := left + float64(i)*slot + (slot-bw)/2
		label := ""
		if i < len(labels) {
			label = labels[i]
		}
		b.WriteString(`<rect class="bar" x="` + f(x) + `" y="` + f(h-bottom-bh) + `" width="` + f(bw) + `" height="` + f(bh) +
			`" data-value="` + html.EscapeString(format(v)) + `"><title>` + html.EscapeString(label+": "+format(v)) + `</title></rect>`)
	}
	if len(labels) > 0 {
		b.WriteString(`<text class="tick" x="` + f(left) + `" y="` + f(h-4) + `">` + html.EscapeString(labels[0]) + `</text>`)
		b.WriteString(`<text class="tick" x="596" y="` + f(h-4) + `" text-anchor="end">` + html.EscapeString(labels[len(labels)-1]) + `</text>`)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // #nosec: every piece of text is escaped above
}
