package stages

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"repro/pipeline"
)

// The paper's tables are three stages on top of the train cells:
//
// aggregate/<table> (Aggregate): inputs "rXXcYsZ", the train cell of seed
// index Z in row XX, column Y; output "aggregate", canonical JSON
// (AggregateRecord): per table cell the seeds, their final accuracy x100,
// mean and sample s.d., forgetting and replay counts, the missing seeds and
// the result digests; and the seed-paired bootstrap intervals of the
// differences the paper states.
//
// render/<table> (Render): input "aggregate"; outputs "tex" (the booktabs
// table, one comment per row naming its number IDs) and "ids" (JSON
// Sidecar: every number with its row, column and provenance). `repro run`
// copies them to paper/tables/<table>.tex and .ids.json.
//
// reproduction (Reproduction): one input per table, named by the table;
// outputs "tex" (paper/reproduction.tex) and "report" (JSON ReproReport):
// every number against the paper's published value (paper/published.toml).

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
//	experiment = "bpk-interleaved"        # an [[experiment]] name (absent: the row renders "not run")
//	label = 'interleaved replay (unmasked)'
//	na = ["static"]                       # optional: cells that do not apply (rendered ---)
//	midrule = true                        # optional: \midrule above this row
//	reference = true                      # optional: never bold, no param (a reference row)
//	cells = {static = "bp-static"}        # optional: another experiment for one column
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
}

// TableCompare names a paired difference the paper states in its text.
type TableCompare struct {
	ID       string `toml:"id"`
	A        string `toml:"a"`
	B        string `toml:"b"`
	Protocol string `toml:"protocol"`
}

// Bootstrap settings of every comparison: the 10,000 resamples and a
// fixed seed, so the intervals are reproducible bit for bit.
const (
	bootstrapResamples = 10000
	bootstrapSeed      = 20260101
)

var tableNameRe = func(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// decodeTables decodes and checks every [[table]] entry.
func decodeTables(cfg *pipeline.Config) ([]*TableSpec, error) {
	var out []*TableSpec
	seen := map[string]bool{}
	line := func(i int) int {
		hs := tableHeaderLines(cfg)
		if i < len(hs) {
			return hs[i]
		}
		return 0
	}
	for i, prim := range cfg.Tables {
		t := &TableSpec{}
		if err := cfg.Decode(prim, t); err != nil {
			return nil, err
		}
		bad := func(key, format string, args ...any) error {
			return &pipeline.ConfigError{Path: cfg.Path, Line: line(i), Key: fmt.Sprintf("table %s.%s", t.Name, key), Msg: fmt.Sprintf(format, args...)}
		}
		if !tableNameRe(t.Name) {
			return nil, bad("name", "%q: want lower-case letters, digits, - and _", t.Name)
		}
		if seen[t.Name] {
			return nil, bad("name", "duplicate table")
		}
		seen[t.Name] = true
		if len(t.Columns) == 0 {
			return nil, bad("columns", "missing or empty")
		}
		for _, c := range t.Columns {
			switch c {
			case "sequential", "static", "single_pass":
			default:
				return nil, bad("columns", "%q: want sequential, static or single_pass", c)
			}
		}
		if len(t.Titles) != len(t.Columns) {
			return nil, bad("titles", "%d titles for %d columns", len(t.Titles), len(t.Columns))
		}
		for _, b := range t.Bold {
			if !slices.Contains(t.Columns, b) {
				return nil, bad("bold", "%q is not a column", b)
			}
		}
		if len(t.Rows) == 0 {
			return nil, bad("row", "no rows")
		}
		for j, r := range t.Rows {
			if r.Experiment == "" {
				return nil, bad(fmt.Sprintf("row[%d].experiment", j), "missing")
			}
			for _, n := range r.NA {
				if !slices.Contains(t.Columns, n) {
					return nil, bad(fmt.Sprintf("row[%d].na", j), "%q is not a column", n)
				}
			}
			for c := range r.Cells {
				if !slices.Contains(t.Columns, c) {
					return nil, bad(fmt.Sprintf("row[%d].cells", j), "%q is not a column", c)
				}
			}
		}
		ids := map[string]bool{}
		for j, c := range t.Compare {
			if c.ID == "" || ids[c.ID] {
				return nil, bad(fmt.Sprintf("compare[%d].id", j), "missing or duplicate")
			}
			ids[c.ID] = true
			if !slices.Contains(t.Columns, c.Protocol) {
				return nil, bad(fmt.Sprintf("compare[%d].protocol", j), "%q is not a column", c.Protocol)
			}
			if t.rowOf(c.A) < 0 || t.rowOf(c.B) < 0 {
				return nil, bad(fmt.Sprintf("compare[%d]", j), "a = %q and b = %q must both be rows of the table", c.A, c.B)
			}
		}
		out = append(out, t)
	}
	return out, nil
}

func (t *TableSpec) rowOf(experiment string) int {
	for i, r := range t.Rows {
		if r.Experiment == experiment {
			return i
		}
	}
	return -1
}

func tableHeaderLines(cfg *pipeline.Config) []int {
	b, err := os.ReadFile(cfg.Path)
	if err != nil {
		return nil
	}
	var out []int
	for i, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) == "[[table]]" {
			out = append(out, i+1)
		}
	}
	return out
}

