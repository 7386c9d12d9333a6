package experiments

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"repro/cellid"
	"repro/judge"
	"repro/numbers"
	"repro/pipeline"
	"repro/published"
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
//	a = "bpk-interleaved-rotation"        # mean over common seeds of a - b (row IDs)
//	b = "bpk-interleaved"
//	protocol = "sequential"               # a column ID
//
// The general form declares its columns instead of columns/titles. A cell
// selects an experiment (the row's; a column's, for a column group; or the
// row's cells entry for that column), a protocol, an evaluation set and a
// metric, each from its row or its column (not both):
//
//	[[table.column]]
//	id = "dev"                            # number IDs <table>/<row id>/<column id>
//	title = 'development set'
//	experiment = "controller"             # optional: a column group's experiment
//	protocol = "static"                   # optional (default sequential)
//	eval = "test"                         # optional: test (the development set), split<seed>,
//	                                      #   or heldout (the profile's first split, the default)
//	metric = "rho[0]"                     # optional (default acc; stages/metrics.go)
//	decimals = 2                          # optional (default 1)
//	max_seeds = 3                         # optional: at most the profile's first 3 seeds
//	relative_to = "dense-bp"              # optional: each cell over this row's mean in the column
//	[[table.row]]
//	id = "full-static"                    # optional (default: the experiment); unique
//	experiment = "full"
//	protocol = "static"                   # eval, metric, decimals, max_seeds likewise
//
// A train cell a table selects that its experiment does not run by itself
// (another split, the development set) is added to the graph. A matrix
// table (kind = "matrix") is the accuracy matrix of one experiment: row i
// after task i, column j accuracy on task j (mean over seeds, element-wise),
// blank above the diagonal, and the forgetting F beside the last row:
//
//	[[table]]
//	kind = "matrix"
//	experiment = "full"
//	protocol = "sequential"               # and eval, max_seeds, as a column's
//	tasks = 5
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
	Column     []TableColumn  `toml:"column"`
	// A matrix table (Kind "matrix") of one experiment.
	Kind       string `toml:"kind"`
	Experiment string `toml:"experiment"`
	Protocol   string `toml:"protocol"`
	Eval       string `toml:"eval"`
	MaxSeeds   int    `toml:"max_seeds"`
	Tasks      int    `toml:"tasks"`

	published *published.File
	// general is true for tables declared with [[table.column]] or as a
	// matrix: their aggregate and render cells carry per-cell metrics and
	// decimals (the older form's keys stay as they were).
	general bool
}

// TableColumn is one column of a table in the general form.
type TableColumn struct {
	ID    string `toml:"id"`
	Title string `toml:"title"`
	// RelativeTo names a row (its id) whose value in this column divides
	// every cell's: syn-ops as a fraction of the dense MLP's row.
	RelativeTo string `toml:"relative_to"`
	Selection
}

// Selection is what a row or a column contributes to its cells.
type Selection struct {
	Experiment string `toml:"experiment"`
	Protocol   string `toml:"protocol"`
	Eval       string `toml:"eval"`
	Metric     string `toml:"metric"`
	Decimals   *int   `toml:"decimals"` // nil: 1 (0 prints integers)
	MaxSeeds   int    `toml:"max_seeds"`
	// Inference goes with an energy metric (stages.IsEnergyMetric): its
	// cell reads the experiment's energy cell ([spike]) for spiking
	// inference at T_s ("spike8") or the rate network priced densely
	// ("dense") or by its synaptic operations ("event").
	Inference string `toml:"inference"`
}

