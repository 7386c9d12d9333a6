package experiments

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repro/cellid"
	"repro/judge"
	"repro/pipeline"
	"repro/stages"
)

var tablesTestConfig = `
[settings]
default_profile = "p"
[profile.p]
seeds = [0, 1, 2]
split_seeds = [7]

` + TestExperiments(
	TestExperiment{Name: "x", Protocols: []string{"sequential", "static"}, Section: []string{"lr = 3e-5"}},
	TestExperiment{Name: "y", Protocols: []string{"sequential"}, Extra: []string{"max_seeds = 2"}},
	TestExperiment{Name: "z", Protocols: []string{"static"}},
) + "# ---- tables (experiments/tables.go) ----\n" + TestTable{
	Head:    `name = "t"; caption = "c"; header = "h"; bold = ["sequential"]; param = "bp.lr"; param_title = "lr"; published = "pub.toml"`,
	Columns: []string{`id = "sequential"; title = "S"; protocol = "sequential"`, `id = "static"; title = "I"; protocol = "static"`},
	Rows: []string{
		`experiment = "x"; label = "X"`,
		`experiment = "y"; label = "Y"; cells = { static = "z" }`,
		`experiment = "night"; label = "N"; na = ["static"]; not_run = "no night yet"`,
	},
	Compares: []string{`id = "x-y"; a = "x"; b = "y"; protocol = "sequential"`},
}.TOML()

const tablesTestPublished = `
[[value]]
id = "t/x/sequential"
mean = 91.7
sd = 0.4
n = 3
cite = "Table t, row 1"
line = 1
`

func buildTest(t *testing.T, cfgText, pub string) (*pipeline.Graph, error) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "pipeline.toml")
	os.WriteFile(path, []byte(cfgText), 0o644)
	os.WriteFile(filepath.Join(dir, "pub.toml"), []byte(pub), 0o644)
	cfg, err := pipeline.LoadConfig(path)
	if err != nil {
		return nil, err
	}
	return build(cfg, "p")
}

func TestTableCells(t *testing.T) {
	t.Parallel()
	g, err := buildTest(t, tablesTestConfig, tablesTestPublished)
	if err != nil {
		t.Fatal(err)
	}
	agg := g.Cell("aggregate/t")
	if agg == nil || g.Cell("render/t") == nil || g.Cell("reproduction") == nil {
		t.Fatal("table cells missing")
	}
	ap := agg.Params.(*stages.AggregateParams)
	// Row x: 3 seeds x 2 columns; row y: 2 seeds (max_seeds), its static
	// cell from experiment z (3 seeds); row night: not configured.
	if len(agg.Inputs) != 3+3+2+3 {
		t.Errorf("aggregate has %d inputs, want 11", len(agg.Inputs))
	}
	want := []string{"run", "run", "run", "run", "not run: no night yet", "n/a"}
	var status []string
	for _, c := range ap.Cells {
		status = append(status, c.Status.String())
	}
	if strings.Join(status, "|") != strings.Join(want, "|") {
		t.Errorf("status %q, want %q", status, want)
	}
	if ap.Cells[2].Seeds != "0 1" || ap.Cells[3].Cell != "train/z/static/split7" {
		t.Errorf("cells %+v", ap.Cells)
	}
	for _, in := range agg.Inputs {
		if in.Name == (cellid.Input{Row: 1, Col: 1, Seed: 2}).String() && in.Cell.ID != "train/z/static/split7/seed2" {
			t.Errorf("input %s is %s", in.Name, in.Cell.ID)
		}
	}
	if c := g.Cell("train/y/sequential/split7/seed1"); len(c.Tables) != 1 || c.Tables[0] != "t" {
		t.Errorf("train cell tables %v", c.Tables)
	}
	rp := g.Cell("render/t").Params.(*stages.RenderParams)
	if rp.Rows[0].Param != `$3{\cdot}10^{-5}$` {
		t.Errorf("lr column %+v", rp.Rows)
	}
	if !rp.ShowNotRun {
		t.Error("a table with a row declared not run leaves it blank, without the reason")
	}
	rep := g.Cell("reproduction").Params.(*judge.Params)
	if len(rep.Values) != 1 || rep.Values[0].Mean != 91.7 {
		t.Errorf("published %+v", rep)
	}
}

func TestTableSpecErrors(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, from, to, want string }{
		{"unknown key", `caption = "c"`, "caption = \"c\"\ncolour = 1", "colour"},
		{"bad column protocol", "title = \"I\"\nprotocol = \"static\"", "title = \"I\"\nprotocol = \"iid\"", `table t.column[1].protocol: "iid"`},
		{"retired columns", `bold = ["sequential"]`, "columns = [\"sequential\", \"static\"]\nbold = [\"sequential\"]", "table t.columns: columns and titles are no longer read: declare each column as a [[table.column]]"},
		{"retired titles", `bold = ["sequential"]`, "titles = [\"S\", \"I\"]\nbold = [\"sequential\"]", "table t.titles: columns and titles are no longer read"},
		{"bold not a column", `bold = ["sequential"]`, `bold = ["single_pass"]`, "bold"},
		{"compare row", `b = "y"`, `b = "w"`, "must both be rows"},
		{"misspelt row experiment", `experiment = "y"`, `experiment = "yy"`, `table t.row[1].experiment: no experiment "yy"`},
		{"misspelt cell experiment", `cells = { static = "z" }`, `cells = { static = "zz" }`, `no experiment "zz"`},
		{"published missing", `published = "pub.toml"`, `published = "nope.toml"`, "nope.toml"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg := strings.Replace(tablesTestConfig, c.from, c.to, 1)
			_, err := buildTest(t, cfg, tablesTestPublished)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want it to mention %q", err, c.want)
			}
		})
	}
	_, err := buildTest(t, tablesTestConfig, "[[value]]\nid = \"a\"\nmean = 1.0\n")
	if err == nil || !strings.Contains(err.Error(), "cite and line (of paper.tex) are required") {
		t.Errorf("published value without a cite: %v", err)
	}
}

func TestLatexNumber(t *testing.T) {
	t.Parallel()
	cases := map[float64]string{3e-5: `$3{\cdot}10^{-5}$`, 1e-4: `$10^{-4}$`, 0.25: `$0.25$`, 1e-3: `$10^{-3}$`, 2.5e-6: `$2.5{\cdot}10^{-6}$`, 16: `$16$`}
	for x, want := range cases {
		if got := latexNumber(x); got != want {
			t.Errorf("latexNumber(%g) = %s, want %s", x, got, want)
		}
	}
}
