package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"repro/artifacts"
	"repro/cellid"
	"repro/judge"
	"repro/numbers"
	"repro/pipeline"
	"repro/stages"
)

// The rendered files in the work tree, relative to pipeline.toml's
// directory: one .tex and one .ids.json sidecar per table, and the
// reproduction report.
const (
	paperDir       = "paper"
	tablesSubdir   = "tables"
	figuresSubdir  = "figures"
	reproductionTo = "reproduction.tex"
	// disputedTo is ours for the disputed rows (aggregate/disputed's
	// record), so that the report rebuilt from the committed files has
	// their table too.
	disputedTo = "disputed.json"
	mainTeX    = "main.tex"
)

// paperPath is a rendered file's path. The default profile's files go to
// paper/ (what main.tex inputs and what is committed); any other profile's
// to paper/<profile>/, so that `make smoke` never overwrites the paper's
// tables with stamped smoke output.
func (w *workspace) paperPath(elem ...string) string {
	base := []string{w.cfg.Dir, paperDir}
	if w.profile != w.cfg.Settings.DefaultProfile {
		base = append(base, w.profile)
	}
	return filepath.Join(append(base, elem...)...)
}

// checkUnderPaper returns an error unless path lies inside the work tree's
// paper/ directory: a profile or table name such as "../../x" must never make
// a run write elsewhere, whatever the config's validation let through.
func (w *workspace) checkUnderPaper(path string) error {
	root := filepath.Join(w.cfg.Dir, paperDir)
	r, err := filepath.Rel(root, filepath.Clean(path))
	if err != nil || r == "." || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) || filepath.IsAbs(r) {
		return fmt.Errorf("profile %q: output path %s is outside %s; profile and table names must not leave it", w.profile, path, root)
	}
	return nil
}

// checkOutputs checks every path materialise would write.
func (w *workspace) checkOutputs() error {
	paths := []string{w.paperPath(reproductionTo), w.paperPath(disputedTo)}
	for _, t := range w.tableNames() {
		paths = append(paths, w.texPath(t), w.idsPath(t))
	}
	for _, f := range w.figureNames() {
		for _, o := range figureFiles {
			paths = append(paths, w.figurePath(f, o.ext))
		}
	}
	for _, p := range paths {
		if err := w.checkUnderPaper(p); err != nil {
			return err
		}
	}
	return nil
}

func (w *workspace) texPath(table string) string {
	return w.paperPath(tablesSubdir, table+".tex")
}

func (w *workspace) idsPath(table string) string {
	return w.paperPath(tablesSubdir, table+".ids.json")
}

// figureFiles are a figure cell's outputs and the extensions of the files
// they are copied to.
var figureFiles = []struct{ output, ext string }{{"pdf", "pdf"}, {"png", "png"}, {"tex", "tex"}, {"ids", "ids.json"}}

// figurePath is paper/figures/<name>.<ext> (ext pdf, png or ids.json).
func (w *workspace) figurePath(name, ext string) string {
	return w.paperPath(figuresSubdir, name+"."+ext)
}

// figureNames lists the figures of the graph, in order.
func (w *workspace) figureNames() []string {
	var out []string
	for _, c := range w.graph.Cells {
		if f, ok := cellid.FigureOf(c.ID); ok && c.Stage.Name == stages.Figure.Name {
			out = append(out, f)
		}
	}
	return out
}

// currentFigure returns the sidecar the store holds for a figure under the
// current config, or ok false with the reason it is not computed.
func currentFigure(ctx context.Context, w *workspace, p *pipeline.Plan, name string) (*numbers.FigureSidecar, bool, string, error) {
	return storedJSON[numbers.FigureSidecar](ctx, w, p, cellid.Figure(name), "ids")
}

// tableNames lists the tables of the graph (its render cells), in order.
func (w *workspace) tableNames() []string {
	var out []string
	for _, c := range w.graph.Cells {
		if c.Stage.Name == stages.Render.Name {
			t, _ := cellid.TableOf(c.ID)
			out = append(out, t)
		}
	}
	return out
}

// cellOutput reads one output of a planned cell that is cached or in a
// remote. It returns ok false (and the plan's reasons) when the cell would
// run.
func cellOutput(ctx context.Context, w *workspace, p *pipeline.Plan, id, output string) (data []byte, ok bool, why string, err error) {
	pc := p.Cell(id)
	if pc == nil {
		return nil, false, "no cell " + id + " in profile " + w.profile, nil
	}
	if pc.State == pipeline.Stale {
		return nil, false, id + " would run: " + pipeline.JoinReasons(pc.Reasons), nil
	}
	d, found := pc.Manifest.Output(output)
	if !found {
		return nil, false, "", fmt.Errorf("cell %s has no output %s", id, output)
	}
	b, err := w.readOutput(pc, d)
	if err != nil {
		return nil, false, "", fmt.Errorf("cell %s: output %s: %w", id, output, err)
	}
	return b, true, "", nil
}

