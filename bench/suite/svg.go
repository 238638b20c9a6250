package suite

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

// The report's charts are inline SVG written by hand: a few line charts
// need no library, and the page must stay one self-contained file that
// opens anywhere without fetching a script or a stylesheet.

// series is one line of a chart.
type series struct {
	name  string
	color string
	dash  bool
	pts   [][2]float64
}

// band is a shaded span of the x axis with a hover label (a run).
type band struct {
	x0, x1 float64
	label  string
}

// tick is a labelled position on an axis.
type tick struct {
	at    float64
	label string
}

// chart is a line chart. X and Y are linear unless logY; xTicks, when set,
// replaces the computed x ticks (the percentile axis).
type chart struct {
	title, xLabel, yLabel string
	logY                  bool
	xTicks                []tick
	yFmt                  func(float64) string
	series                []series
	bands                 []band
	// yMin0 pins a linear y axis at zero.
	yMin0 bool
}

// Chart geometry, in SVG user units.
const (
	chartW, chartH         = 640.0, 300.0
	padL, padR, padT, padB = 70.0, 150.0, 28.0, 42.0
	plotW, plotH           = chartW - padL - padR, chartH - padT - padB
	legendRow              = 16.0
	maxLegend              = 14
)

// palette colours series by target: the bare server blue, Swapgate orange,
// the slow-provider Swapgate red, the generator grey, others after.
func palette(name string) string {
	switch {
	case strings.Contains(name, "bare"):
		return "#1f6fd1"
	case strings.Contains(name, "slow"):
		return "#c62828"
	case strings.Contains(name, "generator"):
		return "#666666"
	case strings.Contains(name, "receiver"):
		return "#2e7d32"
	case strings.Contains(name, "postgres"):
		// Swapgate on PostgreSQL, told apart from the same scenario on
		// Pebble in the same chart.
		return "#6a1b9a"
	default:
		return "#e8710a"
	}
}

// niceTicks returns about n round values covering [lo, hi].
func niceTicks(lo, hi float64, n int) []float64 {
	if hi <= lo {
		hi = lo + 1
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var out []float64
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		out = append(out, v)
	}
	return out
}

