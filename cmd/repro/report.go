package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"repro/artifacts"
	"repro/experiments"
	"repro/numbers"
	"repro/pipeline"
	"repro/site"
	"repro/stages"
)

// siteSubdir is where repro report writes the site, under the profile's
// paper directory (paper/site for the default profile).
const siteSubdir = "site"

func cmdReport() *command {
	var g globalFlags
	fs := newFlags("report", &g)
	out := nonEmpty(fs, "out", "", "write the site into this `directory`: missing, empty, or a site report wrote (default paper/site, or paper/<profile>/site)")
	return &command{
		name: "report", usage: "[--profile P] [--out DIR]",
		short: "write the reproduction as a static web site with a card for every number",
		long: `Report writes a static site (plain HTML, CSS and SVG; no server, no
script, no network) from the committed tables, figures and reproduction
report: an index with the verdicts, the claims and the numbers that differ; a
page per table and figure where every number and plotted point links to its
card; and a card per number with ours against the paper's, the verdict and its
statistics, the seeds as a strip plot, the train cells, keys, configuration
(against the default system), data digests and code revision, the paper's
line, and the repro run command that recomputes it. Seeds' records come from
the store and the ledger (repro pull fetches them). make paper runs it; the
PDF's numbers link to the cards (docs/report.md).`,
		flags: fs,
		run: func(ctx context.Context, e *env, args []string) error {
			if len(args) != 0 {
				return usageErr("report takes no arguments")
			}
			w, err := openWorkspace(e, &g)
			if err != nil {
				return err
			}
			dir := *out
			if dir == "" {
				dir = w.paperPath(siteSubdir)
			}
			// Before any work: a folder holding anything the site did not
			// write (notes, a store, a home folder) is refused and left
			// as it is.
			if err := site.Owner.Check(dir); err != nil {
				return fmt.Errorf("--out: %w", err)
			}
			start := time.Now()
			in, err := siteInput(ctx, w, dir)
			if err != nil {
				return err
			}
			st, err := site.Build(dir, in)
			if err != nil {
				return err
			}
			n, bad, err := site.CheckLinks(dir)
			if err != nil {
				return err
			}
			if len(bad) > 0 {
				return fmt.Errorf("site %s: %d broken links, first: %s", dir, len(bad), bad[0])
			}
			fmt.Fprintf(e.stdout, "site: %s/index.html: %d cards, %d files, %.1f MB, %d links checked, %.1f s\n",
				rel(w, dir), st.Cards, st.Files, float64(st.Bytes)/1e6, n, time.Since(start).Seconds())
			return nil
		},
	}
}

