package stages

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"repro/core"
	"repro/experiments/cellid"
	"repro/figure"
	"repro/pipeline"
)

// The paper's figures are one stage on top of the train cells (and, for
// accuracy against energy, the energy cells):
//
// figure/<name> (Figure): one input per seed of every plotted point
// (cellid.FigureInput: the point's panel, series, index and role, and the
// seed index). Outputs "pdf" (vector, for LaTeX), "png" and "ids" (JSON
// FigureSidecar: every plotted point with its ID fig/<name>/<series>/<x>
// and provenance). `repro run` copies them to paper/figures/<name>.pdf,
// .png and .ids.json. Which cells a figure reads is decided by package
// experiments (the [[figure]] declarations of pipeline.toml).

// FigureParams are a figure cell's params: the figure resolved against the
// experiments (FigLayout as canonical JSON), so that the key covers every
// label, style and point, and editing one series changes this figure's key
// and no other cell's.
type FigureParams struct {
	Name   string `toml:"name"`
	Layout string `toml:"layout"`
}

// FigLayout is a figure resolved against the experiments of a profile.
type FigLayout struct {
	Name     string     `json:"name"`
	Label    string     `json:"label"`
	Caption  string     `json:"caption,omitempty"`
	TeXWidth string     `json:"tex_width,omitempty"` // LaTeX width of the graphic
	Width    float64    `json:"width,omitempty"`
	Height   float64    `json:"height,omitempty"`
	Stamp    string     `json:"stamp,omitempty"`
	Profile  string     `json:"profile"`
	Panels   []FigPanel `json:"panels"`
}

// FigPanel is one resolved panel.
type FigPanel struct {
	Title  string    `json:"title,omitempty"`
	XLabel string    `json:"xlabel,omitempty"`
	YLabel string    `json:"ylabel,omitempty"`
	XLog   bool      `json:"xlog,omitempty"`
	Legend string    `json:"legend,omitempty"`
	YRange []float64 `json:"yrange,omitempty"`
	Needs  string    `json:"needs,omitempty"`
	// Categories name a categorical x axis (category i at x = i).
	Categories []string `json:"categories,omitempty"`
	// XTicks are the x axis' ticks when not the data's x values.
	XTicks []float64   `json:"xticks,omitempty"`
	Series []FigSeries `json:"series"`
	Lines  []FigLine   `json:"lines,omitempty"`
}

// FigSeries is one resolved series.
type FigSeries struct {
	Name      string        `json:"name"`
	Label     string        `json:"label,omitempty"`
	XKind     string        `json:"x_kind"` // value, protocol, metric or energy
	XName     string        `json:"x_name,omitempty"`
	Errors    string        `json:"errors"`
	Resamples int           `json:"resamples,omitempty"`
	Marker    string        `json:"marker,omitempty"`
	Color     int           `json:"color,omitempty"`
	Line      bool          `json:"line,omitempty"`
	Dashed    bool          `json:"dashed,omitempty"`
	Seeds     bool          `json:"seeds,omitempty"`
	Frontier  bool          `json:"frontier,omitempty"`
	Labels    bool          `json:"labels,omitempty"`
	Offset    float64       `json:"offset,omitempty"` // drawn x shift (side-by-side series)
	Points    []FigPointRef `json:"points"`
}

// FigPointRef is one point to compute: its cells, per role.
type FigPointRef struct {
	ID         string   `json:"id"`
	Experiment string   `json:"experiment"`
	Label      string   `json:"label,omitempty"`
	X          float64  `json:"x,omitempty"` // XKind value
	Status     string   `json:"status"`      // "run" or "not run: <why>"
	NoMean     bool     `json:"no_mean,omitempty"`
	Y          *CellRef `json:"y,omitempty"`
	XC         *CellRef `json:"xc,omitempty"` // XKind protocol or energy
	B          *CellRef `json:"b,omitempty"`  // the subtrahend of a margin
}