// TableRow is one row of a table.
type TableRow struct {
	ID    string `toml:"id"`
	Label string `toml:"label"`
	Selection
	NA        []string `toml:"na"`
	Midrule   bool     `toml:"midrule"`
	Reference bool     `toml:"reference"`
	// Cells maps a column to another experiment for that cell (BP+ER's
	// static cell is plain backprop: cells = {static = "bp-static"}).
	Cells map[string]string `toml:"cells"`
	// Settle names the columns (their ids) whose max_seeds the row lifts:
	// there its cells run the experiment's settle seeds (the experiment
	// must be marked settle), because the verdict's estimate says that many
	// of our seeds would settle the number the row prints there.
	Settle []string `toml:"settle"`
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

// loadTables decodes and checks every [[table]] entry (loadDecls,
// checkTable).
func (m *Matrix) loadTables() (err error) {
	m.Tables, err = loadDecls(m.cfg, "table", func(t *TableSpec) string { return t.Name }, m.checkTable)
	return err
}

// checkTable checks one table: its form (normalise), columns, rows and
// comparisons, and reads its published values. Every experiment a row,
// cell or comparison names must exist.
func (m *Matrix) checkTable(t *TableSpec) error {
	if err := m.normalise(t); err != nil {
		return err
	}
	if len(t.Columns) == 0 {
		return badField("columns", "missing or empty")
	}
	for _, c := range t.Columns {
		if !t.general && !slices.Contains(protocols, c) {
			return badField("columns", "%q: want %s", c, oneOf(protocols))
		}
	}
	if len(t.Titles) != len(t.Columns) {
		return badField("titles", "%d titles for %d columns", len(t.Titles), len(t.Columns))
	}
	for _, b := range t.Bold {
		if !slices.Contains(t.Columns, b) {
			return badField("bold", "%q is not a column", b)
		}
	}
	if len(t.Rows) == 0 {
		return badField("row", "no rows")
	}
	for j := range t.Rows {
		if err := m.checkRow(t, &t.Rows[j]); err != nil {
			return under(fmt.Sprintf("row[%d]", j), err)
		}
	}
	if err := m.checkRecorded(t); err != nil {
		return err
	}
	ids := map[string]bool{} // comparison IDs are unique in a table
	for j := range t.Compare {
		if err := checkCompare(t, &t.Compare[j], ids); err != nil {
			return under(fmt.Sprintf("compare[%d]", j), err)
		}
	}
	return m.loadPublished(t)
}

// checkRecorded refuses a cell of table t whose metric its experiment's
// learner never records (stages.Learner.Metrics): it would be "missing" in
// every profile.
func (m *Matrix) checkRecorded(t *TableSpec) error {
	for r := range t.Rows {
		for c := range t.Columns {
			sel := t.cellSelection(r, c)
			e := m.byName[sel.Experiment]
			if e == nil || sel.Metric == "" || stages.IsEnergyMetric(sel.Metric) || slices.Contains(t.Rows[r].NA, t.Columns[c]) {
				continue
			}
			if l, ok := stages.LearnerOf(e.Learner); ok && !l.Records(sel.Metric) {
				return under(fmt.Sprintf("row[%d]", r), badField("metric", "%q: the %s learner of experiment %s does not record it (column %s)", sel.Metric, l.Kind, e.Name, t.Columns[c]))
			}
		}
	}
	return nil
}

// checkRow checks one row of table t: its selection, the experiments it and
// its cells entries name, and the columns its na and cells entries name.
func (m *Matrix) checkRow(t *TableSpec, r *TableRow) error {
	if r.Experiment == "" && !t.general {
		return badField("experiment", "missing")
	}
	if err := checkSelection(t, &r.Selection); err != nil {
		return err
	}
	if r.Experiment != "" && m.byName[r.Experiment] == nil && !r.NotRun() {
		return badField("experiment", "no experiment %q in %s", r.Experiment, filepath.Base(m.cfg.Path))
	}
	for _, n := range r.NA {
		if !slices.Contains(t.Columns, n) {
			return badField("na", "%q is not a column", n)
		}
	}
	for _, n := range r.Settle {
		switch e := m.byName[r.Experiment]; {
		case !t.general || !slices.Contains(t.Columns, n):
			return badField("settle", "%q is not a [[table.column]] id", n)
		case e == nil || !e.Settle:
			return badField("settle", "experiment %q is not marked settle = true", r.Experiment)
		}
	}
	for _, c := range slices.Sorted(maps.Keys(r.Cells)) {
		switch x := r.Cells[c]; {
		case !slices.Contains(t.Columns, c):
			return badField("cells", "%q is not a column", c)
		case m.byName[x] == nil:
			return badField("cells", "no experiment %q in %s", x, filepath.Base(m.cfg.Path))
		}
	}
	return nil
}

// checkCompare checks one comparison of table t (ids holds the IDs of
// those before it).
func checkCompare(t *TableSpec, c *TableCompare, ids map[string]bool) error {
	if c.ID == "" || ids[c.ID] {
		return badField("id", "missing or duplicate")
	}
	ids[c.ID] = true
	switch {
	case !slices.Contains(t.Columns, c.Protocol):
		return badField("protocol", "%q is not a column", c.Protocol)
	case t.rowOf(c.A) < 0 || t.rowOf(c.B) < 0:
		return badField("", "a = %q and b = %q must both be rows of the table", c.A, c.B)
	}
	return nil
}

// loadPublished reads table t's published values (a path relative to
// pipeline.toml).
func (m *Matrix) loadPublished(t *TableSpec) error {
	if t.Published == "" {
		return nil
	}
	path := t.Published
	if !filepath.IsAbs(path) {
		path = filepath.Join(m.cfg.Dir, path)
	}
	b, err := pipeline.ReadFileLimit(path, pipeline.MaxConfigBytes)
	if err != nil {
		return badField("published", "%v", err)
	}
	pub, err := published.Parse(path, string(b))
	if err != nil {
		return badField("published", "%v", err)
	}
	t.published = pub
	return nil
}

// rowOf is the index of the row with an ID, or -1.
func (t *TableSpec) rowOf(id string) int {
	for i := range t.Rows {
		if t.Rows[i].rowID() == id {
			return i
		}
	}
	return -1
}

// rowID is a row's ID in its numbers' IDs: its id, else its experiment.
func (r *TableRow) rowID() string { return cmp.Or(r.ID, r.Experiment) }

// tableKinds are TableSpec.Kind's values besides "" (the default form).
var tableKinds = []string{"matrix"}

// normalise turns the general form (columns declared as [[table.column]],
// or a matrix) into columns, titles and rows the rest of the checks and
// the wiring share, and checks what only that form has: its columns, row
// IDs and what a row and a column both select.
func (m *Matrix) normalise(t *TableSpec) error {
	switch {
	case t.Kind == "matrix":
		if err := m.expandMatrix(t); err != nil {
			return err
		}
	case t.Kind != "":
		return badField("kind", "%q: want %s (or nothing)", t.Kind, oneOf(tableKinds))
	case t.Experiment != "" || t.Protocol != "" || t.Eval != "" || t.Tasks != 0 || t.MaxSeeds != 0:
		return badField("experiment", "experiment, protocol, eval, tasks and max_seeds belong to a matrix table (kind = \"matrix\") or to its rows and columns")
	case len(t.Column) == 0:
		return nil
	case len(t.Columns) > 0 || len(t.Titles) > 0:
		return badField("columns", "declare columns either as columns and titles or as [[table.column]], not both")
	}
	t.general = true
	for j := range t.Column {
		c := &t.Column[j]
		if err := m.checkColumn(t, c); err != nil {
			return under(fmt.Sprintf("column[%d]", j), err)
		}
		t.Columns = append(t.Columns, c.ID)
		t.Titles = append(t.Titles, c.Title)
	}
	ids := map[string]bool{}
	for j := range t.Rows {
		if err := checkGeneralRow(t, &t.Rows[j], ids); err != nil {
			return under(fmt.Sprintf("row[%d]", j), err)
		}
	}
	for j, c := range t.Column {
		if c.RelativeTo != "" && !ids[c.RelativeTo] {
			return badField(fmt.Sprintf("column[%d].relative_to", j), "%q is not a row of the table", c.RelativeTo)
		}
	}
	return nil
}

// expandMatrix declares a matrix table's columns (one per task and the
// forgetting) and rows (one per task) from its experiment and tasks.
func (m *Matrix) expandMatrix(t *TableSpec) error {
	switch {
	case len(t.Column) > 0 || len(t.Columns) > 0 || len(t.Rows) > 0:
		return badField("kind", "a matrix table declares no columns or rows: they are the tasks")
	case m.byName[t.Experiment] == nil:
		return badField("experiment", "no experiment %q", t.Experiment)
	case t.Tasks < 1:
		return badField("tasks", "must be >= 1")
	}
	for j := range t.Tasks {
		t.Column = append(t.Column, TableColumn{ID: fmt.Sprintf("t%d", j+1), Title: fmt.Sprintf("T%d", j+1)})
	}
	t.Column = append(t.Column, TableColumn{ID: "f", Title: "$F$"})
	for i := range t.Tasks {
		t.Rows = append(t.Rows, TableRow{ID: fmt.Sprintf("after%d", i+1), Label: strconv.Itoa(i + 1),
			Selection: Selection{Experiment: t.Experiment, Protocol: t.Protocol, Eval: t.Eval, MaxSeeds: t.MaxSeeds}})
	}
	return nil
}

// checkColumn checks one [[table.column]] of table t (those before it are
// in t.Columns already).
func (m *Matrix) checkColumn(t *TableSpec, c *TableColumn) error {
	switch {
	case !declNameRe(c.ID) || slices.Contains(t.Columns, c.ID):
		return badField("id", "%q: want a unique name of %s", c.ID, declNameRule)
	case c.Experiment != "" && m.byName[c.Experiment] == nil:
		return badField("experiment", "no experiment %q", c.Experiment)
	}
	return checkSelection(t, &c.Selection)
}

// checkGeneralRow checks a row of a general table: its ID (unique: ids holds
// those before it), and that it and no column both select one field, and
// that every cell it has pairs an energy metric with an inference.
func checkGeneralRow(t *TableSpec, row *TableRow, ids map[string]bool) error {
	r := &row.Selection
	for k := range t.Column {
		c := &t.Column[k].Selection
		if r.Protocol != "" && c.Protocol != "" || r.Eval != "" && c.Eval != "" || r.Metric != "" && c.Metric != "" || r.Decimals != nil && c.Decimals != nil || r.MaxSeeds != 0 && c.MaxSeeds != 0 || r.Inference != "" && c.Inference != "" {
			return badField("", "row and column %s both set protocol, eval, metric, decimals, max_seeds or inference", t.Column[k].ID)
		}
		if metric, inf := cmp.Or(c.Metric, r.Metric), cmp.Or(c.Inference, r.Inference); stages.IsEnergyMetric(metric) != (inf != "") {
			return badField("", "column %s: an energy metric and an inference go together (metric %q, inference %q)", t.Column[k].ID, metric, inf)
		}
	}
	id := row.rowID()
	if !declNameRe(id) || ids[id] {
		return badField("id", "%q: want a unique name of %s (set id when two rows share an experiment)", id, declNameRule)
	}
	ids[id] = true
	return nil
}

// checkSelection checks the values a row or a column of table t selects
// (only the general form has any but experiment).
func checkSelection(t *TableSpec, s *Selection) error {
	if !t.general {
		if s.Protocol != "" || s.Eval != "" || s.Metric != "" || s.Decimals != nil || s.MaxSeeds != 0 || s.Inference != "" {
			return badField("", "protocol, eval, metric, decimals, max_seeds and inference need [[table.column]] declarations")
		}
		return nil
	}
	if s.Protocol != "" && !slices.Contains(protocols, s.Protocol) {
		return badField("protocol", "%q: want %s", s.Protocol, oneOf(protocols))
	}
	if _, _, err := parseEval(s.Eval); err != nil {
		return badField("eval", "%v", err)
	}
	if stages.IsEnergyMetric(s.Metric) {
		if err := stages.ValidEnergyQuantity(s.Metric); err != nil {
			return badField("metric", "%v", err)
		}
	} else if s.Metric != "" {
		if err := stages.ValidMetric(s.Metric); err != nil {
			return badField("metric", "%v", err)
		}
	}
	if s.Inference != "" {
		if err := stages.ValidInference(s.Inference); err != nil {
			return badField("inference", "%v", err)
		}
	}
	switch {
	case s.Decimals != nil && (*s.Decimals < 0 || *s.Decimals > 6):
		return badField("decimals", "must be in [0, 6]")
	case s.MaxSeeds < 0:
		return badField("max_seeds", "must be >= 0")
	}
	return nil
}

// parseEval reads an evaluation set: "" or heldout (the profile's first
// split; def true), test (split seed 0), split<seed>.
func parseEval(s string) (seed int64, def bool, err error) {
	switch s {
	case "", "heldout":
		return 0, true, nil
	}
	seed, err = cellid.ParseEval(s)
	return seed, false, err
}

// merge is a cell's selection: each field from the column if it sets it,
// else from the row (checkGeneralRow reports a field both set).
func merge(row, col Selection) Selection {
	return Selection{
		Experiment: cmp.Or(col.Experiment, row.Experiment),
		Protocol:   cmp.Or(col.Protocol, row.Protocol),
		Eval:       cmp.Or(col.Eval, row.Eval),
		Metric:     cmp.Or(col.Metric, row.Metric),
		Decimals:   cmp.Or(col.Decimals, row.Decimals), // the first non-nil
		MaxSeeds:   cmp.Or(col.MaxSeeds, row.MaxSeeds),
		Inference:  cmp.Or(col.Inference, row.Inference),
	}
}

// tableCells adds, for every table, an aggregate cell over the train cells
// it needs and a render cell (tableOf), and one reproduction cell over all
// tables. byID holds the train cells built so far.
func (m *Matrix) tableCells(b *builder, profile string, prof *Profile) ([]*pipeline.Cell, error) {
	if len(m.Tables) == 0 {
		return nil, nil
	}
	var out []*pipeline.Cell
	rp := &judge.Params{Stamp: prof.Stamp, Profile: profile}
	var repInputs []pipeline.CellInput
	pubFiles := map[string]bool{}
	for _, t := range m.Tables {
		agg, rend, err := m.tableOf(b, profile, prof, t)
		if err != nil {
			return nil, err
		}
		out = append(out, agg, rend)
		repInputs = append(repInputs, pipeline.CellInput{Name: t.Name, Cell: agg})
		rp.Tables = append(rp.Tables, t.Name)
		if t.published != nil && !pubFiles[t.Published] {
			pubFiles[t.Published] = true
			rp.AddPublished(t.published)
		}
	}
	rep := &pipeline.Cell{ID: cellid.Reproduction, Stage: stages.Reproduction, Params: rp, Inputs: repInputs, Tables: rp.Tables}
	out = append(out, m.reportCells(b, profile, prof, rep)...)
	return append(out, rep), nil
}

// tableOf builds table t's aggregate cell, over one input per seed of every
// cell it runs, and its render cell. It marks the train cells with the
// table they feed.
func (m *Matrix) tableOf(b *builder, profile string, prof *Profile, t *TableSpec) (agg, rend *pipeline.Cell, err error) {
	ap := &stages.AggregateParams{Table: t.Name, DefaultSeeds: len(prof.Seeds), Protocols: t.Columns,
		Resamples: stages.BootstrapResamples, BootstrapSeed: stages.BootstrapSeed}
	render := &stages.RenderParams{Table: t.Name, Label: t.Label, Caption: t.Caption, Size: t.Size, Header: t.Header,
		ParamTitle: t.ParamTitle, Stamp: prof.Stamp, Profile: profile}
	for c, title := range t.Titles {
		render.Columns = append(render.Columns, stages.RenderColumn{Title: title, Bold: slices.Contains(t.Bold, t.Columns[c])})
	}
	var inputs []pipeline.CellInput
	for r, row := range t.Rows {
		ap.Rows = append(ap.Rows, row.rowID())
		rr := stages.RenderRow{Label: row.Label, Midrule: row.Midrule, Reference: row.Reference}
		for c := range t.Columns {
			sel := t.cellSelection(r, c)
			tc, ins, err := m.tableCell(b, profile, prof, t, r, c, sel)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: table %s: row %s: %w", m.cfg.Path, t.Name, row.rowID(), err)
			}
			ap.Cells = append(ap.Cells, tc)
			inputs = append(inputs, ins...)
			rr.Cells = append(rr.Cells, stages.RenderCell{Decimals: decimalsOr(sel.Decimals, 1), MeanOnly: t.Kind == "matrix" && c < t.Tasks})
			for _, in := range ins {
				if t.Param == "" || row.Reference || rr.Param != "" {
					break
				}
				if rr.Param, err = paramOf(in.Cell, t.Param); err != nil {
					return nil, nil, fmt.Errorf("%s: table %s: param: %w", m.cfg.Path, t.Name, err)
				}
			}
		}
		render.Rows = append(render.Rows, rr)
	}
	// The general tables say "not run" and why, where the older ones
	// (the paper's own layout) leave such cells blank.
	render.ShowNotRun = t.general && slices.ContainsFunc(ap.Cells, func(c stages.TableCell) bool { return c.Status.Kind == numbers.StatusNotRun })
	for _, c := range t.Compare {
		ap.Compares = append(ap.Compares, stages.Compare(c))
	}
	agg = &pipeline.Cell{ID: cellid.Aggregate(t.Name), Stage: stages.Aggregate, Params: ap, Inputs: inputs, Tables: []string{t.Name}}
	rend = &pipeline.Cell{ID: cellid.Render(t.Name), Stage: stages.Render, Params: render,
		Inputs: []pipeline.CellInput{{Name: "aggregate", Cell: agg}}, Tables: []string{t.Name}}
	return agg, rend, nil
}

