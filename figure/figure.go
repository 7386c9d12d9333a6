// Package figure draws the paper's figures: a pure function from a figure's
// data (panels, series, points with error bars, reference lines, axis
// labels) to a vector PDF and a PNG, with gonum.org/v1/plot.
//
// The output depends on the data alone: the PDF's creation and modification
// dates are fixed, so the same figure renders to the same bytes, and a
// cached figure cell is reproducible like any other.
package figure

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"codeberg.org/go-pdf/fpdf"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
)

// pdfEpoch is the creation and modification date written into every PDF
// (fpdf writes the wall clock otherwise, and the bytes would differ on
// every run).
var pdfEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func init() {
	fpdf.SetDefaultCreationDate(pdfEpoch)
	fpdf.SetDefaultModificationDate(pdfEpoch)
}

// Figure is one figure: its panels side by side.
type Figure struct {
	// Width and Height of the whole figure in inches (0: 4.5 per panel by 3.4).
	Width, Height float64
	Panels        []Panel
	// Stamp, when set, is printed across the top (smoke output).
	Stamp string
}

// Panel is one set of axes.
type Panel struct {
	Title, XLabel, YLabel string
	// XLog draws x on a log scale with ticks at the x values of the data.
	XLog bool
	// XTicks, when set, replace the automatic ticks (value and label).
	XTicks []Tick
	// YMin and YMax fix the y range when YRange is true.
	YRange     bool
	YMin, YMax float64
	// Legend is where the legend goes: "tl", "tr", "bl", "br" (default),
	// "below" (under the panel, off the data) or
	// "none".
	Legend string
	Series []Series
	Lines  []Line
	// Note is printed in the panel when it has no data ("not run: ...").
	Note string
}

// Tick is one labelled x tick.
type Tick struct {
	Value float64
	Label string
}

// Series is one set of points drawn alike.
type Series struct {
	Label string
	// Marker is circle, square, triangle, diamond, star, cross or plus.
	Marker string
	// Color indexes the palette (colour-blind safe, Okabe-Ito).
	Color int
	// Line joins the points (in x order); Dashed draws it dashed.
	Line, Dashed bool
	// Seeds draws every seed's value as a small open circle beside the
	// mean.
	Seeds bool
	// PointLabels writes each point's Label beside it.
	PointLabels bool
	Points      []Point
	// Missing, when the series has no point, says why (the legend shows
	// it as not run).
	Missing string
}

// Point is one plotted mean with its error bars. YLo/YHi (and XLo/XHi)
// are absolute bounds; HasYErr (HasXErr) says whether they are drawn.
type Point struct {
	X, Y             float64
	HasYErr, HasXErr bool
	YLo, YHi         float64
	XLo, XHi         float64
	// Hidden points are not drawn as a mean (their seeds still are).
	Hidden bool
	Seeds  []float64
	Label  string
}

// Line is a horizontal reference line at Y.
type Line struct {
	Y      float64
	Label  string
	Dashed bool
	Color  int
}

// Palette is Okabe and Ito's colour-blind safe set.
var Palette = []color.Color{
	color.RGBA{0, 114, 178, 255},   // blue
	color.RGBA{213, 94, 0, 255},    // vermilion
	color.RGBA{0, 158, 115, 255},   // bluish green
	color.RGBA{204, 121, 167, 255}, // reddish purple
	color.RGBA{230, 159, 0, 255},   // orange
	color.RGBA{86, 180, 233, 255},  // sky blue
	color.RGBA{0, 0, 0, 255},       // black
	color.RGBA{120, 120, 120, 255}, // grey
}

func paletteColor(i int) color.Color {
	if i < 0 {
		i = -i
	}
	return Palette[i%len(Palette)]
}

var markers = map[string]draw.GlyphDrawer{
	"circle":   draw.CircleGlyph{},
	"square":   draw.SquareGlyph{},
	"triangle": draw.TriangleGlyph{},
	"diamond":  diamondGlyph{},
	"star":     starGlyph{},
	"cross":    draw.CrossGlyph{},
	"plus":     draw.PlusGlyph{},
	"ring":     draw.RingGlyph{},
}