// CellRef names the train cells of one experiment and protocol and the
// figure cell's inputs that carry them (Input + seed index).
type CellRef struct {
	Experiment string `json:"experiment"`
	Protocol   string `json:"protocol"`
	Prefix     string `json:"prefix"` // train cell IDs are <prefix>/seed<s>
	Seeds      string `json:"seeds"`  // space-separated
	// Metric, when set, is what the cells are read for instead of the
	// final accuracy: an energy metric (energy.acc@spike8, energy.nj@dense)
	// of energy cells, whose IDs the prefix then gives.
	Metric string `json:"metric,omitempty"`
	// Input names the figure cell's inputs that carry the cells (with
	// the seed index set per seed).
	Input cellid.FigureInput `json:"input"`
}

// FigLine is one resolved reference line.
type FigLine struct {
	ID     string   `json:"id"`
	Label  string   `json:"label,omitempty"`
	Dashed bool     `json:"dashed,omitempty"`
	Color  int      `json:"color,omitempty"`
	Value  *float64 `json:"value,omitempty"`
	Status string   `json:"status"`
	Ref    *CellRef `json:"ref,omitempty"`
}

// FigurePoint is one plotted point as the sidecar lists it: where it is
// drawn and what it came from.
type FigurePoint struct {
	ID         string `json:"id"` // fig/<figure>/<series>/<x>
	Panel      int    `json:"panel"`
	Series     string `json:"series"`
	Label      string `json:"label,omitempty"`
	Experiment string `json:"experiment"`
	// Status is "ok", "not run: <why>" or "missing: <why>".
	Status string  `json:"status"`
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
	// Errors is how the bars were computed (sd, bootstrap, none); YLo/YHi
	// (XLo/XHi) are the drawn bounds.
	Errors   string  `json:"errors"`
	YLo      float64 `json:"y_lo"`
	YHi      float64 `json:"y_hi"`
	XLo      float64 `json:"x_lo,omitempty"`
	XHi      float64 `json:"x_hi,omitempty"`
	Text     string  `json:"text"` // the point as the report states it, e.g. "91.7 ± 0.4"
	Hidden   bool    `json:"hidden,omitempty"`
	Dominant *bool   `json:"non_dominated,omitempty"`
	// YCell is the plotted accuracy's seeds; XCell the x axis' (an
	// accuracy under another protocol); BCell the subtrahend of a margin,
	// whose seed-paired difference is Diff.
	YCell *AggCell    `json:"y_cell,omitempty"`
	XCell *AggCell    `json:"x_cell,omitempty"`
	BCell *AggCell    `json:"b_cell,omitempty"`
	Diff  *Comparison `json:"diff,omitempty"`
}

// FigureSidecar is the "ids" output of a figure cell.
type FigureSidecar struct {
	Figure  string        `json:"figure"`
	Label   string        `json:"label"`
	Profile string        `json:"profile"`
	Stamp   string        `json:"stamp,omitempty"`
	Source  string        `json:"source"` // the figure cell
	Points  []FigurePoint `json:"points"`
	Lines   []FigurePoint `json:"lines,omitempty"`
}

// Figure draws one figure from its train cells: "pdf", "png" and "ids".
//
// Version history:
//
//   - 1: vector PDF, PNG, the LaTeX figure and the point sidecar.
var Figure = &pipeline.Stage{
	Name:      "figure",
	Version:   1,
	NewParams: func() any { return &FigureParams{} },
	Run: func(ctx context.Context, rc *pipeline.RunContext) error {
		p := rc.Params.(*FigureParams)
		var lay FigLayout
		if err := json.Unmarshal([]byte(p.Layout), &lay); err != nil {
			return fmt.Errorf("figure.layout: %w", err)
		}
		side, fig, err := figureData(ctx, rc, &lay)
		if err != nil {
			return err
		}
		pdf, png, err := figure.Render(fig)
		if err != nil {
			return fmt.Errorf("figure %s: %w", lay.Name, err)
		}
		b, err := json.MarshalIndent(side, "", " ")
		if err != nil {
			return err
		}
		rc.Put("pdf", pdf)
		rc.Put("png", png)
		rc.Put("tex", []byte(FigureTeX(&lay, side)))
		rc.Put("ids", append(b, '\n'))
		return nil
	},
}

