package experiments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"repro/core"
	"repro/pipeline"
	"repro/stages"
)

// generalConfig declares a development-vs-held-out table (columns select
// the evaluation set, rows the protocol), a metric column, a matrix table
// and a table with a row not run, on matrixConfig's experiments.
var generalConfig = matrixConfig +
	tableTOML(`name = "val"; caption = "v"; header = ""; bold = ["split1"]`, []string{
		`id = "dev"; title = "development set"; eval = "test"; max_seeds = 2`,
		`id = "split1"; title = "held-out split 1"`,
		`id = "split2"; title = "held-out split 2"; eval = "split4321"; max_seeds = 2`,
	}, []string{
		`experiment = "full"; label = "full"`,
		`id = "full-static"; experiment = "full"; protocol = "static"; label = "static"`,
		`experiment = "bp-er"; label = "BP+ER"; cells = { split2 = "middle" }`,
	}) +
	tableTOML(`name = "rho"; caption = "r"; header = ""`, []string{
		`id = "acc"; title = "acc"`,
		`id = "rho1"; title = "rho"; metric = "rho[0]"; decimals = 3`,
		`id = "updates"; title = "replay updates"; metric = "replay_updates"; decimals = 0`,
	}, []string{`experiment = "full"; label = "full"`}) +
	tableTOML(`name = "accmatrix"; caption = "m"; header = "after task"; kind = "matrix"; experiment = "full"; protocol = "sequential"; tasks = 3`, nil, nil) +
	tableTOML(`name = "nr"; caption = "n"; header = ""`, []string{`id = "acc"; title = "acc"`}, []string{
		`experiment = "full"; label = "full"`,
		`experiment = "night"; label = "night"; not_run = "no night yet"`,
	}) +
	tableTOML(`name = "syn"; caption = "s"; header = ""`, []string{
		`id = "acc"; title = "acc"`,
		`id = "frac"; title = "syn. ops"; metric = "synops"; relative_to = "bp-er"`,
	}, []string{`experiment = "full"; label = "full"`, `experiment = "bp-er"; label = "BP"`})

// tableTOML returns a [[table]] with its [[table.column]] and [[table.row]]
// entries, each given as its keys separated by "; ", after a blank line.
func tableTOML(head string, columns, rows []string) string {
	return "\n" + TestTable{Head: head, Columns: columns, Rows: rows}.TOML()
}

