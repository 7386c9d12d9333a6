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
// the paper's tables. Every column is a [[table.column]]; a cell selects an
// experiment (the row's; a column's, for a column group; or the row's
// cells entry for that column), a protocol, an evaluation set and a
// metric, each from its row or its column (not both):
//
//	[[table]]
//	name = "bpk"                          # paper/tables/bpk.tex; number IDs bpk/<row id>/<column id>
//	label = "tab:bpk"
//	caption = '...'                       # LaTeX, verbatim
//	size = '\small'                       # optional LaTeX before the tabular
//	header = 'BP $+$ \kwta{}'             # title of the label column
//	bold = ["sequential", "single_pass"]  # columns (their ids) whose best mean is bold
//	param = "bp.lr"                       # optional: a column showing this train param ...
//	param_title = "lr"                    # ... under this title
//	published = "paper/published.toml"    # the paper's values (relative to pipeline.toml)
//	blank_not_run = true                  # optional: cells not run stay blank (the caption says
//	                                      #   so) instead of "not run" and why under the table
//	[[table.column]]
//	id = "static"                         # a unique name
//	title = 'i.i.d.\ (static)'
//	experiment = "controller"             # optional: a column group's experiment
//	protocol = "static"                   # optional (default sequential)
//	eval = "test"                         # optional: test (the development set), split<seed>,
//	                                      #   or heldout (the profile's first split, the default)
//	metric = "rho[0]"                     # optional (default acc; stages/metrics.go)
//	inference = "spike8"                  # with an energy metric only: spike<T>, dense or event
//	decimals = 2                          # optional (default 1)
//	max_seeds = 3                         # optional: at most the profile's first 3 seeds
//	relative_to = "dense-bp"              # optional: each cell over this row's mean in the column
//	[[table.row]]
//	experiment = "bpk-interleaved"        # an [[experiment]] name (a misspelt one is an error)
//	id = "full-static"                    # optional (default: the experiment); unique
//	label = 'interleaved replay (unmasked)'
//	protocol = "static"                   # optional: eval, metric, decimals, max_seeds likewise
//	na = ["static"]                       # optional: cells that do not apply (rendered ---)
//	midrule = true                        # optional: \midrule above this row
//	reference = true                      # optional: never bold, no param (a reference row)
//	cells = {static = "bp-static"}        # optional: another experiment for one column
//	settle = ["seq"]                      # optional: columns where the row runs its settle seeds
//	not_run = "why"                       # optional: the row cannot run yet; renders "not run: why"
//	[[table.compare]]                     # a seed-paired bootstrap CI of a difference
//	id = "rotation-seq"                   # number ID bpk/compare/rotation-seq
//	a = "bpk-interleaved-rotation"        # mean over common seeds of a - b (row IDs)
//	b = "bpk-interleaved"
//	protocol = "sequential"               # a column ID
//
// A cell that is not run (its row is declared not run, its experiment is
// not in the profile or lacks the protocol, or a cell it needs failed)
// prints "not run" with a lettered note under the table giving the
// reason. A train cell a table selects that its experiment does not run
// by itself (another split, the development set) is added to the graph. A
// matrix table (kind = "matrix") is the accuracy matrix of one experiment:
// row i after task i, column j accuracy on task j (mean over seeds,
// element-wise), blank above the diagonal, and the forgetting F beside the
// last row; its columns and rows are declared for it (expandMatrix):
//
//	[[table]]
//	kind = "matrix"
//	experiment = "full"
//	protocol = "sequential"               # and eval, max_seeds, as a column's
//	tasks = 5
type TableSpec struct {
	Name       string   `toml:"name"`
	Label      string   `toml:"label"`
	Caption    string   `toml:"caption"`
	Size       string   `toml:"size"`
	Header     string   `toml:"header"`
	Bold       []string `toml:"bold"`
	Param      string   `toml:"param"`
	ParamTitle string   `toml:"param_title"`
	Published  string   `toml:"published"`
	// BlankNotRun leaves a cell that is not run blank, where a table says
	// "not run" and why under it by default: for a table of the paper
	// whose caption says what a blank means (tab:ablation: "blank: not
	// run"), so that it keeps the paper's layout.
	BlankNotRun bool           `toml:"blank_not_run"`
	Column      []TableColumn  `toml:"column"`
	Rows        []TableRow     `toml:"row"`
	Compare     []TableCompare `toml:"compare"`
	// A matrix table (Kind "matrix") of one experiment.
	Kind       string `toml:"kind"`
	Experiment string `toml:"experiment"`
	Protocol   string `toml:"protocol"`
	Eval       string `toml:"eval"`
	MaxSeeds   int    `toml:"max_seeds"`
	Tasks      int    `toml:"tasks"`
	// RetiredColumns and RetiredTitles are the keys of the form whose
	// columns were protocols (columns = [...], titles = [...]): decoded
	// only to refuse them with a message that says what replaces them.
	RetiredColumns []string `toml:"columns"`
	RetiredTitles  []string `toml:"titles"`

	published *published.File
	// seeds, when set, are the seeds of every cell instead of its
	// experiment's (the disputed rows' table, Matrix.disputedTable, built
	// in code from [disputed], never declared): a run the experiment does
	// not make itself is a new train cell that keeps a diverged run as a
	// result (extraTrainCell).
	seeds []int64
}

