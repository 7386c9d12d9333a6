package site

import (
	"fmt"
	"math"
	"strings"
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
	fmt.Fprintf(&b, `<text x="%.0f" y="42" class="axis">%s</text><text x="%.0f" y="42" text-anchor="end" class="axis">%s</text>`, pad, fmtN(lo, 2), w-pad, fmtN(hi, 2))
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

// palette colours the series (Okabe-Ito, readable by colour-blind readers).
var palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"}

// plotPanel draws one panel of a figure as SVG: every point a link to its
// card, with its error bar; reference lines dashed across the panel. A log
// x axis is used when every x is positive and they span a decade; series
// sharing an x are set a few pixels apart, as the paper's figures do.
func plotPanel(pts []plotPoint, title string) string {
	const w, h, l, r, t, bt = 520.0, 300.0, 52.0, 14.0, 22.0, 34.0
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
	logx := xlo > 0 && xhi/xlo >= 10
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
	if yhi-ylo < 1e-9 {
		ylo, yhi = ylo-1, yhi+1
	}
	dy := (yhi - ylo) * 0.08
	ylo, yhi = ylo-dy, yhi+dy
	X := func(v float64) float64 { return l + (fx(v)-a)/(bb-a)*(w-l-r) }
	Y := func(v float64) float64 { return t + (yhi-v)/(yhi-ylo)*(h-t-bt) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="plot" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s">`, w, h, w, h, esc(title))
	fmt.Fprintf(&b, `<text x="%.0f" y="14" class="ptitle">%s</text>`, l, esc(title))
	fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" class="frame"/>`, l, t, w-l-r, h-t-bt)
	for i := 0; i <= 4; i++ {
		v := ylo + (yhi-ylo)*float64(i)/4
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" text-anchor="end" class="axis">%s</text>`, l-4, Y(v)+4, fmtN(v, 1))
		xv := a + (bb-a)*float64(i)/4
		if logx {
			xv = math.Pow(10, xv)
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle" class="axis">%s</text>`, X(xv), h-bt+16, fmtG(xv))
	}
	if logx {
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="end" class="axis">log x</text>`, w-r, h-4)
	}
	nSeries := 0
	for _, p := range pts {
		nSeries = max(nSeries, p.series+1)
	}
	for _, p := range pts {
		c := palette[p.series%len(palette)]
		off := 5 * (float64(p.series) - float64(nSeries-1)/2)
		fmt.Fprintf(&b, `<a href="%s"><title>%s</title>`, esc(p.href), esc(p.title))
		if p.line {
			fmt.Fprintf(&b, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="%s" class="ref"/>`, l, w-r, Y(p.y), Y(p.y), c)
			fmt.Fprintf(&b, `<rect x="%.0f" y="%.1f" width="%.0f" height="8" class="hit"/>`, l, Y(p.y)-4, w-l-r)
		} else {
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" class="bar"/>`, X(p.x)+off, X(p.x)+off, Y(p.ylo), Y(p.yhi), c)
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="5" fill="%s" class="pt"/>`, X(p.x)+off, Y(p.y), c)
		}
		b.WriteString(`</a>`)
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// fmtG is an axis tick: few digits.
func fmtG(v float64) string {
	switch av := math.Abs(v); {
	case av >= 100:
		return fmt.Sprintf("%.0f", v)
	case av >= 1:
		return fmt.Sprintf("%.3g", v)
	default:
		return fmt.Sprintf("%.2g", v)
	}
}