// FigureTeX is the figure's LaTeX environment, as main.tex inputs it
// (graphics found through \graphicspath): the paper's caption, the stamp
// of a scaled-down profile, and the reasons any point was not drawn.
func FigureTeX(lay *FigLayout, side *FigureSidecar) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%% %s: generated by repro (%s); every point's ID and provenance in %s.ids.json\n", lay.Label, side.Source, lay.Name)
	width := lay.TeXWidth
	if width == "" {
		width = `\linewidth`
	}
	caption := lay.Caption
	if lay.Stamp != "" {
		caption = `\textbf{[` + latexEscape(lay.Stamp) + `]} ` + caption
	}
	var why []string
	for _, p := range append(slices.Clone(side.Points), side.Lines...) {
		if p.Status != "ok" && !slices.Contains(why, p.Status) {
			why = append(why, p.Status)
		}
	}
	if len(why) > 0 {
		caption += ` \emph{Not drawn here:} ` + latexEscape(strings.Join(why, "; ")) + "."
	}
	fmt.Fprintf(&b, "\\begin{figure}[t]\n\\centering\n\\includegraphics[width=%s]{%s}\n\\caption{%s}\n", width, lay.Name, caption)
	if lay.Label != "" {
		fmt.Fprintf(&b, "\\label{%s}\n", lay.Label)
	}
	b.WriteString("\\end{figure}\n")
	return b.String()
}

// readRef fills the seeds of one cell reference from the figure's inputs.
func readRef(ctx context.Context, rc *pipeline.RunContext, ref *CellRef, id string) (*AggCell, error) {
	c := &AggCell{ID: id, Experiment: ref.Experiment, Protocol: ref.Protocol, Metric: ref.Metric}
	err := fillCell(ctx, rc, c, func(s int) string { in := ref.Input; in.Seed = s; return in.String() }, ref.Seeds, ref.Prefix)
	return c, err
}

