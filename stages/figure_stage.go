package stages

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"repro/cellid"
	"repro/core"
	"repro/figure"
	"repro/internal/latex"
	"repro/numbers"
	"repro/pipeline"
	"repro/verdict"
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

// Figure draws one figure from its train cells: "pdf", "png" and "ids".
//
// Version history: 1, vector PDF, PNG, the LaTeX figure and the point
// sidecar; then figureHistory, whose drawing features raise the figures
// that use them only (a cell's version is the newest entry that applies).
var Figure = &pipeline.Stage{
	Name:      "figure",
	Version:   1,
	History:   figureHistory,
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

// figureHistory is the figure stage's version history after 1: each
// drawing feature that changed a figure's outputs, and the layouts that
// use it. The entries' order is free (pipeline.Stage.CellVersion takes the
// largest that applies).
var figureHistory = []pipeline.Bump{
	{Version: 2, Applies: anySeries(func(_ FigPanel, sr FigSeries) bool { return sr.Select != "" }),
		Why: "a series may draw each point at the best of its variants (select = \"best_mean\"; the " +
			"sidecar records the choice). Only the figures that select are at 2: the others draw as before."},
	{Version: 3, Applies: anySeries(func(pn FigPanel, sr FigSeries) bool { return pn.XLog && sr.Offset != 0 }),
		Why: "point labels are placed per panel, clear of every marker and of each other (moved out " +
			"with a leader line where crowded), and a series offset on a log x axis shifts by decades. " +
			"Only figures with such an offset are at 3 (those with point labels are at 4)."},
	{Version: 4, Applies: anySeries(func(_ FigPanel, sr FigSeries) bool { return sr.ShowLabels }),
		Why: "point labels keep clear of every error bar too (a label was drawn across its point's " +
			"horizontal bar). Figures with point labels are at 4."},
	{Version: 5, Applies: captionHas("[["),
		Why: "a caption states our numbers where it says [[ours:<series>/<x>]] (the point's mean and " +
			"s.d., with its collapsed seeds), [[seeds:<series>/<x>]] (its seeds' range) and " +
			"[[nondominated]] (the points on the frontier), so that it never asserts about the plot " +
			"what the data under it contradict. Figures whose caption uses them are at 5."},
	{Version: 6, Applies: captionHas("[[ours:"),
		Why: "a caption's [[ours:...]] counts the point's severe failures by the paper's definition " +
			"(a final accuracy below 60%, verdict.CountFailures) instead of seeds 10 points below the " +
			"median. Figures whose caption states [[ours:...]] are at 6."},
}

// figureLayout decodes a figure cell's layout; a bad one (which Run
// reports) raises no version.
func figureLayout(params any) (FigLayout, bool) {
	var lay FigLayout
	err := json.Unmarshal([]byte(params.(*FigureParams).Layout), &lay)
	return lay, err == nil
}

// anySeries: a figure history entry that applies when f holds for one of
// the layout's series.
func anySeries(f func(FigPanel, FigSeries) bool) func(params any) bool {
	return func(params any) bool {
		lay, ok := figureLayout(params)
		for _, pn := range lay.Panels {
			for _, sr := range pn.Series {
				if ok && f(pn, sr) {
					return true
				}
			}
		}
		return false
	}
}

// captionHas: a figure history entry that applies when the layout's
// caption contains s.
func captionHas(s string) func(params any) bool {
	return func(params any) bool {
		lay, ok := figureLayout(params)
		return ok && strings.Contains(lay.Caption, s)
	}
}

// FigureTeX is the figure's LaTeX environment, as main.tex inputs it
// (graphics found through \graphicspath): the paper's caption, the stamp
// of a scaled-down profile, and the reasons any point was not drawn.
func FigureTeX(lay *FigLayout, side *numbers.FigureSidecar) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%% %s: generated by repro (%s); every point's ID and provenance in %s.ids.json\n", lay.Label, side.Source, lay.Name)
	width := lay.TeXWidth
	if width == "" {
		width = `\linewidth`
	}
	caption := ourCaption(lay.Caption, lay.Name, side)
	if lay.Stamp != "" {
		caption = `\textbf{[` + latex.Escape(lay.Stamp) + `]} ` + caption
	}
	var why []string
	for _, p := range append(slices.Clone(side.Points), side.Lines...) {
		if p.Status.Kind != numbers.StatusOK && !slices.Contains(why, p.Status.String()) {
			why = append(why, p.Status.String())
		}
	}
	if len(why) > 0 {
		caption += ` \emph{Not drawn here:} ` + latex.Escape(strings.Join(why, "; ")) + "."
	}
	fmt.Fprintf(&b, "\\begin{figure}[t]\n\\centering\n\\includegraphics[width=%s]{%s}\n\\caption{%s}\n", width, lay.Name, caption)
	if lay.Label != "" {
		fmt.Fprintf(&b, "\\label{%s}\n", lay.Label)
	}
	b.WriteString("\\end{figure}\n")
	return b.String()
}