// legendPlaces are where a panel's legend may go (Panel.Legend; "" is the
// default place).
var legendPlaces = []string{"tl", "tr", "bl", "br", "below", "none"}

// LegendPlaces lists the values Panel.Legend may take besides "".
func LegendPlaces() []string { return slices.Clone(legendPlaces) }

// Markers lists the marker names a series may use.
func Markers() []string {
	var out []string
	for k := range markers {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Check reports the first problem of a figure's data: no panel, an unknown
// marker or legend place, a non-finite coordinate, or an empty log axis.
func (f *Figure) Check() error {
	if len(f.Panels) == 0 {
		return errors.New("figure has no panel")
	}
	for i, p := range f.Panels {
		if p.Legend != "" && !slices.Contains(legendPlaces, p.Legend) {
			return fmt.Errorf("panel %d: legend %q: want %s or %s", i+1, p.Legend, strings.Join(legendPlaces[:len(legendPlaces)-1], ", "), legendPlaces[len(legendPlaces)-1])
		}
		for _, s := range p.Series {
			if _, ok := markers[s.Marker]; s.Marker != "" && !ok {
				return fmt.Errorf("panel %d: series %q: marker %q: want one of %s", i+1, s.Label, s.Marker, strings.Join(Markers(), ", "))
			}
			for _, pt := range s.Points {
				for _, v := range []float64{pt.X, pt.Y, pt.YLo, pt.YHi, pt.XLo, pt.XHi} {
					if math.IsNaN(v) || math.IsInf(v, 0) {
						return fmt.Errorf("panel %d: series %q: point %q: non-finite coordinate", i+1, s.Label, pt.Label)
					}
				}
				if p.XLog && pt.X <= 0 {
					return fmt.Errorf("panel %d: series %q: x = %g on a log axis", i+1, s.Label, pt.X)
				}
			}
		}
	}
	return nil
}

// Render draws the figure as a vector PDF and a PNG (150 dpi).
func Render(f *Figure) (pdf, png []byte, err error) {
	if err := f.Check(); err != nil {
		return nil, nil, err
	}
	w, h := f.Width, f.Height
	if w <= 0 {
		w = 4.5 * float64(len(f.Panels))
	}
	if h <= 0 {
		h = 3.4
	}
	W, H := vg.Length(w)*vg.Inch, vg.Length(h)*vg.Inch
	pc := vgpdf.New(W, H)
	if err := f.draw(draw.New(pc)); err != nil {
		return nil, nil, err
	}
	var pb bytes.Buffer
	if _, err := pc.WriteTo(&pb); err != nil {
		return nil, nil, err
	}
	ic := vgimg.NewWith(vgimg.UseWH(W, H), vgimg.UseDPI(150))
	if err := f.draw(draw.New(ic)); err != nil {
		return nil, nil, err
	}
	var ib bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: ic}).WriteTo(&ib); err != nil {
		return nil, nil, err
	}
	return pb.Bytes(), ib.Bytes(), nil
}

func (f *Figure) draw(dc draw.Canvas) error {
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	top := vg.Length(0)
	if f.Stamp != "" {
		ts := textStyle(8, color.RGBA{200, 0, 0, 255})
		ts.XAlign = draw.XCenter
		ts.YAlign = draw.YTop
		dc.FillText(ts, vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: dc.Max.Y - 2}, f.Stamp)
		top = 12
	}
	plots := make([][]*plot.Plot, 1)
	for i := range f.Panels {
		p, err := f.Panels[i].plot()
		if err != nil {
			return fmt.Errorf("panel %d: %w", i+1, err)
		}
		plots[0] = append(plots[0], p)
	}
	// A legend "below" its panel is drawn under the panel's x axis, in a
	// strip as tall as the tallest such legend, never over the data.
	below := make([]*plot.Legend, len(plots[0]))
	strip := vg.Length(0)
	for i, p := range plots[0] {
		if f.Panels[i].Legend != "below" {
			continue
		}
		l := p.Legend
		l.Top, l.Left, l.XOffs, l.YOffs = true, true, 0, 0
		below[i] = &l
		p.Legend = plot.NewLegend()
		r := l.Rectangle(dc)
		strip = max(strip, r.Max.Y-r.Min.Y+4)
	}
	tiles := draw.Tiles{Rows: 1, Cols: len(plots[0]), PadX: vg.Millimeter * 4, PadTop: top + 2, PadBottom: 2, PadLeft: 2, PadRight: 4}
	canvases := plot.Align(plots, tiles, draw.Crop(dc, 0, 0, strip, 0))
	for i, p := range plots[0] {
		c := canvases[0][i]
		p.Draw(c)
		if below[i] != nil {
			below[i].Draw(draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: c.Min.X + 4, Y: dc.Min.Y}, Max: vg.Point{X: c.Max.X, Y: dc.Min.Y + strip}}})
		}
	}
	return nil
}