// currentSidecar returns the sidecar the store holds for a table under the
// current config, or ok false with the reason it is not computed.
func currentSidecar(ctx context.Context, w *workspace, p *pipeline.Plan, table string) (*numbers.Sidecar, bool, string, error) {
	return storedJSON[numbers.Sidecar](ctx, w, p, cellid.Render(table), "ids")
}

// storedJSON decodes a JSON output of a cached planned cell, or returns ok
// false with the reason the cell would run.
func storedJSON[T any](ctx context.Context, w *workspace, p *pipeline.Plan, id, output string) (*T, bool, string, error) {
	b, ok, why, err := cellOutput(ctx, w, p, id, output)
	if !ok || err != nil {
		return nil, ok, why, err
	}
	v := new(T)
	if err := json.Unmarshal(b, v); err != nil {
		return nil, false, "", fmt.Errorf("%s: %s: %w", id, output, err)
	}
	return v, true, "", nil
}

// writeAtomic writes data to path the way the store writes its files
// (temporary file, fsync, rename, fsync of the directory).
func writeAtomic(path string, data []byte) error { return artifacts.WriteFile(path, data, 0o644) }

// materialise copies every rendered output that the store holds for the
// current config into paper/; it returns what it wrote and what it could
// not (with the plan's reasons).
func materialise(ctx context.Context, w *workspace, g *pipeline.Graph) (wrote, missing []string, err error) {
	type file struct{ cell, output, path string }
	var files []file
	for _, t := range w.tableNames() {
		files = append(files, file{cellid.Render(t), "tex", w.texPath(t)}, file{cellid.Render(t), "ids", w.idsPath(t)})
	}
	for _, f := range w.figureNames() {
		for _, o := range figureFiles {
			files = append(files, file{cellid.Figure(f), o.output, w.figurePath(f, o.ext)})
		}
	}
	if g.Cell(cellid.Reproduction) != nil {
		files = append(files, file{cellid.Reproduction, "tex", w.paperPath(reproductionTo)})
	}
	if g.Cell(cellid.Aggregate(judge.DisputedTable)) != nil {
		files = append(files, file{cellid.Aggregate(judge.DisputedTable), "aggregate", w.paperPath(disputedTo)})
	}
	if len(files) == 0 {
		return nil, nil, nil // a profile without tables or figures: nothing to plan
	}
	p, err := pipeline.MakePlanWith(w.store, g, w.profile, w.remotes)
	if err != nil {
		return nil, nil, err
	}
	if err := w.checkOutputs(); err != nil {
		return nil, nil, err
	}
	for _, f := range files {
		b, ok, why, err := cellOutput(ctx, w, p, f.cell, f.output)
		if err != nil {
			return wrote, missing, err
		}
		if !ok {
			missing = append(missing, fmt.Sprintf("%s (%s)", rel(w, f.path), why))
			continue
		}
		if old, err := os.ReadFile(f.path); err == nil && string(old) == string(b) {
			continue
		}
		if err := writeAtomic(f.path, b); err != nil {
			return wrote, missing, err
		}
		wrote = append(wrote, rel(w, f.path))
	}
	// paper/main.tex follows the table declarations (default profile
	// only: the other profiles' directories have no main.tex).
	if w.profile == w.cfg.Settings.DefaultProfile && len(w.tableNames()) > 0 {
		path, b := w.paperPath(mainTeX), []byte(w.matrix.MainTeX())
		if old, err := os.ReadFile(path); err != nil || string(old) != string(b) {
			if err := writeAtomic(path, b); err != nil {
				return wrote, missing, err
			}
			wrote = append(wrote, rel(w, path))
		}
	}
	return wrote, missing, nil
}

func rel(w *workspace, path string) string {
	if r, err := filepath.Rel(w.cfg.Dir, path); err == nil {
		return r
	}
	return path
}

// trainManifest returns the manifest of a train cell that is cached or in a
// remote, or nil.
func trainManifest(p *pipeline.Plan, id string) *artifacts.Manifest {
	if pc := p.Cell(id); pc != nil && pc.State != pipeline.Stale {
		return pc.Manifest
	}
	return nil
}

// readFileOr returns a file's content, or "" if it does not exist.
func readFileOr(path string) (string, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "", nil
	}
	return string(b), err
}