// readRef fills the seeds of one cell reference from the figure's inputs.
func readRef(ctx context.Context, rc *pipeline.RunContext, ref *CellRef, id string) (*numbers.AggCell, error) {
	c := &numbers.AggCell{ID: id, Experiment: ref.Experiment, Protocol: ref.Protocol, Metric: ref.Metric}
	err := fillCell(ctx, rc, c, func(s int) string { in := ref.Input; in.Seed = s; return in.String() }, ref.Seeds, ref.Prefix)
	return c, err
}

// figureData computes every point of a figure and lays it out for the
// renderer.
func figureData(ctx context.Context, rc *pipeline.RunContext, lay *FigLayout) (*numbers.FigureSidecar, *figure.Figure, error) {
	side := &numbers.FigureSidecar{Figure: lay.Name, Label: lay.Label, Profile: lay.Profile, Stamp: lay.Stamp, Source: cellid.Figure(lay.Name)}
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
			var pts []numbers.FigurePoint
			var drawn []figure.Point
			for _, ref := range sr.Points {
				fp := numbers.FigurePoint{ID: ref.ID, Panel: pi + 1, Series: sr.Name, Label: ref.Label, Experiment: ref.Experiment,
					Status: ref.Status, X: ref.X, Errors: sr.Errors, Hidden: ref.NoMean}
				if ref.Status.Kind == numbers.StatusRun {
					if err := computePoint(ctx, rc, &sr, &ref, &fp, rng); err != nil {
						return nil, nil, fmt.Errorf("%s: %w", ref.ID, err)
					}
				}
				if fp.Status.Kind != numbers.StatusOK && !slices.Contains(notes, fp.Status.String()) {
					notes = append(notes, fp.Status.String())
				}
				pts = append(pts, fp)
			}
			if sr.Frontier {
				markFrontier(pts)
			}
			for i := range pts {
				if pts[i].Status.Kind == numbers.StatusOK {
					drawn = append(drawn, drawPoint(&sr, &pts[i], pn.XLog))
				}
			}
			side.Points = append(side.Points, pts...)
			panel.Series = append(panel.Series, drawSeries(&sr, pts, drawn)...)
		}
		for _, ln := range pn.Lines {
			fp := numbers.FigurePoint{ID: ln.ID, Panel: pi + 1, Series: "line", Label: ln.Label, Status: ln.Status, Errors: "none"}
			switch {
			case ln.Value != nil:
				fp.Status, fp.Y = numbers.Status{Kind: numbers.StatusOK}, *ln.Value
			case ln.Status.Kind == numbers.StatusRun:
				c, err := readRef(ctx, rc, ln.Ref, ln.ID)
				if err != nil {
					return nil, nil, fmt.Errorf("%s: %w", ln.ID, err)
				}
				fp.Experiment, fp.Status, fp.YCell, fp.Y = ln.Ref.Experiment, c.Status, c, c.Acc.Mean
			}
			fp.YLo, fp.YHi = fp.Y, fp.Y
			if fp.Status.Kind == numbers.StatusOK {
				fp.Text = numbers.Fixed(fp.Y, 1)
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
func computePoint(ctx context.Context, rc *pipeline.RunContext, sr *FigSeries, ref *FigPointRef, fp *numbers.FigurePoint, rng *core.RNG) error {
	var y *numbers.AggCell
	var err error
	if sr.Select != "" {
		y, fp.Selection, err = selectVariant(ctx, rc, sr.Select, ref)
	} else {
		y, err = readRef(ctx, rc, ref.Y, ref.ID)
	}
	if err != nil {
		return err
	}
	fp.Experiment = y.Experiment
	fp.YCell, fp.Status = y, y.Status
	if y.Status.Kind != numbers.StatusOK {
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
		if b.Status.Kind != numbers.StatusOK {
			fp.Status = b.Status
			return nil
		}
		d, seeds := numbers.PairedDiffs(y, b)
		cmp := &numbers.Comparison{ID: ref.ID, A: y.Experiment, B: b.Experiment, Protocol: y.Protocol, N: len(d), Seeds: seeds}
		fp.Diff = cmp
		if len(d) == 0 {
			cmp.Status, fp.Status = "not computed: no common seed", numbers.Missing("no seed common to "+y.Experiment+" and "+b.Experiment)
			return nil
		}
		cmp.Diff, cmp.Lo, cmp.Hi = PairedBootstrap(d, sr.Resamples, rng)
		cmp.Status = numbers.CompareOK
		fp.Y, vals = cmp.Diff, d
	}
	fp.YLo, fp.YHi = fp.Y, fp.Y
	switch sr.Errors {
	case "sd":
		s := numbers.MeanSD(vals).SD
		fp.YLo, fp.YHi = fp.Y-s, fp.Y+s
	case "bootstrap":
		if fp.Diff != nil {
			fp.YLo, fp.YHi = fp.Diff.Lo, fp.Diff.Hi
		} else {
			_, fp.YLo, fp.YHi = PairedBootstrap(vals, sr.Resamples, rng)
		}
	}
	if ok, err := pointX(ctx, rc, sr, ref, fp, y); err != nil || !ok {
		return err
	}
	fp.Text = pointText(sr, fp, vals)
	return nil
}

// pointX sets a point's x (and its bar) from what the series plots it
// against: the replay updates of its own cell, or another cell's accuracy
// or energy. It reports false when that cell is not ok (fp.Status says
// why).
func pointX(ctx context.Context, rc *pipeline.RunContext, sr *FigSeries, ref *FigPointRef, fp *numbers.FigurePoint, y *numbers.AggCell) (bool, error) {
	switch sr.XKind {
	case "metric":
		fp.X = y.Replay.Mean
	case "protocol", "energy":
		x, err := readRef(ctx, rc, ref.XC, ref.ID+"/x")
		if err != nil {
			return false, err
		}
		fp.XCell = x
		if x.Status.Kind != numbers.StatusOK {
			fp.Status = x.Status
			return false, nil
		}
		fp.X = x.Acc.Mean
		fp.XLo, fp.XHi = fp.X, fp.X
		if sr.Errors == "sd" {
			fp.XLo, fp.XHi = fp.X-x.Acc.SD, fp.X+x.Acc.SD
		}
	}
	return true, nil
}

// pointText is a point's value as the sidecar and why print it: "91.7 ±
// 0.4", "+2.6 [+0.2, +5.2]", with " at X" (or " at X nJ") when plotted
// against another cell.
func pointText(sr *FigSeries, fp *numbers.FigurePoint, vals []float64) string {
	text := numbers.Fixed(fp.Y, 1)
	switch {
	case sr.Errors == "sd" && len(vals) > 1:
		text += " ± " + numbers.Fixed(numbers.MeanSD(vals).SD, 1)
	case sr.Errors == "bootstrap":
		text = numbers.Signed(fp.Y, 1) + " [" + numbers.Signed(fp.YLo, 1) + ", " + numbers.Signed(fp.YHi, 1) + "]"
	}
	switch sr.XKind {
	case "protocol":
		text += " at " + numbers.Fixed(fp.X, 1)
	case "energy":
		text += " at " + numbers.Fixed(fp.X, 1) + " nJ"
	}
	return text
}

// selectVariant reads every candidate of a point drawn at the best of its
// variants and returns the chosen one's cell. best_mean takes the highest
// seed mean of the plotted accuracy, the first declared on a tie (the
// paper draws each configuration "at its better learning rate"). A
// candidate without results is returned instead, so that the point is
// missing rather than drawn at the best of what happened to finish.
func selectVariant(ctx context.Context, rc *pipeline.RunContext, rule string, ref *FigPointRef) (*numbers.AggCell, *numbers.FigSelection, error) {
	if rule != "best_mean" || len(ref.Variants) == 0 {
		return nil, nil, fmt.Errorf("select %q over %d variants: want best_mean over some", rule, len(ref.Variants))
	}
	sel := &numbers.FigSelection{Rule: rule}
	var best *numbers.AggCell
	for _, v := range ref.Variants {
		c, err := readRef(ctx, rc, v, ref.ID)
		if err != nil {
			return nil, nil, err
		}
		sel.Candidates = append(sel.Candidates, numbers.FigCandidate{Experiment: c.Experiment, Status: c.Status, N: c.N, Mean: c.Acc.Mean, SD: c.Acc.SD})
		switch {
		case c.Status.Kind != numbers.StatusOK:
			return c, sel, nil
		case best == nil || c.Acc.Mean > best.Acc.Mean:
			best = c
		}
	}
	sel.Chosen = best.Experiment
	return best, sel, nil
}

// markFrontier marks each computed point non-dominated or not by the seed
// means: dominated when another point is at least as high on both axes and
// higher on one.
func markFrontier(pts []numbers.FigurePoint) {
	for i := range pts {
		if pts[i].Status.Kind != numbers.StatusOK {
			continue
		}
		nd := true
		for j := range pts {
			if i == j || pts[j].Status.Kind != numbers.StatusOK {
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

// drawPoint is a computed point as the renderer draws it: shifted by the
// series' offset (on a log axis a factor 10^offset, the same distance at
// every x), with its bars and seeds as the series asks.
func drawPoint(sr *FigSeries, fp *numbers.FigurePoint, xlog bool) figure.Point {
	shift := func(x float64) float64 { return x + sr.Offset }
	if xlog && sr.Offset != 0 {
		f := math.Pow(10, sr.Offset)
		shift = func(x float64) float64 { return x * f }
	}
	pt := figure.Point{X: shift(fp.X), Y: fp.Y, Hidden: fp.Hidden, Label: fp.Label}
	if sr.Errors != "none" {
		pt.HasYErr, pt.YLo, pt.YHi = true, fp.YLo, fp.YHi
		if sr.XKind == "protocol" || sr.XKind == "energy" {
			pt.HasXErr, pt.XLo, pt.XHi = true, shift(fp.XLo), shift(fp.XHi)
		}
	}
	if sr.Seeds {
		if fp.Diff != nil {
			d, _ := numbers.PairedDiffs(fp.YCell, fp.BCell)
			pt.Seeds = d
		} else {
			pt.Seeds = fp.YCell.Values
		}
	}
	return pt
}

// drawSeries turns one resolved series into the renderer's series: a
// frontier series splits into its non-dominated and dominated points.
func drawSeries(sr *FigSeries, pts []numbers.FigurePoint, drawn []figure.Point) []figure.Series {
	base := figure.Series{Label: sr.Label, Marker: sr.Marker, Color: sr.Color, Line: sr.Line, Dashed: sr.Dashed,
		Seeds: sr.Seeds, PointLabels: sr.ShowLabels, Points: drawn}
	if len(drawn) == 0 {
		var why []string
		for _, p := range pts {
			if !slices.Contains(why, p.Status.String()) {
				why = append(why, p.Status.String())
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
		if p.Status.Kind != numbers.StatusOK {
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

// captionRef is a caption's reference to our numbers: [[ours:<point>]],
// [[seeds:<point>]] or [[nondominated]].
var captionRef = regexp.MustCompile(`\[\[(ours|seeds):([^\]]+)\]\]|\[\[nondominated\]\]`)

// FillCaption is a figure caption with its references to our numbers
// filled from the figure's sidecar, as the PDF's caption has them (the
// report site shows the caption too).
func FillCaption(caption string, side *numbers.FigureSidecar) string {
	return ourCaption(caption, side.Figure, side)
}

// ourCaption fills a caption's references to our numbers (see Figure's
// version 5) from the points of side; a reference to a point the figure
// does not have reads "(no such point)", so a typo shows in the PDF.
func ourCaption(caption, name string, side *numbers.FigureSidecar) string {
	byID := map[string]*numbers.FigurePoint{}
	for i := range side.Points {
		byID[side.Points[i].ID] = &side.Points[i]
	}
	return captionRef.ReplaceAllStringFunc(caption, func(m string) string {
		sub := captionRef.FindStringSubmatch(m)
		if sub[1] == "" {
			var on []string
			for _, p := range side.Points {
				if p.Dominant != nil && *p.Dominant {
					on = append(on, cmp.Or(p.Label, p.Experiment))
				}
			}
			return latex.Escape(strings.Join(on, ", "))
		}
		p := byID["fig/"+name+"/"+sub[2]]
		if p == nil || p.Status.Kind != numbers.StatusOK || p.YCell == nil {
			return "(no such point: " + latex.Escape(sub[2]) + ")"
		}
		c := p.YCell
		if sub[1] == "seeds" {
			if len(c.Values) == 0 {
				return "(no seeds)"
			}
			return fmt.Sprintf("$%s$--$%s$", numbers.Fixed(slices.Min(c.Values), 1), numbers.Fixed(slices.Max(c.Values), 1))
		}
		s := "$" + numbers.Fixed(c.Acc.Mean, 1)
		if c.N > 1 {
			s += `\pm` + numbers.Fixed(c.Acc.SD, 1)
		}
		s += "$"
		if k := verdict.CountFailures(c.Values); k > 0 {
			s += fmt.Sprintf(" ($%d$ of $%d$ seeds below $%.0f\\%%$)", k, len(c.Values), verdict.FailureBelow)
		}
		return s
	})
}