func textStyle(size float64, c color.Color) draw.TextStyle {
	return draw.TextStyle{
		Color:   c,
		Font:    font.From(plot.DefaultFont, vg.Points(size)),
		Handler: plot.DefaultTextHandler,
	}
}

// plot builds one panel.
func (pn *Panel) plot() (*plot.Plot, error) {
	p := pn.frame()

	hasData := false
	var xs []float64
	lab := &labeler{}
	for i := range pn.Series {
		s := &pn.Series[i]
		if len(s.Points) == 0 {
			continue
		}
		hasData = true
		if err := addSeries(p, s, pn.Legend != "none", lab); err != nil {
			return nil, fmt.Errorf("series %q: %w", s.Label, err)
		}
		for _, pt := range s.Points {
			xs = append(xs, pt.X)
		}
	}
	for _, s := range pn.Series {
		if len(s.Points) == 0 && pn.Legend != "none" && s.Label != "" {
			sc, _ := plotter.NewScatter(plotter.XYs{})
			sc.GlyphStyle = glyphStyle(s.Marker, color.Gray{Y: 160}, 3)
			p.Legend.Add(s.Label+" (not run)", sc)
		}
	}
	if !hasData {
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
		p.HideAxes()
		note := pn.Note
		if note == "" {
			note = "not run"
		}
		lab, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: 0.5, Y: 0.5}}, Labels: []string{wrap(note, 48)}})
		if err != nil {
			return nil, err
		}
		lab.TextStyle[0].XAlign, lab.TextStyle[0].YAlign = draw.XCenter, draw.YCenter
		lab.TextStyle[0].Font.Size = vg.Points(9)
		lab.TextStyle[0].Color = color.RGBA{150, 0, 0, 255}
		p.Add(lab)
		return p, nil
	}
	for _, l := range pn.Lines {
		hl := plotter.NewFunction(func(float64) float64 { return l.Y })
		hl.Color = paletteColor(l.Color)
		hl.Width = vg.Points(1.2)
		if l.Dashed {
			hl.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		p.Add(hl)
		if l.Label != "" && pn.Legend != "none" {
			p.Legend.Add(l.Label, hl)
		}
	}
	if len(lab.labels) > 0 {
		p.Add(lab)
	}
	pn.scaleAxes(p, xs)
	return p, nil
}

// frame is the panel's empty plot: title, fonts, legend placement, grid.
func (pn *Panel) frame() *plot.Plot {
	p := plot.New()
	p.Title.Text = pn.Title
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.X.Label.Text, p.Y.Label.Text = pn.XLabel, pn.YLabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = vg.Points(10)
		a.Tick.Label.Font.Size = vg.Points(9)
	}
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	p.Legend.ThumbnailWidth = vg.Points(18)
	switch pn.Legend {
	case "tl":
		p.Legend.Top, p.Legend.Left = true, true
	case "tr":
		p.Legend.Top = true
	case "bl":
		p.Legend.Left = true
	}
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(-4), vg.Points(4)
	if p.Legend.Top {
		p.Legend.YOffs = vg.Points(-4)
	}
	if p.Legend.Left {
		p.Legend.XOffs = vg.Points(4)
	}
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 225}
	grid.Horizontal.Color = color.Gray{Y: 225}
	p.Add(grid)
	return p
}

