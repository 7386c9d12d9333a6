package figure

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// pointLabel is one point's text, in data coordinates.
type pointLabel struct {
	x, y  float64
	text  string
	color color.Color
}

// labeler draws a panel's point labels, every series' together, each where
// it overlaps no label placed before it, no marker and no error bar (a
// label struck through by a bar is hard to read): beside its point if
// there is room, else further out along one of eight directions with a
// thin leader line back to the point. Labels are placed in order, so the
// drawing is a pure function of the data (cached figures stay
// reproducible). A label with no free place anywhere takes the place of
// least overlap.
type labeler struct {
	labels  []pointLabel
	markers plotter.XYs // every drawn mean: labels keep off them
	bars    []errBar    // every drawn error bar: so do labels
}

// errBar is an error bar from (x0, y0) to (x1, y1), in data coordinates:
// horizontal (y0 == y1) or vertical (x0 == x1).
type errBar struct{ x0, y0, x1, y1 float64 }

const (
	labelSize    = 7.5 // points
	markerClear  = 4.0 // points: half the box a marker keeps free
	labelGap     = 1.0 // points between a label and what it avoids
	labelStep    = 9.0 // points between the rings of candidate places
	labelRings   = 6
	labelNearest = 4.0 // points from the point to the first ring
	barClear     = 0.5 // points: half the width of a bar's line
	capClear     = 2.5 // points: half a bar's end cap
)

// labelDirs are the directions a label may sit in from its point, in the
// order tried: right, left, then the diagonals, then above and below.
// (dx, dy) is the direction; the label's box is anchored at the corner or
// edge midpoint facing the point.
var labelDirs = []struct{ dx, dy float64 }{
	{1, 0}, {-1, 0}, {1, 1}, {1, -1}, {-1, 1}, {-1, -1}, {0, 1}, {0, -1},
}

func (l *labeler) style(c color.Color) draw.TextStyle {
	ts := textStyle(labelSize, c)
	ts.XAlign, ts.YAlign = draw.XLeft, draw.YBottom
	return ts
}

// Plot implements plot.Plotter.
func (l *labeler) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	var avoid []vg.Rectangle
	pad := vg.Points(markerClear)
	for _, m := range l.markers {
		pt := vg.Point{X: trX(m.X), Y: trY(m.Y)}
		avoid = append(avoid, grow(vg.Rectangle{Min: pt, Max: pt}, pad))
	}
	for _, b := range l.bars {
		avoid = append(avoid, barBoxes(vg.Point{X: trX(b.x0), Y: trY(b.y0)}, vg.Point{X: trX(b.x1), Y: trY(b.y1)})...)
	}
	for _, lb := range l.labels {
		if lb.text == "" {
			continue
		}
		at := vg.Point{X: trX(lb.x), Y: trY(lb.y)}
		if !c.Contains(at) {
			continue
		}
		ts := l.style(lb.color)
		r0 := ts.Rectangle(lb.text) // the text's box drawn at (0, 0)
		size := r0.Size()
		box, ring := placeLabel(at, size, avoid, c.Rectangle)
		avoid = append(avoid, box)
		c.FillText(ts, box.Min.Sub(r0.Min), lb.text)
		if ring > 0 {
			from, to := leader(at, box, pad)
			c.StrokeLine2(draw.LineStyle{Color: lb.color, Width: vg.Points(0.5)}, from.X, from.Y, to.X, to.Y)
		}
	}
}

// barBoxes are the boxes an error bar from a to b (canvas coordinates)
// covers: its line and the caps at its two ends.
func barBoxes(a, b vg.Point) []vg.Rectangle {
	line := vg.Rectangle{Min: vg.Point{X: min(a.X, b.X), Y: min(a.Y, b.Y)}, Max: vg.Point{X: max(a.X, b.X), Y: max(a.Y, b.Y)}}
	return []vg.Rectangle{
		grow(line, vg.Points(barClear)),
		grow(vg.Rectangle{Min: a, Max: a}, vg.Points(capClear)),
		grow(vg.Rectangle{Min: b, Max: b}, vg.Points(capClear)),
	}
}