func TestGeneralTables(t *testing.T) {
	t.Parallel()
	g := mustBuild(t, generalConfig, "paper")
	// The development set and the second split are added for the cells
	// the table selects, on the seeds it asks for, and nothing more.
	for _, c := range []struct {
		id   string
		want bool
	}{
		{"train/full/sequential/test/seed1", true},
		{"train/full/static/split4321/seed1", true},
		{"train/middle/sequential/split4321/seed0", true},
		{"split/mnist-4321", true},
		{"streams/mnist-static-test", true},
		{"train/full/sequential/test/seed2", false},
		{"train/full/single_pass/test/seed0", false},
		{"train/bp-er/sequential/split4321/seed0", false},
	} {
		if got := g.Cell(c.id) != nil; got != c.want {
			t.Errorf("cell %s in the graph: %v, want %v", c.id, got, c.want)
		}
	}
	// A column relative to a row: each of its cells over that row's cell.
	for table, want := range map[string]string{"syn": "|bp-er||bp-er", "rho": "||"} {
		if got := cellField(g, table, func(c stages.TableCell) string { return c.RelativeTo }); got != want {
			t.Errorf("aggregate/%s relative_to %s, want %s", table, got, want)
		}
	}
	// A table with a cell not run says so; one without has no note.
	for table, want := range map[string]bool{"nr": true, "val": false} {
		if got := g.Cell("render/" + table).Params.(*stages.RenderParams).ShowNotRun; got != want {
			t.Errorf("render/%s show_not_run %v, want %v", table, got, want)
		}
	}
	ap := g.Cell("aggregate/val").Params.(*stages.AggregateParams)
	if strings.Join(ap.Rows, " ") != "full full-static bp-er" || strings.Join(ap.Protocols, " ") != "dev split1 split2" {
		t.Errorf("rows %v columns %v", ap.Rows, ap.Protocols)
	}
	if ap.Cells[3].Cell != "train/full/static/test" || ap.Cells[5].Seeds != "0 1" || ap.Cells[8].Cell != "train/middle/sequential/split4321" {
		t.Errorf("cells %+v", ap.Cells)
	}
	if got := cellField(g, "rho", func(c stages.TableCell) string { return c.Metric }); got != "|rho[0]|replay_updates" {
		t.Errorf("metrics %q", got)
	}
	// decimals = 0 prints a count as an integer; no decimals, one.
	if got := fmt.Sprint(g.Cell("render/rho").Params.(*stages.RenderParams).Rows[0].Cells); got != "[{1 false} {3 false} {0 false}]" {
		t.Errorf("render cells %s", got)
	}

	// The matrix: run its aggregate and render on records whose accuracy
	// matrix is known.
	known := &pipeline.Stage{Name: "train", Version: 1, NewParams: func() any { return &fakeResultParams{} },
		Run: func(_ context.Context, rc *pipeline.RunContext) error {
			seed := rc.Params.(*fakeResultParams).Seed
			off := float64(seed) / 100
			res := &core.Result{FinalAcc: 0.9, Forgetting: 0.05 + off,
				Acc: [][]float64{{0.99 + off}, {0.95, 0.97}, {0.90, 0.92, 0.96}}}
			b, err := json.Marshal(&stages.TrainRecord{Learner: "local", Protocol: "sequential", Seed: seed, Result: res})
			rc.Put("result", b)
			return err
		}}
	matrix := func(c *pipeline.Cell) bool { return c.ID == "aggregate/accmatrix" || c.ID == "render/accmatrix" }
	st, p, _ := runOnFakes(t, g, "paper", matrix, func(c *pipeline.Cell) *pipeline.Cell {
		return &pipeline.Cell{ID: c.ID, Stage: known, Params: &fakeResultParams{ID: c.ID, Seed: c.Params.(*stages.TrainParams).Seed}}
	})
	d, _ := p.Cell("render/accmatrix").Manifest.Output("tex")
	b, err := st.Get(d)
	if err != nil {
		t.Fatal(err)
	}
	tex := string(b)
	for _, want := range []string{
		`after task & T1 & T2 & T3 & $F$ \\`,
		`1 & \reprocard{accmatrix.after1.t1}{$100.0$} &  &  & \\`, // seeds 0-2: 99, 100, 101
		`2 & \reprocard{accmatrix.after2.t1}{$95.0$} & \reprocard{accmatrix.after2.t2}{$97.0$} &  & \\`,
		`3 & \reprocard{accmatrix.after3.t1}{$90.0$} & \reprocard{accmatrix.after3.t2}{$92.0$} & \reprocard{accmatrix.after3.t3}{$96.0$} & \reprocard{accmatrix.after3.f}{$6.0\pm1.0$} \\`,
	} {
		if !strings.Contains(tex, want) {
			t.Errorf("matrix table lacks %q:\n%s", want, tex)
		}
	}
}

// cellField joins one field of every cell of a table's aggregate params
// with "|".
func cellField(g *pipeline.Graph, table string, field func(stages.TableCell) string) string {
	var out []string
	for _, c := range g.Cell("aggregate/" + table).Params.(*stages.AggregateParams).Cells {
		out = append(out, field(c))
	}
	return strings.Join(out, "|")
}

func TestGeneralTableErrors(t *testing.T) {
	t.Parallel()
	cases := []struct{ from, to, want string }{
		{`eval = "split4321"`, `eval = "split-1"`, `table val.column[2].eval`},
		{`metric = "rho[0]"`, `metric = "rhoo[0]"`, `table rho.column[1].metric`},
		{`metric = "rho[0]"`, `metric = "rho"`, `takes 1 index`},
		{`id = "full-static"`, ``, `row[1].id: "full"`},
		{`protocol = "static"`, "protocol = \"static\"\neval = \"test\"", `both set`},
		{`tasks = 3`, `tasks = 0`, `table accmatrix.tasks: must be >= 1`},
		{`kind = "matrix"`, `kind = "grid"`, `want matrix`},
		{`relative_to = "bp-er"`, `relative_to = "bp"`, `table syn.column[1].relative_to: "bp" is not a row`},
		{`metric = "synops"`, `metric = "gate_duty"`, `table syn.row[1].metric: "gate_duty": the bp learner of experiment bp-er does not record it (column frac)`},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			t.Parallel()
			_, err := loadMatrix(strings.Replace(generalConfig, c.from, c.to, 1))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err %v, want %q", err, c.want)
			}
		})
	}
}

