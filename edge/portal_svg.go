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
// the chart its name as its accessible label. The SVG scales to its
// container (viewBox), so it fits a 390 px screen; its words (the axis's
// maximum, the first and last labels) are HTML around it, not SVG text,
// because SVG text scales with the drawing: a chart twice as wide would
// write them twice as large. In HTML they take the stylesheet's one size
// (.chart-label) in every chart, whatever its width.
func barChart(name string, labels []string, values []float64, format func(float64) string) template.HTML {
	const w, h, top, left = 600.0, 142.0, 4.0, 4.0
	maxV := 0.0
	for _, v := range values {
		maxV = max(maxV, v)
	}
	n := float64(max(len(values), 1))
	slot := (w - left) / n
	bw := max(slot*0.7, 1)
	plot := h - top
	var b strings.Builder
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }
	b.WriteString(`<div class="chart-frame"><span class="chart-label chart-max">max ` + html.EscapeString(format(maxV)) + `</span>`)
	b.WriteString(`<svg class="chart" viewBox="0 0 600 142" role="img" aria-label="` + html.EscapeString(name) + `" data-chart="` + html.EscapeString(name) + `">`)
	b.WriteString(`<line class="axis" x1="0" y1="` + f(h) + `" x2="600" y2="` + f(h) + `"/>`)
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
		b.WriteString(`<rect class="bar" x="` + f(x) + `" y="` + f(h-bh) + `" width="` + f(bw) + `" height="` + f(bh) +
			`" data-value="` + html.EscapeString(format(v)) + `"><title>` + html.EscapeString(label+": "+format(v)) + `</title></rect>`)
	}
	b.WriteString(`</svg>`)
	if len(labels) > 0 {
		b.WriteString(`<div class="chart-ticks"><span class="chart-label">` + html.EscapeString(labels[0]) + `</span>` +
			`<span class="chart-label">` + html.EscapeString(labels[len(labels)-1]) + `</span></div>`)
	}
	b.WriteString(`</div>`)
	return template.HTML(b.String()) // #nosec: every piece of text is escaped above
}
