package experiments

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"repro/cellid"
	"repro/judge"
	"repro/pipeline"
	"repro/stages"
)

// disputedConfig is matrixConfig with a [disputed] section (its row at
// lines 7-12 of the section) settling full/sequential at five seeds.
var disputedConfig = matrixConfig + `
[disputed]
profiles = ["paper"]
seeds = [0, 1, 2, 3, 4]
reference_runs = "runs"

[[disputed.row]]
id = "t/full/sequential"
label = "full"
experiment = "full"
protocol = "sequential"
reference = "g16_sgd_refr_s10_w512"
`

const disputedRuns = `# config: g16_sgd_refr_s10_w512
# command: c
# reference: r
# split: s
# source: test
seed	final_acc	forgetting	replay_used
0	91.50	7.00	16885
2	92.10	6.50	16885
`

func disputedGraph(t *testing.T, cfgText, profile string) (*pipeline.Graph, error) {
	t.Helper()
	return disputedGraphFiles(t, cfgText, profile, nil)
}

// disputedGraphFiles is disputedGraph with more reference-run files (by
// name) beside g16_sgd_refr_s10_w512.tsv.
func disputedGraphFiles(t *testing.T, cfgText, profile string, runs map[string]string) (*pipeline.Graph, error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "runs"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"g16_sgd_refr_s10_w512.tsv": disputedRuns}
	for name, body := range runs {
		files[name] = body
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, "runs", name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "pipeline.toml")
	if err := os.WriteFile(path, []byte(cfgText), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := pipeline.LoadConfig(path)
	if err != nil {
		return nil, err
	}
	return build(cfg, profile)
}

func TestDisputedCells(t *testing.T) {
	t.Parallel()
	g, err := disputedGraph(t, disputedConfig, "paper")
	if err != nil {
		t.Fatal(err)
	}
	agg := g.Cell(cellid.Aggregate("disputed"))
	if agg == nil {
		t.Fatal("no aggregate/disputed cell")
	}
	if n := len(agg.Inputs); n != 5 {
		t.Errorf("aggregate/disputed reads %d cells, want 5", n)
	}
	for s := range 5 {
		id := cellid.Train{Experiment: "full", Protocol: "sequential", Eval: "split1234", Seed: int64(s)}.String()
		c := g.Cell(id)
		if c == nil {
			t.Fatalf("no cell %s", id)
		}
		// The experiment's own seeds (0-2) are the table's cells as they
		// were; the new ones keep a diverged run as a result.
		if got, want := c.Params.(*stages.TrainParams).AllowDiverged, s >= 3; got != want {
			t.Errorf("%s: allow_diverged %v, want %v", id, got, want)
		}
	}
	rep := g.Cell(cellid.Reproduction)
	found := false
	for _, in := range rep.Inputs {
		found = found || in.Name == judge.DisputedInput && in.Cell == agg
	}
	if !found {
		t.Error("the reproduction cell does not read aggregate/disputed")
	}
	rows := rep.Params.(*judge.Params).Disputed
	if len(rows) != 1 || len(rows[0].RefAcc) != 2 || rows[0].RefAcc[1] != 92.10 || rows[0].RefSeeds[1] != 2 {
		t.Errorf("reproduction's disputed rows = %+v", rows)
	}

	// The same matrix without [disputed], and the smoke profile, have no
	// such cells, and every other cell's key is what it was.
	plain, err := disputedGraph(t, matrixConfig, "paper")
	if err != nil {
		t.Fatal(err)
	}
	before, after := structKeys(plain), structKeys(g)
	for _, c := range plain.Cells {
		if c.ID == cellid.Reproduction {
			continue
		}
		if k1, k2 := before[c.ID], after[c.ID]; k1 != k2 {
			t.Errorf("cell %s: key changed by [disputed]", c.ID)
		}
	}
	smoke, err := disputedGraph(t, disputedConfig, "smoke")
	if err != nil {
		t.Fatal(err)
	}
	if smoke.Cell(cellid.Aggregate("disputed")) != nil {
		t.Error("profile smoke has aggregate/disputed; [disputed] names only paper")
	}
}

