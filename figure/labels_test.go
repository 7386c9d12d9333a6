package figure

import (
	"fmt"
	"testing"

	"gonum.org/v1/plot/vg"
)

// TestPlaceLabelsApart: labels of a tight cluster of points (the frontier's
// top cluster, a few points apart on a 5-inch axis) are placed clear of
// each other and of every marker, inside the axes; a lone point's label
// sits beside it (ring 0).
func TestPlaceLabelsApart(t *testing.T) {
	t.Parallel()
	bounds := vg.Rectangle{Max: vg.Point{X: 5 * vg.Inch, Y: 4 * vg.Inch}}
	var pts []vg.Point
	for i := range 9 {
		// A 3 x 3 block 6 points apart near the middle.
		pts = append(pts, vg.Point{X: 2*vg.Inch + vg.Length(i%3)*6, Y: 2*vg.Inch + vg.Length(i/3)*6})
	}
	pad := vg.Points(markerClear)
	var avoid, markers []vg.Rectangle
	for _, p := range pts {
		m := grow(vg.Rectangle{Min: p, Max: p}, pad)
		markers = append(markers, m)
		avoid = append(avoid, m)
	}
	size := vg.Point{X: 45, Y: 9} // "controller (grad)" at 7.5 pt, about
	var boxes []vg.Rectangle
	for _, p := range pts {
		box, _ := placeLabel(p, size, avoid, bounds)
		avoid = append(avoid, box)
		boxes = append(boxes, box)
	}
	for i, b := range boxes {
		if outside(b, bounds) > 0 {
			t.Errorf("label %d at %v leaves the axes", i, b)
		}
		for j, m := range markers {
			if overlap(b, m) > 0 {
				t.Errorf("label %d at %v covers marker %d", i, b, j)
			}
		}
		for j := range i {
			if overlap(b, boxes[j]) > 0 {
				t.Errorf("labels %d and %d overlap: %v, %v", j, i, boxes[j], b)
			}
		}
	}
	lone := vg.Point{X: vg.Inch, Y: vg.Inch}
	if _, ring := placeLabel(lone, size, nil, bounds); ring != 0 {
		t.Errorf("a lone point's label is on ring %d, want 0 (beside it)", ring)
	}
	// At the right edge the label goes left of the point, not off the axes.
	edge := vg.Point{X: bounds.Max.X - 10, Y: vg.Inch}
	if box, _ := placeLabel(edge, size, nil, bounds); box.Max.X > edge.X {
		t.Errorf("label at the right edge drawn at %v", box)
	}
}

// TestRenderLabelsDeterministic: a figure with crowded labels renders to
// the same bytes twice (the placement depends on the data alone).
func TestRenderLabelsDeterministic(t *testing.T) {
	t.Parallel()
	var pts []Point
	for i := range 8 {
		pts = append(pts, Point{X: 93.8 + 0.05*float64(i%4), Y: 91.5 + 0.3*float64(i/4), Label: fmt.Sprintf("variant %d", i)})
	}
	f := &Figure{Panels: []Panel{{XLabel: "x", YLabel: "y", Series: []Series{{Label: "s", PointLabels: true, Points: pts}}}}}
	pdf1, png1, err := Render(f)
	if err != nil {
		t.Fatal(err)
	}
	pdf2, png2, err := Render(f)
	if err != nil {
		t.Fatal(err)
	}
	if string(pdf1) != string(pdf2) || string(png1) != string(png2) {
		t.Error("the same figure rendered to different bytes")
	}
}

// TestLabelsClearErrorBars: a point with a long horizontal error bar (the
// frontier's controller rows) gets its label off the bar, and a label
// placed beside a neighbour's vertical bar keeps off it too.
func TestLabelsClearErrorBars(t *testing.T) {
	t.Parallel()
	bounds := vg.Rectangle{Max: vg.Point{X: 5 * vg.Inch, Y: 4 * vg.Inch}}
	at := vg.Point{X: 2 * vg.Inch, Y: 2 * vg.Inch}
	pad := vg.Points(markerClear)
	avoid := []vg.Rectangle{grow(vg.Rectangle{Min: at, Max: at}, pad)}
	bars := barBoxes(vg.Point{X: at.X - vg.Inch, Y: at.Y}, vg.Point{X: at.X + vg.Inch, Y: at.Y})
	// A neighbour's vertical bar just right of the point.
	nb := vg.Point{X: at.X + 30, Y: at.Y}
	bars = append(bars, barBoxes(vg.Point{X: nb.X, Y: nb.Y - 40}, vg.Point{X: nb.X, Y: nb.Y + 40})...)
	avoid = append(avoid, bars...)
	size := vg.Point{X: 45, Y: 9}
	box, _ := placeLabel(at, size, avoid, bounds)
	for i, b := range bars {
		if overlap(box, b) > 0 {
			t.Errorf("label at %v crosses bar box %d %v", box, i, b)
		}
	}
	// Without the bars the label sits right of the point, on the bar's
	// line: the case this guards against.
	if free, _ := placeLabel(at, size, avoid[:1], bounds); overlap(free, bars[0]) == 0 {
		t.Errorf("test premise: the unobstructed place %v does not cross the bar", free)
	}
}