// scaleAxes sets the axes' scale, ticks and ranges from the panel's
// options and the data's x values xs.
func (pn *Panel) scaleAxes(p *plot.Plot, xs []float64) {
	if pn.XLog {
		p.X.Scale = plot.LogScale{}
		if len(pn.XTicks) == 0 {
			p.X.Tick.Marker = valueTicks(xs)
		}
		lo, hi := slices.Min(xs), slices.Max(xs)
		p.X.Min, p.X.Max = lo/1.4, hi*1.4
	}
	if len(pn.XTicks) > 0 {
		var ts plot.ConstantTicks
		for _, t := range pn.XTicks {
			ts = append(ts, plot.Tick{Value: t.Value, Label: t.Label})
		}
		p.X.Tick.Marker = ts
		if !pn.XLog {
			// Categories: half a slot of room either side.
			p.X.Min, p.X.Max = pn.XTicks[0].Value-0.5, pn.XTicks[len(pn.XTicks)-1].Value+0.5
		}
	}
	if pn.YRange {
		p.Y.Min, p.Y.Max = pn.YMin, pn.YMax
	} else {
		pad := (p.Y.Max - p.Y.Min) * 0.06
		p.Y.Min -= pad
		p.Y.Max += pad
	}
	if !pn.XLog && len(pn.XTicks) == 0 {
		pad := (p.X.Max - p.X.Min) * 0.06
		if pad == 0 {
			pad = 0.5
		}
		p.X.Min -= pad
		p.X.Max += pad
	}
}

// valueTicks labels a log axis at the distinct x values of the data.
func valueTicks(xs []float64) plot.ConstantTicks {
	u := slices.Clone(xs)
	slices.Sort(u)
	u = slices.Compact(u)
	var ts plot.ConstantTicks
	for _, x := range u {
		ts = append(ts, plot.Tick{Value: x, Label: strconv.FormatFloat(x, 'g', -1, 64)})
	}
	return ts
}

func glyphStyle(marker string, c color.Color, r vg.Length) draw.GlyphStyle {
	g, ok := markers[marker]
	if !ok {
		g = draw.CircleGlyph{}
	}
	if marker == "star" {
		r *= 1.6
	}
	return draw.GlyphStyle{Color: c, Radius: r, Shape: g}
}

// seriesXYs are a series' points in plotter form: the visible means with
// their labels, the error bars of those that have them, and every seed.
type seriesXYs struct {
	means, yerrXY, xerrXY, seeds plotter.XYs
	yerr                         plotter.YErrors
	xerr                         plotter.XErrors
	labels                       []string
}

// collectPoints sorts a copy of pts by x (stably) and splits it into
// seriesXYs; a hidden point contributes only its seeds.
func collectPoints(points []Point) seriesXYs {
	pts := slices.Clone(points)
	slices.SortStableFunc(pts, func(a, b Point) int {
		switch {
		case a.X < b.X:
			return -1
		case a.X > b.X:
			return 1
		}
		return 0
	})
	var xy seriesXYs
	for _, pt := range pts {
		for _, v := range pt.Seeds {
			xy.seeds = append(xy.seeds, plotter.XY{X: pt.X, Y: v})
		}
		if pt.Hidden {
			continue
		}
		xy.means = append(xy.means, plotter.XY{X: pt.X, Y: pt.Y})
		xy.labels = append(xy.labels, pt.Label)
		if pt.HasYErr {
			xy.yerrXY = append(xy.yerrXY, plotter.XY{X: pt.X, Y: pt.Y})
			xy.yerr = append(xy.yerr, struct{ Low, High float64 }{pt.Y - pt.YLo, pt.YHi - pt.Y})
		}
		if pt.HasXErr {
			xy.xerrXY = append(xy.xerrXY, plotter.XY{X: pt.X, Y: pt.Y})
			xy.xerr = append(xy.xerr, struct{ Low, High float64 }{pt.X - pt.XLo, pt.XHi - pt.X})
		}
	}
	return xy
}