// TestDisputedTable: the disputed rows' aggregate is a table's, built by
// the tables' own path: a row per experiment, a column per protocol, each
// cell at every seed of [disputed] (the experiment's own runs where it
// makes them, else new cells that keep a diverged run), blank where no
// disputed row reads the combination.
func TestDisputedTable(t *testing.T) {
	t.Parallel()
	two := disputedConfig + `
[[disputed.row]]
id = "t/middle/static"
label = "middle, static"
experiment = "middle"
protocol = "static"
reference_note = "none"
`
	g, err := disputedGraph(t, two, "paper")
	if err != nil {
		t.Fatal(err)
	}
	agg := g.Cell(cellid.Aggregate("disputed"))
	ap := agg.Params.(*stages.AggregateParams)
	var status []string
	for _, c := range ap.Cells {
		status = append(status, c.Status.String()+" "+c.Cell+" "+c.Seeds)
	}
	want := []string{"run train/full/sequential/split1234 0 1 2 3 4", "empty  ", "empty  ", "run train/middle/static/split1234 0 1 2 3 4"}
	if strings.Join(ap.Rows, ",") != "full,middle" || strings.Join(ap.Protocols, ",") != "sequential,static" || ap.DefaultSeeds != 5 ||
		strings.Join(status, "|") != strings.Join(want, "|") {
		t.Errorf("rows %v, columns %v, default seeds %d, cells %q", ap.Rows, ap.Protocols, ap.DefaultSeeds, status)
	}
	if g.Cell(cellid.Render("disputed")) != nil {
		t.Error("the disputed rows have a render cell")
	}
	for s := range 5 {
		id := cellid.Train{Experiment: "middle", Protocol: "static", Eval: "split1234", Seed: int64(s)}.String()
		// middle runs two seeds (max_seeds = 2) for the tables.
		if c := g.Cell(id); c == nil || c.Params.(*stages.TrainParams).AllowDiverged != (s >= 2) {
			t.Errorf("cell %s: %v, want allow_diverged %v", id, c, s >= 2)
		}
	}
}

func TestDisputedErrors(t *testing.T) {
	t.Parallel()
	// The section starts at line 1 + the lines of matrixConfig.
	base := strings.Count(matrixConfig, "\n") + 1
	at := func(n int) string { return "pipeline.toml:" + strconv.Itoa(base+n) + ": " }
	for _, c := range []struct{ name, from, to, want string }{
		{"experiment", `experiment = "full"`, `experiment = "fulll"`, at(9) + `disputed.row[0].experiment: no experiment "fulll"`},
		{"protocol", `protocol = "sequential"`, `protocol = "static_pass"`, at(10) + `disputed.row[0].protocol: experiment full has no protocol "static_pass"`},
		{"reference file", `reference = "g16_sgd_refr_s10_w512"`, `reference = "g17_none"`, at(11) + "disputed.row[0].reference: open "},
		{"no reference, no note", `reference = "g16_sgd_refr_s10_w512"`, ``, "disputed.row[0].reference_note: a row without the authors' runs says why"},
		{"seeds", `seeds = [0, 1, 2, 3, 4]`, `seeds = [0, 1, 1]`, at(3) + "disputed.seeds: 1 listed twice"},
		{"profile", `profiles = ["paper"]`, `profiles = ["papr"]`, at(2) + `disputed.profiles: no profile "papr"`},
		{"unknown key", `label = "full"`, "label = \"full\"\ncolour = 1", "colour: unknown key"},
		{"script", `reference = "g16_sgd_refr_s10_w512"`, "reference = \"g16_sgd_refr_s10_w512\"\nreference_script = \"run_cifar\"",
			`disputed.row[0].reference_script: "run_cifar": want run_seq, run_seq_test or run_mnist`},
		// full evaluates on the held-out split; run_mnist's runs score the test set.
		{"script's set", `reference = "g16_sgd_refr_s10_w512"`, "reference = \"g16_sgd_refr_s10_w512\"\nreference_script = \"run_mnist\"",
			`disputed.row[0].reference_script: the authors' run_mnist runs score the official test set; experiment full evaluates on "heldout"`},
		{"script, no reference", `reference = "g16_sgd_refr_s10_w512"`, "reference_note = \"n\"\nreference_script = \"run_seq\"",
			"disputed.row[0].reference_script: a row without reference runs no script"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			section := strings.Replace(strings.TrimPrefix(disputedConfig, matrixConfig), c.from, c.to, 1)
			_, err := disputedGraph(t, matrixConfig+section, "paper")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err %v, want it to contain %q", err, c.want)
			}
		})
	}
}

// TestDisputedTestSet: a row settled by the authors' run_mnist.py (the
// substrate ladder) reads a test_acc file for an experiment scored on the
// test set; a file of run_seq's columns under that script is an error
// naming the row's key and the file.
func TestDisputedTestSet(t *testing.T) {
	t.Parallel()
	src := matrixConfig + TestExperiments(TestExperiment{Name: "sub", Learner: "local", Preset: "g16_sgd_refr_s10_w512",
		Protocols: []string{"static"}, Extra: []string{`eval = "test"`}}) + `
[disputed]
profiles = ["paper"]
seeds = [0, 1, 2, 3]
reference_runs = "runs"

[[disputed.row]]
id = "t/sub/static"
label = "sub"
experiment = "sub"
protocol = "static"
reference = "v6_x"
reference_script = "run_mnist"
`
	for _, tc := range []struct{ name, file, want string }{
		{"test_acc", "# config: v6_x\n# command: c\n# reference: r\n# split: s\n# source: t\nseed\ttest_acc\n0\t76.64\n3\t81.91\n", ""},
		{"run_seq's columns", strings.Replace(disputedRuns, "g16_sgd_refr_s10_w512", "v6_x", 1), "disputed.row[0].reference_script: "},
		// run_seq without --val scores the test set too, in run_seq's columns.
		{"run_seq_test", strings.Replace(disputedRuns, "g16_sgd_refr_s10_w512", "v6_x", 1), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, "runs"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "runs", "v6_x.tsv"), []byte(tc.file), 0o644); err != nil {
				t.Fatal(err)
			}
			text := src
			if tc.name == "run_seq_test" {
				text = strings.Replace(src, `reference_script = "run_mnist"`, `reference_script = "run_seq_test"`, 1)
			}
			if err := os.WriteFile(filepath.Join(dir, "pipeline.toml"), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, err := pipeline.LoadConfig(filepath.Join(dir, "pipeline.toml"))
			if err != nil {
				t.Fatal(err)
			}
			g, err := build(cfg, "paper")
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "v6_x.tsv holds runs of another script") {
					t.Fatalf("err %v, want %q and the file", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rows := g.Cell(cellid.Reproduction).Params.(*judge.Params).Disputed
			want := 81.91
			if tc.name == "run_seq_test" {
				want = 92.10
			}
			if len(rows) != 1 || len(rows[0].RefAcc) != 2 || rows[0].RefAcc[1] != want {
				t.Errorf("reproduction's disputed rows = %+v", rows)
			}
			id := cellid.Train{Experiment: "sub", Protocol: "static", Eval: "test", Seed: 3}.String()
			if g.Cell(id) == nil {
				t.Errorf("no cell %s", id)
			}
		})
	}
}