// cellSelection is what table t's cell (r, c) shows: the row's experiment
// in the column's protocol (in the general form, the row's and the column's
// selections merged), another experiment where the row's cells entry names
// one, and for a matrix table the entry's metric.
func (t *TableSpec) cellSelection(r, c int) Selection {
	row, colID := &t.Rows[r], t.Columns[c]
	sel := Selection{Experiment: row.Experiment, Protocol: colID}
	if t.general {
		sel = merge(row.Selection, t.Column[c].Selection)
		sel.Protocol = cmp.Or(sel.Protocol, "sequential")
	}
	if x, ok := row.Cells[colID]; ok {
		sel.Experiment = x
	}
	if t.Kind == "matrix" {
		sel.Metric = fmt.Sprintf("task_acc[%d][%d]", r, c)
		if c == t.Tasks {
			sel.Metric = "forgetting"
		}
	}
	return sel
}

// cellStatus is StatusRun when table t's cell (r, c) selecting sel runs in
// profile, else what it renders: StatusNA, StatusEmpty (a matrix's upper
// triangle), or StatusNotRun (the row is declared not run; its experiment
// is missing, not in this profile, or without the protocol). Every reason
// is a fact of the config, stable as keys need.
func (m *Matrix) cellStatus(t *TableSpec, r, c int, sel Selection, profile string) numbers.Status {
	row := &t.Rows[r]
	e := m.byName[sel.Experiment]
	switch {
	case slices.Contains(row.NA, t.Columns[c]):
		return numbers.Status{Kind: numbers.StatusNA}
	case row.NotRun():
		return numbers.NotRun(row.NotRunReason)
	case t.Kind == "matrix" && (c < t.Tasks && c > r || c == t.Tasks && r < t.Tasks-1):
		return numbers.Status{Kind: numbers.StatusEmpty}
	case e == nil:
		return numbers.NotRun("no experiment for this cell")
	case !e.inProfile(profile):
		return numbers.NotRun(fmt.Sprintf("experiment %s is not in profile %s", sel.Experiment, profile))
	case !slices.Contains(e.Protocols, sel.Protocol):
		return numbers.NotRun(fmt.Sprintf("experiment %s has no protocol %s", sel.Experiment, sel.Protocol))
	}
	return numbers.Status{Kind: numbers.StatusRun}
}