// figureData computes every point of a figure and lays it out for the
// renderer.
func figureData(ctx context.Context, rc *pipeline.RunContext, lay *FigLayout) (*FigureSidecar, *figure.Figure, error) {
	side := &FigureSidecar{Figure: lay.Name, Label: lay.Label, Profile: lay.Profile, Stamp: lay.Stamp, Source: cellid.Figure(lay.Name)}
	fig := &figure.Figure{Width: lay.Width, Height: lay.Height, Stamp: lay.Stamp}
	rng := core.NewRNG(BootstrapSeed, core.StreamBootstrap)
	for pi, pn := range lay.Panels {
		panel := figure.Panel{Title: pn.Title, XLabel: pn.XLabel, YLabel: pn.YLabel, XLog: pn.XLog, Legend: pn.Legend}
		if len(pn.YRange) == 2 {
			panel.YRange, panel.YMin, panel.YMax = true, pn.YRange[0], pn.YRange[1]
		}
		for i, c := range pn.Categories {
			panel.XTicks = append(panel.XTicks, figure.Tick{Value: float64(i + 1), Label: c})
		}
		for _, x := range pn.XTicks {
			panel.XTicks = append(panel.XTicks, figure.Tick{Value: x, Label: strconv.FormatFloat(x, 'g', -1, 64)})
		}
		var notes []string
		for _, sr := range pn.Series {
			var pts []FigurePoint
			var drawn []figure.Point
			for _, ref := range sr.Points {
				fp := FigurePoint{ID: ref.ID, Panel: pi + 1, Series: sr.Name, Label: ref.Label, Experiment: ref.Experiment,
					Status: ref.Status, X: ref.X, Errors: sr.Errors, Hidden: ref.NoMean}
				if ref.Status == "run" {
					if err := computePoint(ctx, rc, &sr, &ref, &fp, rng); err != nil {
						return nil, nil, fmt.Errorf("%s: %w", ref.ID, err)
					}
				}
				if fp.Status != "ok" && !slices.Contains(notes, fp.Status) {
					notes = append(notes, fp.Status)
				}
				pts = append(pts, fp)
			}
			if sr.Frontier {
				markFrontier(pts)
			}
			for i := range pts {
				if pts[i].Status == "ok" {
					drawn = append(drawn, drawPoint(&sr, &pts[i]))
				}
			}
			side.Points = append(side.Points, pts...)
			panel.Series = append(panel.Series, drawSeries(&sr, pts, drawn)...)
		}
		for _, ln := range pn.Lines {
			fp := FigurePoint{ID: ln.ID, Panel: pi + 1, Series: "line", Label: ln.Label, Status: ln.Status, Errors: "none"}
			switch {
			case ln.Value != nil:
				fp.Status, fp.Y = "ok", *ln.Value
			case ln.Status == "run":
				c, err := readRef(ctx, rc, ln.Ref, ln.ID)
				if err != nil {
					return nil, nil, fmt.Errorf("%s: %w", ln.ID, err)
				}
				fp.Experiment, fp.Status, fp.YCell, fp.Y = ln.Ref.Experiment, c.Status, c, c.Acc.Mean
			}
			fp.YLo, fp.YHi = fp.Y, fp.Y
			if fp.Status == "ok" {
				fp.Text = fmt1(fp.Y)
				panel.Lines = append(panel.Lines, figure.Line{Y: fp.Y, Label: ln.Label, Dashed: ln.Dashed, Color: ln.Color})
			}
			side.Lines = append(side.Lines, fp)
		}
		panel.Note = "not run: " + pn.Needs
		if pn.Needs == "" {
			panel.Note = strings.Join(notes, "; ")
		}
		fig.Panels = append(fig.Panels, panel)
	}
	return side, fig, nil
}

// computePoint reads a point's cells and computes its coordinates and
// bars.
func computePoint(ctx context.Context, rc *pipeline.RunContext, sr *FigSeries, ref *FigPointRef, fp *FigurePoint, rng *core.RNG) error {
	y, err := readRef(ctx, rc, ref.Y, ref.ID)
	if err != nil {
		return err
	}
	fp.YCell, fp.Status = y, y.Status
	if y.Status != "ok" {
		return nil
	}
	fp.Y = y.Acc.Mean
	vals := y.Values
	if ref.B != nil {
		b, err := readRef(ctx, rc, ref.B, ref.ID+"/minus")
		if err != nil {
			return err
		}
		fp.BCell = b
		if b.Status != "ok" {
			fp.Status = b.Status
			return nil
		}
		d, seeds := pairedDiffs(y, b)
		cmp := &Comparison{ID: ref.ID, A: y.Experiment, B: b.Experiment, Protocol: y.Protocol, N: len(d), Seeds: seeds}
		fp.Diff = cmp
		if len(d) == 0 {
			cmp.Status, fp.Status = "not computed: no common seed", "missing: no seed common to "+y.Experiment+" and "+b.Experiment
			return nil
		}
		cmp.Diff, cmp.Lo, cmp.Hi = PairedBootstrap(d, sr.Resamples, rng)
		cmp.Status = "ok"
		fp.Y, vals = cmp.Diff, d
	}
	fp.YLo, fp.YHi = fp.Y, fp.Y
	switch sr.Errors {
	case "sd":
		s := MeanSD(vals).SD
		fp.YLo, fp.YHi = fp.Y-s, fp.Y+s
	case "bootstrap":
		if fp.Diff != nil {
			fp.YLo, fp.YHi = fp.Diff.Lo, fp.Diff.Hi
		} else {
			_, fp.YLo, fp.YHi = PairedBootstrap(vals, sr.Resamples, rng)
		}
	}
	switch sr.XKind {
	case "metric":
		fp.X = y.Replay.Mean
	case "protocol", "energy":
		x, err := readRef(ctx, rc, ref.XC, ref.ID+"/x")
		if err != nil {
			return err
		}
		fp.XCell = x
		if x.Status != "ok" {
			fp.Status = x.Status
			return nil
		}
		fp.X = x.Acc.Mean
		fp.XLo, fp.XHi = fp.X, fp.X
		if sr.Errors == "sd" {
			fp.XLo, fp.XHi = fp.X-x.Acc.SD, fp.X+x.Acc.SD
		}
	}
	fp.Text = fmt1(fp.Y)
	switch {
	case sr.Errors == "sd" && len(vals) > 1:
		fp.Text += " ± " + fmt1(MeanSD(vals).SD)
	case sr.Errors == "bootstrap":
		fp.Text = signed1(fp.Y) + " [" + signed1(fp.YLo) + ", " + signed1(fp.YHi) + "]"
	}
	switch sr.XKind {
	case "protocol":
		fp.Text += " at " + fmt1(fp.X)
	case "energy":
		fp.Text += " at " + fmt1(fp.X) + " nJ"
	}
	return nil
}

