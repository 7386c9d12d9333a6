package site

import (
	"fmt"
	"math"
	"strings"

	"repro/numbers"
)

// stripPlot is a small SVG of one number's seeds: a dot per seed value
// (its title names the seed), the mean as a bar with the ±1 s.d. band, and
// the paper's mean as a red diamond when pub is not nil.
func stripPlot(seeds []int64, values []float64, mean, sd float64, pub *float64) string {
	if len(values) == 0 {
		return ""
	}
	const w, h, pad = 320.0, 46.0, 14.0
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range values {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	lo, hi = math.Min(lo, mean-sd), math.Max(hi, mean+sd)
	if pub != nil {
		lo, hi = math.Min(lo, *pub), math.Max(hi, *pub)
	}
	if hi-lo < 1e-9 {
		lo, hi = lo-0.5, hi+0.5
	}
	x := func(v float64) float64 { return pad + (v-lo)/(hi-lo)*(w-2*pad) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="strip" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img" aria-label="seed values">`, w, h, w, h)
	fmt.Fprintf(&b, `<rect x="%.1f" y="8" width="%.1f" height="18" class="band"><title>mean ± 1 s.d.</title></rect>`, x(mean-sd), math.Max(x(mean+sd)-x(mean-sd), 0.5))
	fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="5" y2="29" class="mean"><title>mean %.3f</title></line>`, x(mean), x(mean), mean)
	for i, v := range values {
		seed := ""
		if i < len(seeds) {
			seed = fmt.Sprintf("seed %d: ", seeds[i])
		}
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="17" r="4" class="seed"><title>%s%.4f</title></circle>`, x(v), seed, v)
	}
	if pub != nil {
		px := x(*pub)
		fmt.Fprintf(&b, `<path d="M%.1f 9 l6 8 l-6 8 l-6 -8 z" class="pub"><title>paper %.3f</title></path>`, px, *pub)
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="42" class="axis">%s</text><text x="%.0f" y="42" text-anchor="end" class="axis">%s</text>`, pad, numbers.Fixed(lo, 2), w-pad, numbers.Fixed(hi, 2))
	b.WriteString(`</svg>`)
	return b.String()
}

// plotPoint is one point of a figure page's plot.
type plotPoint struct {
	href, title    string
	x, y, ylo, yhi float64
	series         int
	line           bool // a horizontal reference line at y
}

// palette colours the series (Okabe-Ito, readable by colour-blind readers);
// markers shape them. Series i takes colour i mod 8 and marker i mod 5, so
// the first 40 series of a figure each have their own pair (11 series
// shared 8 colours before).
var (
	palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"}
	markers = []string{"circle", "square", "triangle", "diamond", "cross"}
)

func seriesColour(i int) string { return palette[i%len(palette)] }

// marker draws series i's marker at (x, y), filled with c.
func marker(b *strings.Builder, i int, x, y float64, c string) {
	switch markers[i%len(markers)] {
	case "circle":
		fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="4.5" fill="%s" class="pt"/>`, x, y, c)
	case "square":
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="8" height="8" fill="%s" class="pt"/>`, x-4, y-4, c)
	case "triangle":
		fmt.Fprintf(b, `<polygon points="%.1f,%.1f %.1f,%.1f %.1f,%.1f" fill="%s" class="pt"/>`, x, y-5.5, x-5, y+4, x+5, y+4, c)
	case "diamond":
		fmt.Fprintf(b, `<polygon points="%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f" fill="%s" class="pt"/>`, x, y-5.5, x+5, y, x, y+5.5, x-5, y, c)
	default:
		// Not class pt, whose white stroke outlines the filled markers.
		fmt.Fprintf(b, `<path d="M%.1f %.1fh10M%.1f %.1fv10" stroke="%s" stroke-width="3"/>`, x-5, y, x, y-5, c)
	}
}

// legendSwatch is series i's marker alone, for a legend; a dashed line
// for a reference line.
func legendSwatch(i int, line bool) string {
	var b strings.Builder
	b.WriteString(`<svg class="swatch" width="14" height="14" viewBox="0 0 14 14" aria-hidden="true">`)
	if line {
		fmt.Fprintf(&b, `<line x1="0" x2="14" y1="7" y2="7" stroke="%s" class="ref"/>`, seriesColour(i))
	} else {
		marker(&b, i, 7, 7, seriesColour(i))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// panelAxes is what a panel says of itself: title and axis labels (plain
// text), a log x axis, category names for a categorical x.
type panelAxes struct {
	title, xlabel, ylabel string
	xlog                  bool
	categories            []string
}

// niceTicks are about n round values (1, 2 or 5 times a power of ten)
// covering [lo, hi].
func niceTicks(lo, hi float64, n int) []float64 {
	if !(hi > lo) {
		return []float64{lo}
	}
	raw := (hi - lo) / float64(n)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	step := p
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			step = m * p
			break
		}
	}
	var out []float64
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		x := math.Round(v/step) * step
		if x == 0 {
			x = 0 // not -0
		}
		out = append(out, x)
	}
	return out
}

// logTicks are the powers of ten in [lo, hi], with 2 and 5 times them when
// the range spans less than three decades.
func logTicks(lo, hi float64) []float64 {
	var out []float64
	steps := []float64{1}
	if math.Log10(hi/lo) < 3 {
		steps = []float64{1, 2, 5}
	}
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range steps {
			if v := m * math.Pow(10, e); v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
				out = append(out, v)
			}
		}
	}
	return out
}

// plotPanel draws one panel of a figure as SVG: its title and axis labels,
// round ticks, every point a link to its card with its error bar, in its
// series' colour and marker; reference lines dashed across the panel. The
// x axis is logarithmic when the panel declares it (or, undeclared, when
// every x is positive and they span two decades); a y axis whose values
// are all >= 0 does not go below 0. Series sharing an x are set a few
// pixels apart, as the paper's figures do.
func plotPanel(pts []plotPoint, ax panelAxes) string {
	const w, h, l, r, t, bt = 540.0, 320.0, 64.0, 14.0, 26.0, 50.0
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, p := range pts {
		if !p.line {
			xlo, xhi = math.Min(xlo, p.x), math.Max(xhi, p.x)
		}
		ylo, yhi = math.Min(ylo, math.Min(p.ylo, p.y)), math.Max(yhi, math.Max(p.yhi, p.y))
	}
	if math.IsInf(xlo, 0) {
		xlo, xhi = 0, 1
	}
	logx := xlo > 0 && (ax.xlog || len(ax.categories) == 0 && xhi/xlo >= 100)
	fx := func(v float64) float64 { return v }
	if logx {
		fx = math.Log10
	}
	a, bb := fx(xlo), fx(xhi)
	if bb-a < 1e-12 {
		a, bb = a-1, bb+1
	}
	dx := (bb - a) * 0.06
	a, bb = a-dx, bb+dx
	nonneg := ylo >= 0
	if yhi-ylo < 1e-9 {
		ylo, yhi = ylo-1, yhi+1
	}
	dy := (yhi - ylo) * 0.08
	ylo, yhi = ylo-dy, yhi+dy
	if nonneg && ylo < 0 {
		ylo = 0 // a count or an accuracy is never negative
	}
	X := func(v float64) float64 { return l + (fx(v)-a)/(bb-a)*(w-l-r) }
	Y := func(v float64) float64 { return t + (yhi-v)/(yhi-ylo)*(h-t-bt) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="plot" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s">`, w, h, w, h, esc(ax.title))
	fmt.Fprintf(&b, `<text x="%.0f" y="16" class="ptitle">%s</text>`, l, esc(ax.title))
	fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" class="frame"/>`, l, t, w-l-r, h-t-bt)
	for _, v := range niceTicks(ylo, yhi, 5) {
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" text-anchor="end" class="axis">%s</text>`, l-5, Y(v)+4, fmtG(v))
		fmt.Fprintf(&b, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" class="grid"/>`, l, w-r, Y(v), Y(v))
	}
	var xt []float64
	switch {
	case len(ax.categories) > 0:
		for i := range ax.categories {
			xt = append(xt, float64(i))
		}
	case logx:
		xt = logTicks(math.Pow(10, a), math.Pow(10, bb))
	default:
		xt = niceTicks(a, bb, 5)
	}
	for _, v := range xt {
		label := fmtG(v)
		if len(ax.categories) > 0 {
			label = ax.categories[int(v)]
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle" class="axis">%s</text>`, X(v), h-bt+16, esc(label))
	}
	xl := ax.xlabel
	if logx {
		xl += " (log scale)"
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle" class="alabel">%s</text>`, l+(w-l-r)/2, h-8, esc(strings.TrimSpace(xl)))
	fmt.Fprintf(&b, `<text transform="translate(14 %.0f) rotate(-90)" text-anchor="middle" class="alabel">%s</text>`, t+(h-t-bt)/2, esc(ax.ylabel))
	nSeries := 0
	for _, p := range pts {
		nSeries = max(nSeries, p.series+1)
	}
	for _, p := range pts {
		c := seriesColour(p.series)
		off := 3 * (float64(p.series) - float64(nSeries-1)/2)
		fmt.Fprintf(&b, `<a href="%s"><title>%s</title>`, esc(p.href), esc(p.title))
		if p.line {
			fmt.Fprintf(&b, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="%s" class="ref"/>`, l, w-r, Y(p.y), Y(p.y), c)
			fmt.Fprintf(&b, `<rect x="%.0f" y="%.1f" width="%.0f" height="8" class="hit"/>`, l, Y(p.y)-4, w-l-r)
		} else {
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" class="bar"/>`, X(p.x)+off, X(p.x)+off, Y(p.ylo), Y(p.yhi), c)
			marker(&b, p.series, X(p.x)+off, Y(p.y), c)
		}
		b.WriteString(`</a>`)
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// fmtG is an axis tick: few digits, no trailing zeros.
func fmtG(v float64) string {
	switch av := math.Abs(v); {
	case av >= 1e5:
		return fmt.Sprintf("%.3g", v)
	case av >= 100:
		return fmt.Sprintf("%.0f", v)
	case av >= 1:
		return fmt.Sprintf("%.3g", v)
	case av == 0:
		return "0"
	default:
		return fmt.Sprintf("%.2g", v)
	}
}
