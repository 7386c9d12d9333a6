package experiments

import (
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"repro/experiments/cellid"
	"repro/pipeline"
	"repro/stages"
)

// TableSpec is one [[table]] entry of pipeline.toml: the layout of one of
// the paper's tables, with every cell named by an experiment and a protocol.
//
//	[[table]]
//	name = "bpk"                          # paper/tables/bpk.tex; number IDs bpk/<experiment>/<protocol>
//	label = "tab:bpk"
//	caption = '...'                       # LaTeX, verbatim
//	size = '\small'                       # optional LaTeX before the tabular
//	header = 'BP $+$ \kwta{}'             # title of the label column
//	columns = ["sequential", "static", "single_pass"]
//	titles = ['Sequential', 'i.i.d.\ (static)', 'Seq., single pass']
//	bold = ["sequential", "single_pass"]  # columns whose best mean is bold
//	param = "bp.lr"                       # optional: a column showing this train param ...
//	param_title = "lr"                    # ... under this title
//	published = "paper/published.toml"    # the paper's values (relative to pipeline.toml)
//	[[table.row]]
//	experiment = "bpk-interleaved"        # an [[experiment]] name (a misspelt one is an error)
//	label = 'interleaved replay (unmasked)'
//	na = ["static"]                       # optional: cells that do not apply (rendered ---)
//	midrule = true                        # optional: \midrule above this row
//	reference = true                      # optional: never bold, no param (a reference row)
//	cells = {static = "bp-static"}        # optional: another experiment for one column
//	not_run = "why"                       # optional: the row cannot run yet; renders "not run: why"
//	[[table.compare]]                     # a seed-paired bootstrap CI of a difference
//	id = "rotation-seq"                   # number ID bpk/compare/rotation-seq
//	a = "bpk-interleaved-rotation"        # mean over common seeds of a - b
//	b = "bpk-interleaved"
//	protocol = "sequential"
type TableSpec struct {
	Name       string         `toml:"name"`
	Label      string         `toml:"label"`
	Caption    string         `toml:"caption"`
	Size       string         `toml:"size"`
	Header     string         `toml:"header"`
	Columns    []string       `toml:"columns"`
	Titles     []string       `toml:"titles"`
	Bold       []string       `toml:"bold"`
	Param      string         `toml:"param"`
	ParamTitle string         `toml:"param_title"`
	Published  string         `toml:"published"`
	Rows       []TableRow     `toml:"row"`
	Compare    []TableCompare `toml:"compare"`

	published *stages.Published
}

// TableRow is one row of a table.
type TableRow struct {
	Experiment string   `toml:"experiment"`
	Label      string   `toml:"label"`
	NA         []string `toml:"na"`
	Midrule    bool     `toml:"midrule"`
	Reference  bool     `toml:"reference"`
	// Cells maps a column to another experiment for that cell (BP+ER's
	// static cell is plain backprop: cells = {static = "bp-static"}).
	Cells map[string]string `toml:"cells"`
	// NotRunReason declares a row that cannot run yet (its learner
	// feature does not exist): it renders "not run" with this reason, and
	// its experiment need not be declared.
	NotRunReason string `toml:"not_run"`
}

// NotRun reports whether the row is declared not run.
func (r *TableRow) NotRun() bool { return r.NotRunReason != "" }

// TableCompare names a paired difference the paper states in its text.
type TableCompare struct {
	ID       string `toml:"id"`
	A        string `toml:"a"`
	B        string `toml:"b"`
	Protocol string `toml:"protocol"`
}

