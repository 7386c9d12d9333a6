package figure

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sample has every kind of panel the paper uses: a log-x sweep with s.d.
// bars and a reference line, every seed beside the mean, x and y error
// bars with point labels, a bootstrap interval around zero, and a panel
// that was not run.
func sample() *Figure {
	return &Figure{Stamp: "SMOKE", Panels: []Panel{
		{Title: "sweep", XLabel: "buffer size K", YLabel: "accuracy (%)", XLog: true, Legend: "br",
			Series: []Series{
				{Label: "ours", Marker: "circle", Line: true, Points: []Point{
					{X: 200, Y: 83, HasYErr: true, YLo: 81.6, YHi: 84.4, Seeds: []float64{82, 84, 83}},
					{X: 1000, Y: 91.7, HasYErr: true, YLo: 91.3, YHi: 92.1},
					{X: 5000, Y: 93.8, HasYErr: true, YLo: 93.6, YHi: 94}}},
				{Label: "DER++", Marker: "square", Color: 1, Line: true, Dashed: true, Seeds: true, Points: []Point{
					{X: 200, Y: 77.1, HasYErr: true, YLo: 76.2, YHi: 78, Seeds: []float64{76, 77, 78}},
					{X: 5000, Y: 95.7, Hidden: true, Seeds: []float64{95.5, 95.9}}}},
				{Label: "absent", Missing: "needs a feature"},
			},
			Lines: []Line{{Y: 88, Label: "night", Dashed: true, Color: 6}}},
		{Title: "frontier", XLabel: "static (%)", YLabel: "sequential (%)", Legend: "none",
			Series: []Series{{Marker: "diamond", PointLabels: true, Points: []Point{
				{X: 94.1, Y: 91.7, HasYErr: true, YLo: 91.3, YHi: 92.1, HasXErr: true, XLo: 93.9, XHi: 94.3, Label: "always-on"},
				{X: 94.6, Y: 88.3, Label: "silent"}}},
				{Marker: "star", Color: 3, Points: []Point{{X: 94, Y: 90}}}}},
		{Title: "margin", XLabel: "replay batch", YLabel: "isolated - unmasked", XTicks: []Tick{{4, "4"}, {8, "8"}, {16, "16"}},
			Series: []Series{{Label: "margin", Marker: "triangle", Points: []Point{
				{X: 4, Y: 0.3, HasYErr: true, YLo: -0.5, YHi: 1.2}, {X: 16, Y: 0.1, HasYErr: true, YLo: -0.3, YHi: 0.5}}}},
			Lines: []Line{{Y: 0, Color: 7}}},
		{Title: "gate", Note: "not run: needs rotation gated by unit pressure"},
	}}
}

func TestRenderDeterministic(t *testing.T) {
	pdf1, png1, err := Render(sample())
	if err != nil {
		t.Fatal(err)
	}
	pdf2, png2, err := Render(sample())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(pdf1, []byte("%PDF-")) || !bytes.HasPrefix(png1, []byte("\x89PNG")) {
		t.Fatalf("not a PDF and a PNG: %q / %q", pdf1[:8], png1[:8])
	}
	if !bytes.Equal(pdf1, pdf2) || !bytes.Equal(png1, png2) {
		t.Error("the same figure rendered to different bytes")
	}
	if dir := os.Getenv("FIGURE_OUT"); dir != "" {
		os.WriteFile(filepath.Join(dir, "sample.pdf"), pdf1, 0o644)
		os.WriteFile(filepath.Join(dir, "sample.png"), png1, 0o644)
	}
}

func TestCheckRejects(t *testing.T) {
	for name, edit := range map[string]func(f *Figure){
		"no panel":  func(f *Figure) { f.Panels = nil },
		"marker":    func(f *Figure) { f.Panels[0].Series[0].Marker = "blob" },
		"legend":    func(f *Figure) { f.Panels[0].Legend = "middle" },
		"log x <=0": func(f *Figure) { f.Panels[0].Series[0].Points[0].X = 0 },
		"NaN":       func(f *Figure) { f.Panels[1].Series[0].Points[0].YHi = nan() },
	} {
		f := sample()
		edit(f)
		if _, _, err := Render(f); err == nil {
			t.Errorf("%s: rendered without an error", name)
		}
	}
}

func TestWrap(t *testing.T) {
	got := wrap("not run: needs rotation gated by unit pressure", 20)
	for _, l := range strings.Split(got, "\n") {
		if len(l) > 20 {
			t.Errorf("line %q longer than 20", l)
		}
	}
	if strings.Join(strings.Fields(got), " ") != "not run: needs rotation gated by unit pressure" {
		t.Errorf("wrap lost words: %q", got)
	}
}

func nan() float64 { z := 0.0; return z / z }