// tableCell is table t's cell (r, c) selecting sel, as the aggregate stage
// reads it, and the cells it reads: one input per seed, the train cell (or
// for an energy metric the energy cell) of that seed, added through b when
// the experiment does not run it by itself (another split, the development
// set).
func (m *Matrix) tableCell(b *builder, profile string, prof *Profile, t *TableSpec, r, c int, sel Selection) (stages.TableCell, []pipeline.CellInput, error) {
	tc := stages.TableCell{Status: m.cellStatus(t, r, c, sel, profile), Metric: sel.Metric}
	energy := stages.IsEnergyMetric(sel.Metric)
	switch {
	case energy:
		tc.Metric += "@" + sel.Inference
	case tc.Metric == "acc":
		tc.Metric = ""
	}
	if t.general {
		tc.RelativeTo = t.Column[c].RelativeTo
	}
	if tc.Status.Kind != numbers.StatusRun {
		return tc, nil, nil
	}
	e := m.byName[sel.Experiment]
	split, def, _ := parseEval(sel.Eval)
	if def {
		split = e.splits(prof)[0]
	}
	ss := e.seeds(prof)
	settle := t.general && slices.Contains(t.Rows[r].Settle, t.Column[c].ID) // checkRow: e is settle
	if sel.MaxSeeds > 0 && sel.MaxSeeds < len(ss) && !settle {
		ss = ss[:sel.MaxSeeds]
	}
	tr := cellid.Train{Experiment: sel.Experiment, Protocol: sel.Protocol, Eval: cellid.EvalOf(split)}
	tc.Cell = tr.Prefix()
	if energy {
		tc.Cell = cellid.EnergyPrefix(tc.Cell)
	}
	var seeds []string
	var inputs []pipeline.CellInput
	for s, seed := range ss {
		seeds = append(seeds, strconv.FormatInt(seed, 10))
		in := m.trainCell(b, profile, e, sel.Protocol, split, seed)
		if energy {
			tr.Seed = seed
			if in = b.byID[cellid.Energy(tr)]; in == nil {
				return tc, nil, fmt.Errorf("no cell %s ([spike] does not convert it)", cellid.Energy(tr))
			}
		}
		if !slices.Contains(in.Tables, t.Name) {
			in.Tables = append(in.Tables, t.Name)
		}
		inputs = append(inputs, pipeline.CellInput{Name: cellid.Input{Row: r, Col: c, Seed: s}.String(), Cell: in})
	}
	tc.Seeds = strings.Join(seeds, " ")
	return tc, inputs, nil
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

// decimalsOr is *d, or def when a table declares no decimals.
func decimalsOr(d *int, def int) int {
	if d == nil {
		return def
	}
	return *d
}