// TableColumn is one column of a table.
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
	// blank names the columns (their ids) where the row is blank by
	// layout (StatusEmpty): a matrix's upper triangle and its F above the
	// last row (expandMatrix), the disputed table's combinations no
	// disputed row reads (Matrix.disputedTable). Set in code, never
	// declared.
	blank []string
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

// tableKinds are TableSpec.Kind's values besides "" (the default form).
var tableKinds = []string{"matrix"}

// checkTable checks one table: its kind (a matrix declares its columns
// and rows, expandMatrix), columns, rows and comparisons, and reads its
// published values. Every experiment a column, row, cell or comparison
// names must exist.
func (m *Matrix) checkTable(t *TableSpec) error {
	switch {
	case len(t.RetiredColumns) > 0:
		return badField("columns", "columns and titles are no longer read: declare each column as a [[table.column]] (id, title, protocol; docs/declarations.md)")
	case len(t.RetiredTitles) > 0:
		return badField("titles", "columns and titles are no longer read: declare each column as a [[table.column]] (id, title, protocol; docs/declarations.md)")
	case t.Kind == "matrix":
		if err := m.expandMatrix(t); err != nil {
			return err
		}
	case t.Kind != "":
		return badField("kind", "%q: want %s (or nothing)", t.Kind, oneOf(tableKinds))
	case t.Experiment != "" || t.Protocol != "" || t.Eval != "" || t.Tasks != 0 || t.MaxSeeds != 0:
		return badField("experiment", "experiment, protocol, eval, tasks and max_seeds belong to a matrix table (kind = \"matrix\") or to its rows and columns")
	case len(t.Column) == 0:
		return badField("column", "no [[table.column]]: declare one per column")
	}
	for j := range t.Column {
		if err := m.checkColumn(t, j); err != nil {
			return under(fmt.Sprintf("column[%d]", j), err)
		}
	}
	for _, b := range t.Bold {
		if t.columnOf(b) < 0 {
			return badField("bold", "%q is not a column", b)
		}
	}
	if len(t.Rows) == 0 {
		return badField("row", "no rows")
	}
	ids := map[string]bool{} // row IDs are unique in a table
	for j := range t.Rows {
		if err := m.checkRow(t, &t.Rows[j], ids); err != nil {
			return under(fmt.Sprintf("row[%d]", j), err)
		}
	}
	for j, c := range t.Column {
		if c.RelativeTo != "" && !ids[c.RelativeTo] {
			return badField(fmt.Sprintf("column[%d].relative_to", j), "%q is not a row of the table", c.RelativeTo)
		}
	}
	if err := m.checkRecorded(t); err != nil {
		return err
	}
	cmps := map[string]bool{} // comparison IDs are unique in a table
	for j := range t.Compare {
		if err := checkCompare(t, &t.Compare[j], cmps); err != nil {
			return under(fmt.Sprintf("compare[%d]", j), err)
		}
	}
	return m.loadPublished(t)
}

// expandMatrix declares a matrix table's columns (one per task and the
// forgetting) and rows (one per task) from its experiment and tasks.
func (m *Matrix) expandMatrix(t *TableSpec) error {
	switch {
	case len(t.Column) > 0 || len(t.Rows) > 0:
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
		row := TableRow{ID: fmt.Sprintf("after%d", i+1), Label: strconv.Itoa(i + 1),
			Selection: Selection{Experiment: t.Experiment, Protocol: t.Protocol, Eval: t.Eval, MaxSeeds: t.MaxSeeds}}
		for j := i + 1; j < t.Tasks; j++ { // after task i+1, the tasks not yet learnt
			row.blank = append(row.blank, t.Column[j].ID)
		}
		if i < t.Tasks-1 { // F, beside the last row only
			row.blank = append(row.blank, "f")
		}
		t.Rows = append(t.Rows, row)
	}
	return nil
}