// addSeries draws s on p: its seeds faded, its means as markers (joined
// when s.Line), error bars, and a legend entry when legend. Its means and
// point labels go to lab, which places every series' labels together.
func addSeries(p *plot.Plot, s *Series, legend bool, lab *labeler) error {
	c := paletteColor(s.Color)
	xy := collectPoints(s.Points)
	means, labels, seeds := xy.means, xy.labels, xy.seeds
	yerr, yerrXY, xerr, xerrXY := xy.yerr, xy.yerrXY, xy.xerr, xy.xerrXY
	ls := draw.LineStyle{Color: c, Width: vg.Points(1.3)}
	if s.Dashed {
		ls.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	}
	if s.Seeds && len(seeds) > 0 {
		sc, err := plotter.NewScatter(seeds)
		if err != nil {
			return err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: fade(c), Radius: vg.Points(2.2), Shape: draw.RingGlyph{}}
		p.Add(sc)
	}
	if len(means) == 0 {
		return nil
	}
	var thumbs []plot.Thumbnailer
	if s.Line && len(means) > 1 {
		l, err := plotter.NewLine(means)
		if err != nil {
			return err
		}
		l.LineStyle = ls
		p.Add(l)
		thumbs = append(thumbs, l)
	}
	ebStyle := draw.LineStyle{Color: c, Width: vg.Points(1)}
	if len(yerr) > 0 {
		p.Add(&plotter.YErrorBars{XYs: yerrXY, YErrors: yerr, LineStyle: ebStyle, CapWidth: vg.Points(5)})
	}
	if len(xerr) > 0 {
		p.Add(&plotter.XErrorBars{XYs: xerrXY, XErrors: xerr, LineStyle: ebStyle, CapWidth: vg.Points(5)})
	}
	sc, err := plotter.NewScatter(means)
	if err != nil {
		return err
	}
	sc.GlyphStyle = glyphStyle(s.Marker, c, vg.Points(3.2))
	p.Add(sc)
	thumbs = append(thumbs, sc)
	lab.markers = append(lab.markers, means...)
	for i, e := range yerr {
		pt := yerrXY[i]
		lab.bars = append(lab.bars, errBar{pt.X, pt.Y - e.Low, pt.X, pt.Y + e.High})
	}
	for i, e := range xerr {
		pt := xerrXY[i]
		lab.bars = append(lab.bars, errBar{pt.X - e.Low, pt.Y, pt.X + e.High, pt.Y})
	}
	if s.PointLabels {
		for i, m := range means {
			lab.labels = append(lab.labels, pointLabel{x: m.X, y: m.Y, text: labels[i], color: c})
		}
	}
	if legend && s.Label != "" {
		p.Legend.Add(s.Label, thumbs...)
	}
	return nil
}

func fade(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	mix := func(v uint32) uint8 { return uint8((float64(v>>8)*0.55 + 255*0.45)) }
	return color.RGBA{mix(r), mix(g), mix(b), 255}
}

// wrap breaks s into lines of at most n characters at spaces.
func wrap(s string, n int) string {
	var lines []string
	var cur string
	for _, w := range strings.Fields(s) {
		if cur != "" && len(cur)+1+len(w) > n {
			lines = append(lines, cur)
			cur = w
			continue
		}
		if cur != "" {
			cur += " "
		}
		cur += w
	}
	return strings.Join(append(lines, cur), "\n")
}

// diamondGlyph is a square turned by 45 degrees.
type diamondGlyph struct{}

func (diamondGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(0.5)})
	r := sty.Radius * 1.3
	var p vg.Path
	p.Move(vg.Point{X: pt.X, Y: pt.Y + r})
	p.Line(vg.Point{X: pt.X + r, Y: pt.Y})
	p.Line(vg.Point{X: pt.X, Y: pt.Y - r})
	p.Line(vg.Point{X: pt.X - r, Y: pt.Y})
	p.Close()
	c.SetColor(sty.Color)
	c.Fill(p)
}

// starGlyph is a filled five-pointed star.
type starGlyph struct{}

func (starGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	var p vg.Path
	for i := range 10 {
		r := sty.Radius
		if i%2 == 1 {
			r *= 0.42
		}
		a := math.Pi/2 + float64(i)*math.Pi/5
		q := vg.Point{X: pt.X + r*vg.Length(math.Cos(a)), Y: pt.Y + r*vg.Length(math.Sin(a))}
		if i == 0 {
			p.Move(q)
		} else {
			p.Line(q)
		}
	}
	p.Close()
	c.SetColor(sty.Color)
	c.Fill(p)
}