// markFrontier marks each computed point non-dominated or not by the seed
// means: dominated when another point is at least as high on both axes and
// higher on one.
func markFrontier(pts []FigurePoint) {
	for i := range pts {
		if pts[i].Status != "ok" {
			continue
		}
		nd := true
		for j := range pts {
			if i == j || pts[j].Status != "ok" {
				continue
			}
			a, b := pts[i], pts[j]
			if b.X >= a.X && b.Y >= a.Y && (b.X > a.X || b.Y > a.Y) {
				nd = false
			}
		}
		pts[i].Dominant = &nd
	}
}

func drawPoint(sr *FigSeries, fp *FigurePoint) figure.Point {
	pt := figure.Point{X: fp.X + sr.Offset, Y: fp.Y, Hidden: fp.Hidden, Label: fp.Label}
	if sr.Errors != "none" {
		pt.HasYErr, pt.YLo, pt.YHi = true, fp.YLo, fp.YHi
		if sr.XKind == "protocol" || sr.XKind == "energy" {
			pt.HasXErr, pt.XLo, pt.XHi = true, fp.XLo+sr.Offset, fp.XHi+sr.Offset
		}
	}
	if sr.Seeds {
		if fp.Diff != nil {
			d, _ := pairedDiffs(fp.YCell, fp.BCell)
			pt.Seeds = d
		} else {
			pt.Seeds = fp.YCell.Values
		}
	}
	return pt
}

// drawSeries turns one resolved series into the renderer's series: a
// frontier series splits into its non-dominated and dominated points.
func drawSeries(sr *FigSeries, pts []FigurePoint, drawn []figure.Point) []figure.Series {
	base := figure.Series{Label: sr.Label, Marker: sr.Marker, Color: sr.Color, Line: sr.Line, Dashed: sr.Dashed,
		Seeds: sr.Seeds, PointLabels: sr.Labels, Points: drawn}
	if len(drawn) == 0 {
		var why []string
		for _, p := range pts {
			if !slices.Contains(why, p.Status) {
				why = append(why, p.Status)
			}
		}
		base.Missing = strings.Join(why, "; ")
	}
	if !sr.Frontier || len(drawn) == 0 {
		return []figure.Series{base}
	}
	front, dom := base, base
	front.Points, dom.Points = nil, nil
	front.Label, dom.Label = "non-dominated", "dominated"
	dom.Color = sr.Color + 3
	k := 0
	for _, p := range pts {
		if p.Status != "ok" {
			continue
		}
		if *p.Dominant {
			front.Points = append(front.Points, drawn[k])
		} else {
			dom.Points = append(dom.Points, drawn[k])
		}
		k++
	}
	return []figure.Series{front, dom}
}