// TestMainTeXCommitted: the committed paper/main.tex is what the table
// declarations of pipeline.toml generate (repro run rewrites it): every
// table in the declared (the paper's) order, the mask as equation (6).
func TestMainTeXCommitted(t *testing.T) {
	t.Parallel()
	cfg, err := pipeline.LoadConfig("../pipeline.toml")
	if err != nil {
		t.Fatal(err)
	}
	m, err := Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := m.MainTeX()
	want, err := os.ReadFile("../paper/main.tex")
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("paper/main.tex is not what the declarations generate; run repro run (or write MainTeX's output):\n%s", got)
	}
	for _, w := range []string{`\paperref{eq:mask}{6}`, `\inputtable{bpk}{tab:bpk}` + "\n" + `\inputtable{ablation}{tab:ablation}`, `\inputtable{accmatrix}{tab:accmatrix}`} {
		if !strings.Contains(got, w) {
			t.Errorf("main.tex lacks %q", w)
		}
	}
}

// TestTableRowSettle: an experiment marked settle runs the profile's
// settle_seeds on its own split; a row's settle lifts the named capped
// columns to those seeds and leaves the others capped; naming a column a
// row of an unsettled experiment, or no column, is an error at its line.
func TestTableRowSettle(t *testing.T) {
	t.Parallel()
	settled := strings.Replace(generalConfig, "split_seeds = [1234]\n", "split_seeds = [1234]\nsettle_seeds = 5\n", 1)
	full := TestExperiment{Name: "full", Learner: "local", Preset: "g16_sgd_refr_s10_w512", Protocols: []string{"sequential", "static", "single_pass"}, Section: []string{"eta = 0.2"}}.TOML()
	if !strings.Contains(settled, full) {
		t.Fatal("the config lacks experiment full")
	}
	cfg := func(settleExp bool, settleRow string) string {
		s := settled
		if settleExp {
			s = strings.Replace(s, full, strings.Replace(full, `name = "full"`+"\n", `name = "full"`+"\nsettle = true\n", 1), 1)
		}
		return strings.Replace(s, `id = "full-static"`+"\n", `id = "full-static"`+"\nsettle = "+settleRow+"\n", 1)
	}
	g := mustBuild(t, cfg(true, `["split2"]`), "paper")
	ap := g.Cell("aggregate/val").Params.(*stages.AggregateParams)
	for i, want := range map[int]string{
		0: "0 1",       // full, dev: capped
		1: "0 1 2 3 4", // full, split 1: the experiment's settle seeds
		3: "0 1",       // full-static, dev: capped, not named
		5: "0 1 2 3 4", // full-static, split 2: lifted
		8: "0 1",       // bp-er's split 2 cell is middle's: capped
	} {
		if got := ap.Cells[i].Seeds; got != want {
			t.Errorf("cell %d (%s): seeds %q, want %q", i, ap.Cells[i].Cell, got, want)
		}
	}
	for _, c := range []struct {
		exp      bool
		row, msg string
	}{
		{false, `["split2"]`, `experiment "full" is not marked settle = true`},
		{true, `["split3"]`, `"split3" is not a [[table.column]] id`},
	} {
		_, err := loadMatrix(cfg(c.exp, c.row))
		var ce *pipeline.ConfigError
		if !errors.As(err, &ce) || !strings.Contains(ce.Msg, c.msg) || !strings.HasSuffix(ce.Key, ".settle") || ce.Line == 0 {
			t.Errorf("settle %s (experiment settled %v): error %v, want %q at a line of key …settle", c.row, c.exp, err, c.msg)
		}
	}
}