// checkColumn checks column j of table t: its ID (unique among the columns
// before it), experiment and selection.
func (m *Matrix) checkColumn(t *TableSpec, j int) error {
	c := &t.Column[j]
	switch {
	case !declNameRe(c.ID) || t.columnOf(c.ID) < j:
		return badField("id", "%q: want a unique name of %s", c.ID, declNameRule)
	case c.Experiment != "" && m.byName[c.Experiment] == nil:
		return badField("experiment", "no experiment %q", c.Experiment)
	}
	return checkSelection(&c.Selection)
}

// checkRecorded refuses a cell of table t whose metric its experiment's
// learner never records (stages.Learner.Metrics): it would be "missing" in
// every profile.
func (m *Matrix) checkRecorded(t *TableSpec) error {
	for r := range t.Rows {
		for c, col := range t.Column {
			sel := t.cellSelection(r, c)
			e := m.byName[sel.Experiment]
			if e == nil || sel.Metric == "" || stages.IsEnergyMetric(sel.Metric) || slices.Contains(t.Rows[r].NA, col.ID) {
				continue
			}
			if l, ok := stages.LearnerOf(e.Learner); ok && !l.Records(sel.Metric) {
				return under(fmt.Sprintf("row[%d]", r), badField("metric", "%q: the %s learner of experiment %s does not record it (column %s)", sel.Metric, l.Kind, e.Name, col.ID))
			}
		}
	}
	return nil
}