// svg renders the chart, or a note when it has no data.
// standalone is the chart as an SVG document of its own: the namespace,
// and the page's style inside it, since a file has no page around it.
func (c chart) standalone() string {
	s := c.svg()
	open := strings.Index(s, ">") + 1
	return `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		strings.Replace(s[:open], `<svg `, `<svg xmlns="http://www.w3.org/2000/svg" `, 1) +
		"<style>" + reportCSS + "</style>" + s[open:] + "\n"
}

func (c chart) svg() string {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" role="img">`, chartW, chartH, chartW, chartH)
	fmt.Fprintf(&b, `<title>%s</title>`, esc(c.title))
	fmt.Fprintf(&b, `<text x="%.0f" y="16" class="ct">%s</text>`, padL, esc(c.title))
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range c.series {
		for _, p := range s.pts {
			if c.logY && p[1] <= 0 {
				continue
			}
			xmin, xmax = math.Min(xmin, p[0]), math.Max(xmax, p[0])
			ymin, ymax = math.Min(ymin, p[1]), math.Max(ymax, p[1])
		}
	}
	if math.IsInf(xmin, 0) {
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" class="ax">no data</text></svg>`, padL, padT+plotH/2)
		return b.String()
	}
	for _, t := range c.xTicks {
		xmin, xmax = math.Min(xmin, t.at), math.Max(xmax, t.at)
	}
	if xmax == xmin {
		xmax = xmin + 1
	}
	var ly0, ly1 float64 // y domain in plot space (log10 when logY)
	if c.logY {
		ly0, ly1 = math.Floor(math.Log10(ymin)), math.Ceil(math.Log10(ymax))
		if ly1 == ly0 {
			ly1++
		}
	} else {
		if c.yMin0 {
			ymin = 0
		}
		if ymax == ymin {
			ymax = ymin + 1
		}
		ts := niceTicks(ymin, ymax, 5)
		ly0, ly1 = math.Min(ymin, ts[0]), math.Max(ymax, ts[len(ts)-1])
	}
	px := func(x float64) float64 { return padL + (x-xmin)/(xmax-xmin)*plotW }
	py := func(y float64) float64 {
		v := y
		if c.logY {
			v = math.Log10(y)
		}
		return padT + plotH - (v-ly0)/(ly1-ly0)*plotH
	}
	yFmt := c.yFmt
	if yFmt == nil {
		yFmt = fmtTick
	}
	// Bands under everything else.
	for _, bd := range c.bands {
		x0, x1 := px(math.Max(bd.x0, xmin)), px(math.Min(bd.x1, xmax))
		if x1 <= x0 {
			continue
		}
		fmt.Fprintf(&b, `<rect class="band" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s</title></rect>`, x0, padT, x1-x0, plotH, esc(bd.label))
	}
	// Axes and grid.
	fmt.Fprintf(&b, `<rect class="frame" x="%.1f" y="%.1f" width="%.1f" height="%.1f"/>`, padL, padT, plotW, plotH)
	var yts []float64
	if c.logY {
		for e := ly0; e <= ly1; e++ {
			yts = append(yts, math.Pow(10, e))
		}
	} else {
		yts = niceTicks(ly0, ly1, 5)
	}
	for _, v := range yts {
		y := py(v)
		fmt.Fprintf(&b, `<line class="grid" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, padL, y, padL+plotW, y)
		fmt.Fprintf(&b, `<text class="ax" x="%.1f" y="%.1f" text-anchor="end">%s</text>`, padL-4, y+4, esc(yFmt(v)))
	}
	xts := c.xTicks
	if len(xts) == 0 {
		for _, v := range niceTicks(xmin, xmax, 6) {
			xts = append(xts, tick{v, fmtTick(v)})
		}
	}
	for _, t := range xts {
		if t.at < xmin || t.at > xmax {
			continue
		}
		x := px(t.at)
		fmt.Fprintf(&b, `<line class="grid" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, x, padT, x, padT+plotH)
		fmt.Fprintf(&b, `<text class="ax" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, x, padT+plotH+14, esc(t.label))
	}
	fmt.Fprintf(&b, `<text class="ax" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, padL+plotW/2, chartH-6, esc(c.xLabel))
	fmt.Fprintf(&b, `<text class="ax" transform="rotate(-90)" x="%.1f" y="14" text-anchor="middle">%s</text>`, -(padT + plotH/2), esc(c.yLabel))
	// Lines.
	for _, s := range c.series {
		var pts []string
		for _, p := range s.pts {
			if c.logY && p[1] <= 0 {
				continue
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(p[0]), py(p[1])))
		}
		if len(pts) == 0 {
			continue
		}
		dash := ""
		if s.dash {
			dash = ` stroke-dasharray="5 3"`
		}
		fmt.Fprintf(&b, `<polyline class="line" points="%s" stroke="%s"%s><title>%s</title></polyline>`, strings.Join(pts, " "), s.color, dash, esc(s.name))
		if len(pts) == 1 {
			xy := strings.Split(pts[0], ",")
			fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="2.5" fill="%s"/>`, xy[0], xy[1], s.color)
		}
	}
	// Legend.
	for i, s := range c.series {
		if i == maxLegend {
			fmt.Fprintf(&b, `<text class="ax" x="%.1f" y="%.1f">and %d more</text>`, padL+plotW+12, padT+float64(i)*legendRow+10, len(c.series)-i)
			break
		}
		y := padT + float64(i)*legendRow
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2.5"/>`, padL+plotW+10, y+6, padL+plotW+28, y+6, s.color)
		fmt.Fprintf(&b, `<text class="ax" x="%.1f" y="%.1f">%s</text>`, padL+plotW+32, y+10, esc(s.name))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// fmtTick renders a tick value without the binary noise of repeated
// float additions (0.15000000000000002).
func fmtTick(v float64) string {
	return strconv.FormatFloat(math.Round(v*1e6)/1e6, 'f', -1, 64)
}

// esc escapes text for HTML and for XML alike (the five predefined
// entities only), so that the page parses as both.
func esc(s string) string { return html.EscapeString(s) }

// percentileX maps a percentile to the x of an HDR plot: the number of
// nines, so that 90, 99, 99.9 and 99.99 are evenly spaced; 100 (the
// maximum) sits a little right of 99.999.
func percentileX(p float64) float64 {
	if p >= 100 {
		return 5.5
	}
	return math.Min(-math.Log10(1-p/100), 5)
}

// percentileTicks label the HDR plot's x axis.
func percentileTicks() []tick {
	return []tick{{0, "0%"}, {1, "90%"}, {2, "99%"}, {3, "99.9%"}, {4, "99.99%"}, {5, "99.999%"}, {5.5, "max"}}
}