// tableNameRe is what a table name may be: it names paper/tables/<name>.tex.
var tableNameRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`).MatchString

// loadTables decodes and checks every [[table]] entry: its layout, and
// that every experiment a row, cell or comparison names exists.
func (m *Matrix) loadTables() error {
	cfg := m.cfg
	sec, ok := cfg.Section("table")
	if !ok {
		return nil
	}
	var prims []toml.Primitive
	if err := cfg.DecodeAt(sec, &prims, "table"); err != nil {
		return err
	}
	seen := map[string]bool{}
	for i, prim := range prims {
		at := fmt.Sprintf("table[%d]", i)
		t := &TableSpec{}
		if err := cfg.DecodeAt(prim, t, at); err != nil {
			return err
		}
		bad := func(key, format string, args ...any) error {
			line := cfg.KeyLine(at + "." + key)
			if line == 0 {
				line = cfg.KeyLine(at)
			}
			return cfg.ErrAt(line, fmt.Sprintf("table %s.%s", t.Name, key), format, args...)
		}
		if !tableNameRe(t.Name) {
			return bad("name", "%q: want lower-case letters, digits, - and _", t.Name)
		}
		if seen[t.Name] {
			return bad("name", "duplicate table")
		}
		seen[t.Name] = true
		if len(t.Columns) == 0 {
			return bad("columns", "missing or empty")
		}
		for _, c := range t.Columns {
			if !slices.Contains(protocols, c) {
				return bad("columns", "%q: want sequential, static or single_pass", c)
			}
		}
		if len(t.Titles) != len(t.Columns) {
			return bad("titles", "%d titles for %d columns", len(t.Titles), len(t.Columns))
		}
		for _, b := range t.Bold {
			if !slices.Contains(t.Columns, b) {
				return bad("bold", "%q is not a column", b)
			}
		}
		if len(t.Rows) == 0 {
			return bad("row", "no rows")
		}
		for j, r := range t.Rows {
			row := fmt.Sprintf("row[%d]", j)
			if r.Experiment == "" {
				return bad(row+".experiment", "missing")
			}
			if m.byName[r.Experiment] == nil && !r.NotRun() {
				return bad(row+".experiment", "no experiment %q in %s", r.Experiment, filepath.Base(cfg.Path))
			}
			for _, n := range r.NA {
				if !slices.Contains(t.Columns, n) {
					return bad(row+".na", "%q is not a column", n)
				}
			}
			for c, x := range r.Cells {
				if !slices.Contains(t.Columns, c) {
					return bad(row+".cells", "%q is not a column", c)
				}
				if m.byName[x] == nil {
					return bad(row+".cells", "no experiment %q in %s", x, filepath.Base(cfg.Path))
				}
			}
		}
		ids := map[string]bool{}
		for j, c := range t.Compare {
			cmp := fmt.Sprintf("compare[%d]", j)
			if c.ID == "" || ids[c.ID] {
				return bad(cmp+".id", "missing or duplicate")
			}
			ids[c.ID] = true
			if !slices.Contains(t.Columns, c.Protocol) {
				return bad(cmp+".protocol", "%q is not a column", c.Protocol)
			}
			if t.rowOf(c.A) < 0 || t.rowOf(c.B) < 0 {
				return bad(cmp, "a = %q and b = %q must both be rows of the table", c.A, c.B)
			}
		}
		if t.Published != "" {
			path := t.Published
			if !filepath.IsAbs(path) {
				path = filepath.Join(cfg.Dir, path)
			}
			pub, err := stages.LoadPublished(path)
			if err != nil {
				return bad("published", "%v", err)
			}
			t.published = pub
		}
		m.Tables = append(m.Tables, t)
	}
	return nil
}

func (t *TableSpec) rowOf(experiment string) int {
	for i, r := range t.Rows {
		if r.Experiment == experiment {
			return i
		}
	}
	return -1
}

// tableCells adds, for every table, an aggregate cell over the train cells
// it needs, a render cell, and one reproduction cell over all tables. It
// marks the train cells with the tables they feed. byID holds the train
// cells built so far; a row whose experiment is declared not run, not in
// this profile, or without the column's protocol renders as "not run" with
// the reason.
func (m *Matrix) tableCells(profile string, prof *Profile, byID map[string]*pipeline.Cell) ([]*pipeline.Cell, error) {
	if len(m.Tables) == 0 {
		return nil, nil
	}
	cfg := m.cfg
	var out []*pipeline.Cell
	rp := &stages.ReproductionParams{}
	var repInputs []pipeline.CellInput
	pubFiles := map[string]bool{}
	for _, t := range m.Tables {
		ap := &stages.AggregateParams{Table: t.Name, DefaultSeeds: len(prof.Seeds), Rows: make([]string, len(t.Rows)), Protocols: t.Columns,
			Resamples: stages.BootstrapResamples, BootstrapSeed: stages.BootstrapSeed}
		var inputs []pipeline.CellInput
		render := &stages.RenderParams{Table: t.Name, Label: t.Label, Caption: t.Caption, Size: t.Size, Header: t.Header,
			Titles: t.Titles, Bold: t.Bold, ParamTitle: t.ParamTitle, Stamp: prof.Stamp, Profile: profile}
		for r, row := range t.Rows {
			ap.Rows[r] = row.Experiment
			render.Labels = append(render.Labels, row.Label)
			render.Midrule = append(render.Midrule, row.Midrule)
			render.Reference = append(render.Reference, row.Reference)
			paramValue := ""
			for c, protocol := range t.Columns {
				name := row.Experiment
				if x, ok := row.Cells[protocol]; ok {
					name = x
				}
				e := m.byName[name]
				status, seeds, prefix := "run", "", ""
				switch {
				case slices.Contains(row.NA, protocol):
					status = "n/a"
				case row.NotRun():
					status = "not run: " + row.NotRunReason
				case !e.inProfile(profile):
					status = fmt.Sprintf("not run: experiment %s is not in profile %s", name, profile)
				case !slices.Contains(e.Protocols, protocol):
					status = fmt.Sprintf("not run: experiment %s has no protocol %s", name, protocol)
				}
				if status == "run" {
					prefix = cellid.Train{Experiment: name, Protocol: protocol, Eval: cellid.EvalOf(e.splits(prof)[0])}.Prefix()
					var parts []string
					for s, seed := range e.seeds(prof) {
						parts = append(parts, strconv.FormatInt(seed, 10))
						id := cellid.WithSeed(prefix, seed)
						tc := byID[id]
						if tc == nil {
							return nil, fmt.Errorf("%s: table %s: row %s: no cell %s", cfg.Path, t.Name, name, id)
						}
						if !slices.Contains(tc.Tables, t.Name) {
							tc.Tables = append(tc.Tables, t.Name)
						}
						inputs = append(inputs, pipeline.CellInput{Name: cellid.Input{Row: r, Col: c, Seed: s}.String(), Cell: tc})
						if t.Param != "" && !row.Reference && paramValue == "" {
							v, err := paramOf(tc, t.Param)
							if err != nil {
								return nil, fmt.Errorf("%s: table %s: param: %w", cfg.Path, t.Name, err)
							}
							paramValue = v
						}
					}
					seeds = strings.Join(parts, " ")
				}
				ap.Status = append(ap.Status, status)
				ap.Seeds = append(ap.Seeds, seeds)
				ap.Cells = append(ap.Cells, prefix)
			}
			render.Params = append(render.Params, paramValue)
		}
		for _, c := range t.Compare {
			ap.CompareIDs = append(ap.CompareIDs, c.ID)
			ap.CompareA = append(ap.CompareA, c.A)
			ap.CompareB = append(ap.CompareB, c.B)
			ap.CompareProtocol = append(ap.CompareProtocol, c.Protocol)
		}
		agg := &pipeline.Cell{ID: cellid.Aggregate(t.Name), Stage: stages.Aggregate, Params: ap, Inputs: inputs, Tables: []string{t.Name}}
		rend := &pipeline.Cell{ID: cellid.Render(t.Name), Stage: stages.Render, Params: render,
			Inputs: []pipeline.CellInput{{Name: "aggregate", Cell: agg}}, Tables: []string{t.Name}}
		out = append(out, agg, rend)
		repInputs = append(repInputs, pipeline.CellInput{Name: t.Name, Cell: agg})
		rp.Tables = append(rp.Tables, t.Name)
		if t.published != nil && !pubFiles[t.Published] {
			pubFiles[t.Published] = true
			rp.AddPublished(t.published)
		}
	}
	rp.Stamp, rp.Profile = prof.Stamp, profile
	rep := &pipeline.Cell{ID: cellid.Reproduction, Stage: stages.Reproduction, Params: rp, Inputs: repInputs, Tables: rp.Tables}
	return append(out, rep), nil
}

// paramOf returns a train cell's resolved param (dotted name below "train",
// e.g. "bp.lr") as LaTeX.
func paramOf(c *pipeline.Cell, name string) (string, error) {
	ps, err := pipeline.EncodeParams(c.Stage.Name, c.Params)
	if err != nil {
		return "", err
	}
	for _, p := range ps {
		if p.Name == c.Stage.Name+"."+name {
			if f, err := strconv.ParseFloat(p.Value, 64); err == nil {
				return latexNumber(f), nil
			}
			return strings.Trim(p.Value, `"`), nil
		}
	}
	return "", fmt.Errorf("cell %s has no param %s", c.ID, name)
}

// latexNumber writes a float as the paper does: 3e-05 as $3{\cdot}10^{-5}$,
// 1e-4 as $10^{-4}$, 0.25 as $0.25$.
func latexNumber(f float64) string {
	if f == 0 {
		return "$0$"
	}
	e := int(math.Floor(math.Log10(math.Abs(f))))
	if e >= -2 && e <= 3 {
		return "$" + strconv.FormatFloat(f, 'g', -1, 64) + "$"
	}
	m := f / math.Pow(10, float64(e))
	ms := strconv.FormatFloat(m, 'g', 6, 64)
	if ms == "1" {
		return fmt.Sprintf("$10^{%d}$", e)
	}
	return fmt.Sprintf("$%s{\\cdot}10^{%d}$", ms, e)
}