// checkRow checks one row of table t: its ID (unique: ids holds those
// before it), its selection and that no column selects a field it does
// too, that every cell it has pairs an energy metric with an inference,
// the experiments it and its cells entries name, and the columns its na,
// settle and cells entries name.
func (m *Matrix) checkRow(t *TableSpec, row *TableRow, ids map[string]bool) error {
	r := &row.Selection
	if err := checkSelection(r); err != nil {
		return err
	}
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
	if r.Experiment != "" && m.byName[r.Experiment] == nil && !row.NotRun() {
		return badField("experiment", "no experiment %q in %s", r.Experiment, filepath.Base(m.cfg.Path))
	}
	for _, n := range row.NA {
		if t.columnOf(n) < 0 {
			return badField("na", "%q is not a column", n)
		}
	}
	for _, n := range row.Settle {
		switch e := m.byName[r.Experiment]; {
		case t.columnOf(n) < 0:
			return badField("settle", "%q is not a [[table.column]] id", n)
		case e == nil || !e.Settle:
			return badField("settle", "experiment %q is not marked settle = true", r.Experiment)
		}
	}
	for _, c := range slices.Sorted(maps.Keys(row.Cells)) {
		switch x := row.Cells[c]; {
		case t.columnOf(c) < 0:
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
	case t.columnOf(c.Protocol) < 0:
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

// columnOf is the index of the first column with an ID, or -1.
func (t *TableSpec) columnOf(id string) int {
	return slices.IndexFunc(t.Column, func(c TableColumn) bool { return c.ID == id })
}

// rowID is a row's ID in its numbers' IDs: its id, else its experiment.
func (r *TableRow) rowID() string { return cmp.Or(r.ID, r.Experiment) }

// checkSelection checks the values a row or a column selects.
func checkSelection(s *Selection) error {
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
// else from the row (checkRow refuses a field both set).
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
	cs, err := m.reportCells(b, profile, prof, rep)
	if err != nil {
		return nil, err
	}
	out = append(out, cs...)
	return append(out, rep), nil
}

// tableOf builds table t's aggregate cell, over one input per seed of every
// cell it runs, and its render cell. It marks the train cells with the
// table they feed.
func (m *Matrix) tableOf(b *builder, profile string, prof *Profile, t *TableSpec) (agg, rend *pipeline.Cell, err error) {
	ap := &stages.AggregateParams{Table: t.Name, DefaultSeeds: cmp.Or(len(t.seeds), len(prof.Seeds)),
		Resamples: stages.BootstrapResamples, BootstrapSeed: stages.BootstrapSeed}
	render := &stages.RenderParams{Table: t.Name, Label: t.Label, Caption: t.Caption, Size: t.Size, Header: t.Header,
		ParamTitle: t.ParamTitle, Stamp: prof.Stamp, Profile: profile}
	for _, col := range t.Column {
		ap.Protocols = append(ap.Protocols, col.ID)
		render.Columns = append(render.Columns, stages.RenderColumn{Title: col.Title, Bold: slices.Contains(t.Bold, col.ID)})
	}
	var inputs []pipeline.CellInput
	for r, row := range t.Rows {
		ap.Rows = append(ap.Rows, row.rowID())
		rr := stages.RenderRow{Label: row.Label, Midrule: row.Midrule, Reference: row.Reference}
		for c := range t.Column {
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
	// A table with a cell not run says so, and why, under the table
	// (unless its caption explains its blanks: blank_not_run).
	render.ShowNotRun = !t.BlankNotRun && slices.ContainsFunc(ap.Cells, func(c stages.TableCell) bool { return c.Status.Kind == numbers.StatusNotRun })
	for _, c := range t.Compare {
		ap.Compares = append(ap.Compares, stages.Compare(c))
	}
	agg = &pipeline.Cell{ID: cellid.Aggregate(t.Name), Stage: stages.Aggregate, Params: ap, Inputs: inputs, Tables: []string{t.Name}}
	rend = &pipeline.Cell{ID: cellid.Render(t.Name), Stage: stages.Render, Params: render,
		Inputs: []pipeline.CellInput{{Name: "aggregate", Cell: agg}}, Tables: []string{t.Name}}
	return agg, rend, nil
}

// cellSelection is what table t's cell (r, c) shows: the row's and the
// column's selections merged (protocol sequential unless one sets it),
// another experiment where the row's cells entry names one, and for a
// matrix table the entry's metric.
func (t *TableSpec) cellSelection(r, c int) Selection {
	row := &t.Rows[r]
	sel := merge(row.Selection, t.Column[c].Selection)
	sel.Protocol = cmp.Or(sel.Protocol, "sequential")
	if x, ok := row.Cells[t.Column[c].ID]; ok {
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
// profile, else what it renders: StatusNA, StatusEmpty (blank by layout:
// the row's blank), or StatusNotRun (the row is declared not run; its experiment
// is missing, not in this profile, or without the protocol). Every reason
// is a fact of the config, stable as keys need.
func (m *Matrix) cellStatus(t *TableSpec, r, c int, sel Selection, profile string) numbers.Status {
	row := &t.Rows[r]
	e := m.byName[sel.Experiment]
	switch {
	case slices.Contains(row.NA, t.Column[c].ID):
		return numbers.Status{Kind: numbers.StatusNA}
	case row.NotRun():
		return numbers.NotRun(row.NotRunReason)
	case slices.Contains(row.blank, t.Column[c].ID):
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
// set; in a table with seeds of its own, a run the experiment does not
// make is a new cell that keeps a diverged run, extraTrainCell).
func (m *Matrix) tableCell(b *builder, profile string, prof *Profile, t *TableSpec, r, c int, sel Selection) (stages.TableCell, []pipeline.CellInput, error) {
	tc := stages.TableCell{Status: m.cellStatus(t, r, c, sel, profile), Metric: sel.Metric}
	energy := stages.IsEnergyMetric(sel.Metric)
	switch {
	case energy:
		tc.Metric += "@" + sel.Inference
	case tc.Metric == "acc":
		tc.Metric = ""
	}
	tc.RelativeTo = t.Column[c].RelativeTo
	if tc.Status.Kind != numbers.StatusRun {
		return tc, nil, nil
	}
	e := m.byName[sel.Experiment]
	split, def, _ := parseEval(sel.Eval)
	if def {
		split = e.splits(prof)[0]
	}
	ss := e.seeds(prof)
	settle := slices.Contains(t.Rows[r].Settle, t.Column[c].ID) // checkRow: e is settle
	switch {
	case t.seeds != nil:
		ss = t.seeds
	case sel.MaxSeeds > 0 && sel.MaxSeeds < len(ss) && !settle:
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
		var in *pipeline.Cell
		if t.seeds != nil && !(slices.Contains(e.seeds(prof), seed) && slices.Contains(e.splits(prof), split)) {
			in = m.extraTrainCell(b, profile, e, sel.Protocol, split, seed)
		} else {
			in = m.trainCell(b, profile, e, sel.Protocol, split, seed)
		}
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