// inputName names the input of an aggregate cell that is seed index s of
// row r, column c.
func inputName(r, c, s int) string { return fmt.Sprintf("r%02dc%ds%d", r, c, s) }

// tableCells adds, for every [[table]], an aggregate cell over the train
// cells it needs, a render cell, and one reproduction cell over all tables.
// It marks the train cells with the tables they feed. cells are the cells
// built so far (paperCells); a row whose experiment is not configured, or
// not in this profile, renders as "not run" and is listed as such.
func tableCells(cfg *pipeline.Config, profile string, cells []*pipeline.Cell) ([]*pipeline.Cell, error) {
	specs, err := decodeTables(cfg)
	if err != nil || len(specs) == 0 {
		return nil, err
	}
	_, prof, err := cfg.Profile(profile)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*pipeline.Cell, len(cells))
	for _, c := range cells {
		byID[c.ID] = c
	}
	exps := map[string]*pipeline.Experiment{}
	for _, e := range cfg.Experiments {
		exps[e.Name] = e
	}
	var out []*pipeline.Cell
	rp := &ReproductionParams{}
	var repInputs []pipeline.CellInput
	pubFiles := map[string]bool{}
	for _, t := range specs {
		ap := &AggregateParams{Table: t.Name, DefaultSeeds: len(prof.Seeds), Rows: make([]string, len(t.Rows)), Protocols: t.Columns,
			Resamples: bootstrapResamples, BootstrapSeed: bootstrapSeed}
		var inputs []pipeline.CellInput
		render := &RenderParams{Table: t.Name, Label: t.Label, Caption: t.Caption, Size: t.Size, Header: t.Header,
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
				e := exps[name]
				inProfile := e != nil && (len(e.Profiles) == 0 || slices.Contains(e.Profiles, profile))
				status, seeds, prefix := "run", "", ""
				switch {
				case slices.Contains(row.NA, protocol):
					status = "n/a"
				case e == nil:
					status = fmt.Sprintf("not run: no experiment %q in %s", name, filepath.Base(cfg.Path))
				case !inProfile:
					status = fmt.Sprintf("not run: experiment %s is not in profile %s", name, profile)
				case !slices.Contains(e.Protocols, protocol):
					status = fmt.Sprintf("not run: experiment %s has no protocol %s", name, protocol)
				}
				if status == "run" {
					ss := prof.Seeds
					if e.MaxSeeds > 0 && e.MaxSeeds < len(ss) {
						ss = ss[:e.MaxSeeds]
					}
					eval := fmt.Sprintf("split%d", prof.SplitSeeds[0])
					if e.Eval == "test" {
						eval = "test"
					}
					prefix = fmt.Sprintf("train/%s/%s/%s", name, protocol, eval)
					var parts []string
					for s, seed := range ss {
						parts = append(parts, strconv.FormatInt(seed, 10))
						id := fmt.Sprintf("%s/seed%d", prefix, seed)
						tc := byID[id]
						if tc == nil {
							return nil, fmt.Errorf("%s: table %s: row %s: no cell %s", cfg.Path, t.Name, name, id)
						}
						if !slices.Contains(tc.Tables, t.Name) {
							tc.Tables = append(tc.Tables, t.Name)
						}
						inputs = append(inputs, pipeline.CellInput{Name: inputName(r, c, s), Cell: tc})
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
		agg := &pipeline.Cell{ID: "aggregate/" + t.Name, Stage: Aggregate, Params: ap, Inputs: inputs, Tables: []string{t.Name}}
		rend := &pipeline.Cell{ID: "render/" + t.Name, Stage: Render, Params: render,
			Inputs: []pipeline.CellInput{{Name: "aggregate", Cell: agg}}, Tables: []string{t.Name}}
		out = append(out, agg, rend)
		repInputs = append(repInputs, pipeline.CellInput{Name: t.Name, Cell: agg})
		rp.Tables = append(rp.Tables, t.Name)
		if t.Published != "" && !pubFiles[t.Published] {
			pubFiles[t.Published] = true
			path := t.Published
			if !filepath.IsAbs(path) {
				path = filepath.Join(cfg.Dir, path)
			}
			pub, err := LoadPublished(path)
			if err != nil {
				return nil, fmt.Errorf("%s: table %s.published: %w", cfg.Path, t.Name, err)
			}
			rp.addPublished(pub)
		}
	}
	rp.Stamp, rp.Profile = prof.Stamp, profile
	rep := &pipeline.Cell{ID: "reproduction", Stage: Reproduction, Params: rp, Inputs: repInputs, Tables: rp.Tables}
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

// Published is the paper's published values (paper/published.toml), each
// cited to its table and row.
type Published struct {
	Value []PublishedValue `toml:"value"`
}

// PublishedValue is one published number: a table cell (mean ± sd over n
// seeds) or a stated paired difference (mean [lo, hi]).
type PublishedValue struct {
	ID   string   `toml:"id"`
	Mean float64  `toml:"mean"`
	SD   *float64 `toml:"sd"`
	N    int      `toml:"n"`
	Lo   *float64 `toml:"lo"`
	Hi   *float64 `toml:"hi"`
	Cite string   `toml:"cite"`
}

// LoadPublished reads and checks a published-values file.
func LoadPublished(path string) (*Published, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParsePublished(path, string(b))
}

// ParsePublished decodes and checks the content src of a published-values
// file (path names it in errors): known keys only, unique IDs, a cite for
// every value, lo and hi together.
func ParsePublished(path, src string) (*Published, error) {
	p := &Published{}
	md, err := toml.Decode(src, p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if u := md.Undecoded(); len(u) > 0 {
		return nil, fmt.Errorf("%s: unknown key %s", path, u[0])
	}
	seen := map[string]bool{}
	for i, v := range p.Value {
		if v.ID == "" || seen[v.ID] {
			return nil, fmt.Errorf("%s: value[%d]: id %q missing or duplicate", path, i, v.ID)
		}
		seen[v.ID] = true
		if v.Cite == "" {
			return nil, fmt.Errorf("%s: value %s: no cite", path, v.ID)
		}
		for _, x := range []*float64{&v.Mean, v.SD, v.Lo, v.Hi} {
			if x != nil && (math.IsNaN(*x) || math.IsInf(*x, 0)) {
				return nil, fmt.Errorf("%s: value %s: not a finite number", path, v.ID)
			}
		}
		if (v.Lo == nil) != (v.Hi == nil) {
			return nil, fmt.Errorf("%s: value %s: lo and hi go together", path, v.ID)
		}
	}
	return p, nil
}

func (rp *ReproductionParams) addPublished(p *Published) {
	for _, v := range p.Value {
		sd, lo, hi, ci := -1.0, 0.0, 0.0, false
		if v.SD != nil {
			sd = *v.SD
		}
		if v.Lo != nil {
			lo, hi, ci = *v.Lo, *v.Hi, true
		}
		rp.IDs = append(rp.IDs, v.ID)
		rp.Means = append(rp.Means, v.Mean)
		rp.SDs = append(rp.SDs, sd)
		rp.Ns = append(rp.Ns, v.N)
		rp.CI = append(rp.CI, ci)
		rp.Los = append(rp.Los, lo)
		rp.His = append(rp.His, hi)
		rp.Cites = append(rp.Cites, v.Cite)
	}
}