// TestDisputedSplit: a row on another held-out split than its experiment's
// first reads that split's cells at every seed (each a new cell that keeps
// a diverged run), in a column of its own beside the same experiment's row
// on the first split; an eval that is not a held-out split is an error
// naming the row's key.
func TestDisputedSplit(t *testing.T) {
	t.Parallel()
	two := disputedConfig + `
[[disputed.row]]
id = "t/full/sequential/split2"
label = "full, split 2"
experiment = "full"
protocol = "sequential"
eval = "split4321"
reference_note = "none run on split 2"
`
	g, err := disputedGraph(t, two, "paper")
	if err != nil {
		t.Fatal(err)
	}
	agg := g.Cell(cellid.Aggregate("disputed"))
	if n := len(agg.Inputs); n != 10 {
		t.Errorf("aggregate/disputed reads %d cells, want 10 (5 seeds on each split)", n)
	}
	ap := agg.Params.(*stages.AggregateParams)
	if strings.Join(ap.Protocols, ",") != "sequential,sequential-split4321" || ap.Cells[1].Cell != "train/full/sequential/split4321" {
		t.Errorf("columns %v, cells %+v", ap.Protocols, ap.Cells)
	}
	for s := range 5 {
		id := cellid.Train{Experiment: "full", Protocol: "sequential", Eval: "split4321", Seed: int64(s)}.String()
		if c := g.Cell(id); c == nil || !c.Params.(*stages.TrainParams).AllowDiverged {
			t.Errorf("cell %s: %v, want a new cell that keeps a diverged run", id, c)
		}
	}
	rows := g.Cell(cellid.Reproduction).Params.(*judge.Params).Disputed
	if len(rows) != 2 || rows[0].Column != "" || rows[1].Column != "sequential-split4321" {
		t.Errorf("reproduction's disputed rows = %+v", rows)
	}
	// The authors' runs on split 2 (run_seq.py --val --val-seed 4321) are
	// a file of their own: without it the row is an error naming it; with
	// it the row reads its seeds, not split 1's.
	withRef := strings.Replace(two, `reference_note = "none run on split 2"`, `reference = "g16_sgd_refr_s10_w512"`, 1)
	if _, err := disputedGraph(t, withRef, "paper"); err == nil || !strings.Contains(err.Error(), "disputed.row[1].reference: ") ||
		!strings.Contains(err.Error(), "g16_sgd_refr_s10_w512.split4321.tsv") {
		t.Errorf("the authors' runs on split 2, no file: err %v", err)
	}
	split2 := strings.Replace(disputedRuns, "0\t91.50\t7.00\t16885\n2\t92.10\t6.50\t16885\n", "5\t40.00\t9.00\t16885\n", 1)
	g, err = disputedGraphFiles(t, withRef, "paper", map[string]string{"g16_sgd_refr_s10_w512.split4321.tsv": split2})
	if err != nil {
		t.Fatal(err)
	}
	rows = g.Cell(cellid.Reproduction).Params.(*judge.Params).Disputed
	if len(rows) != 2 || rows[0].RefValSeed != 0 || len(rows[0].RefAcc) != 2 ||
		rows[1].RefValSeed != 4321 || len(rows[1].RefAcc) != 1 || rows[1].RefAcc[0] != 40 || rows[1].RefSeeds[0] != 5 {
		t.Errorf("rows on split 1 and split 2 with the authors' runs = %+v", rows)
	}
	for _, tc := range []struct{ eval, want string }{
		{"split0", `disputed.row[1].eval: "split0": want split<seed>`},
		{"test", `disputed.row[1].eval: "test": want split<seed>`},
		{"4321", `disputed.row[1].eval: "4321": want split<seed>`},
	} {
		_, err = disputedGraph(t, strings.Replace(two, `eval = "split4321"`, `eval = "`+tc.eval+`"`, 1), "paper")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("eval %s: err %v, want %q", tc.eval, err, tc.want)
		}
	}
}