// siteInput gathers the typed results the site is built from: the
// committed sidecars (what the PDF shows), the reproduction report judged
// on them, the seeds' records and the default systems' configurations.
func siteInput(ctx context.Context, w *workspace, dir string) (*site.Input, error) {
	in := &site.Input{Profile: w.profile,
		Records: map[string]*site.SeedRecord{}, Defaults: map[string]site.DefaultConfig{}, FigureImages: map[string]string{}}
	if def, _, err := w.matrix.Profile(""); err == nil && w.profile != def {
		in.RunFlags = "--profile " + w.profile
	}
	for _, t := range w.tableNames() {
		sc, err := experiments.ReadTableSidecar(w.idsPath(t))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		in.Tables = append(in.Tables, sc)
	}
	for _, f := range w.figureNames() {
		sc, err := experiments.ReadFigureSidecar(w.figurePath(f, "ids.json"))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		in.Figures = append(in.Figures, sc)
		if png := w.figurePath(f, "png"); fileExists(png) {
			in.FigureImages[f] = siteRel(dir, png)
		}
	}
	in.FigureDecls = map[string]site.FigureDecl{}
	for _, f := range w.matrix.Figures {
		d := site.FigureDecl{Caption: f.Caption, Series: map[string]string{}}
		if i := slices.IndexFunc(in.Figures, func(sc *numbers.FigureSidecar) bool { return sc.Figure == f.Name }); i >= 0 {
			d.Caption = stages.FillCaption(f.Caption, in.Figures[i])
		}
		for _, p := range f.Panels {
			d.Panels = append(d.Panels, site.PanelDecl{Title: p.Title, XLabel: p.XLabel, YLabel: p.YLabel, XLog: p.XLog, Categories: p.Categories})
			for _, sr := range p.Series {
				if sr.Label != "" {
					d.Series[sr.Name] = sr.Label
				}
			}
		}
		in.FigureDecls[f.Name] = d
	}
	in.TableDecls = map[string]site.TableDecl{}
	for _, t := range w.matrix.Tables {
		d := site.TableDecl{Caption: t.Caption}
		for _, c := range t.Column {
			d.Titles = append(d.Titles, c.Title)
		}
		in.TableDecls[t.Name] = d
	}
	if len(in.Tables) == 0 && len(in.Figures) == 0 {
		return nil, fmt.Errorf("no table or figure is committed under %s: run repro run first", rel(w, w.paperPath()))
	}
	if rep, _, err := committedReport(w); err == nil {
		in.Report = rep
	} else if w.graph.Cell("reproduction") != nil {
		return nil, fmt.Errorf("reproduction report: %w", err)
	}
	recs := w.records()
	dataMemo := map[string][]string{}
	for _, cells := range siteCells(in) {
		for i, id := range cells.TrainCells {
			if i >= len(cells.Results) {
				break
			}
			k := id + " " + cells.Results[i]
			m := recs[k]
			if m == nil || in.Records[k] != nil {
				continue
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			in.Records[k] = seedRecord(w, m, dataMemo)
		}
	}
	// A card shows a configuration as its difference from the experiment
	// of its learner's default system (stages.Learner.DefaultPreset).
	for _, l := range stages.Learners() {
		learner, preset := l.Kind, l.DefaultPreset
		for _, x := range w.matrix.Experiments {
			if x.Learner != learner || x.Preset != preset {
				continue
			}
			if c := firstCell(w.graph, "train/"+x.Name+"/"); c != nil {
				if ps, err := pipeline.EncodeParams(c.Stage.Name, c.Params); err == nil {
					in.Defaults[string(learner)] = site.DefaultConfig{Name: x.Name + " (" + preset + ")", Config: ps}
				}
			}
			break
		}
	}
	return in, nil
}

// siteCells is every table and figure cell of in.
func siteCells(in *site.Input) []*numbers.AggCell {
	var out []*numbers.AggCell
	for _, t := range in.Tables {
		for i := range t.Numbers {
			out = append(out, &t.Numbers[i].AggCell)
		}
	}
	for _, f := range in.Figures {
		for _, p := range append(append([]numbers.FigurePoint{}, f.Points...), f.Lines...) {
			for _, c := range []*numbers.AggCell{p.YCell, p.XCell, p.BCell} {
				if c != nil {
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// seedRecord is what the site shows of one train record; the data
// digests upstream of it are memoised by its inputs' keys.
func seedRecord(w *workspace, m *artifacts.Manifest, memo map[string][]string) *site.SeedRecord {
	ps, _ := pipeline.ParseParamsText(m.Params)
	var ks []string
	for _, in := range m.Inputs {
		ks = append(ks, in.Key.String())
	}
	memoKey := strings.Join(ks, " ")
	data, ok := memo[memoKey]
	if !ok {
		data = dataOf(w.manifest, m.Inputs, map[artifacts.Key]bool{})
		memo[memoKey] = data
	}
	return &site.SeedRecord{Key: m.Key.String(), StageVersion: m.StageVersion, Revision: m.Provenance.Revision,
		Dirty: m.Provenance.Dirty, Host: m.Provenance.Host, WallSecs: m.Provenance.WallSecs, Config: ps, Data: data}
}

// firstCell is the graph's first cell whose ID starts with prefix.
func firstCell(g *pipeline.Graph, prefix string) *pipeline.Cell {
	for _, c := range g.Cells {
		if strings.HasPrefix(c.ID, prefix) {
			return c
		}
	}
	return nil
}

func fileExists(path string) bool { _, err := os.Stat(path); return err == nil }

// siteRel is path relative to the site's root (for an image the site
// shows from beside it), with forward slashes; "" when it has none.
func siteRel(dir, path string) string {
	r, err := filepath.Rel(dir, path)
	if err != nil {
		return ""
	}
	return filepath.ToSlash(r)
}