// placeLabel returns the box of a label of the given size for the point
// at, and the ring it was found on (0: beside the point): the first free
// candidate inside bounds, or the one of least overlap.
func placeLabel(at vg.Point, size vg.Point, avoid []vg.Rectangle, bounds vg.Rectangle) (vg.Rectangle, int) {
	var best vg.Rectangle
	bestRing, bestCost := 0, math.Inf(1)
	for ring := range labelRings {
		d := vg.Points(labelNearest + labelStep*float64(ring))
		for _, dir := range labelDirs {
			box := boxToward(at, dir.dx, dir.dy, d, size)
			cost := 0.0
			for _, a := range avoid {
				cost += overlap(grow(box, vg.Points(labelGap)), a)
			}
			cost += outside(box, bounds) * 10 // off the axes is worse than crowded
			if cost == 0 {
				return box, ring
			}
			if cost < bestCost {
				best, bestRing, bestCost = box, ring, cost
			}
		}
	}
	return best, bestRing
}

// boxToward is the box of the given size at distance d from at in the
// direction (dx, dy): its near edge (or corner) faces the point, vertically
// centred on it for a horizontal direction, horizontally for a vertical one.
func boxToward(at vg.Point, dx, dy float64, d vg.Length, size vg.Point) vg.Rectangle {
	// A diagonal or horizontal place sits 0.6 of the distance up or
	// down (labels are wider than tall); straight up or down, all of it.
	dv := d * 0.6
	if dx == 0 {
		dv = d
	}
	lo := vg.Point{X: lowEdge(at.X, dx, d, size.X), Y: lowEdge(at.Y, dy, dv, size.Y)}
	return vg.Rectangle{Min: lo, Max: lo.Add(size)}
}

// lowEdge is, along one axis, the low edge of an extent of the given size
// at distance d from at in direction dir: past at (dir > 0), before it
// (dir < 0), or centred on it (dir 0).
func lowEdge(at vg.Length, dir float64, d, size vg.Length) vg.Length {
	switch {
	case dir > 0:
		return at + d
	case dir < 0:
		return at - d - size
	}
	return at - size/2
}

// leader is the line from the edge of the point's marker to the nearest
// point of the label's box.
func leader(at vg.Point, box vg.Rectangle, pad vg.Length) (from, to vg.Point) {
	to = vg.Point{X: clamp(at.X, box.Min.X, box.Max.X), Y: clamp(at.Y, box.Min.Y, box.Max.Y)}
	dx, dy := float64(to.X-at.X), float64(to.Y-at.Y)
	n := math.Hypot(dx, dy)
	if n == 0 {
		return at, to
	}
	from = vg.Point{X: at.X + vg.Length(dx/n)*pad, Y: at.Y + vg.Length(dy/n)*pad}
	return from, to
}

func clamp(v, lo, hi vg.Length) vg.Length { return max(lo, min(v, hi)) }

func grow(r vg.Rectangle, by vg.Length) vg.Rectangle {
	return vg.Rectangle{Min: vg.Point{X: r.Min.X - by, Y: r.Min.Y - by}, Max: vg.Point{X: r.Max.X + by, Y: r.Max.Y + by}}
}

// overlap is the area two boxes share (square points).
func overlap(a, b vg.Rectangle) float64 {
	w := min(a.Max.X, b.Max.X) - max(a.Min.X, b.Min.X)
	h := min(a.Max.Y, b.Max.Y) - max(a.Min.Y, b.Min.Y)
	if w <= 0 || h <= 0 {
		return 0
	}
	return float64(w * h)
}

// outside is the area of a box that lies outside bounds.
func outside(r, bounds vg.Rectangle) float64 {
	s := r.Size()
	return float64(s.X*s.Y) - overlap(r, bounds)
}
