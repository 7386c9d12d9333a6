package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"repro/experiments"
)

// paperTestConfig is a two-row table over real MNIST: backprop rows (the
// fastest learner), every 50th stream sample, two seeds.
var paperTestConfig = mnistSmokeSettings + `
# The same cells on one seed: a profile other than the default renders
# into paper/one/, never over the default profile's tables.
[profile.one]
seeds = [0]
split_seeds = [1234]
[profile.one.train]
stream_stride = 50
eval_stride = 10

` + experiments.TestExperiments(
	experiments.TestExperiment{Name: "a", Protocols: []string{"sequential", "static"}, Section: []string{"lr = 1e-3"}},
	experiments.TestExperiment{Name: "b", Protocols: []string{"sequential"}, Section: []string{"lr = 3e-3"}},
) + "# ---- tables (experiments/tables.go) ----\n" + experiments.TestTable{
	Head:    `name = "t"; label = "tab:t"; caption = "Two rows."; header = "Variant"; bold = ["sequential"]; param = "bp.lr"; param_title = "lr"; published = "paper/published.toml"`,
	Columns: []string{`id = "sequential"; title = "Sequential"; protocol = "sequential"`, `id = "static"; title = "Static"; protocol = "static"`},
	Rows: []string{
		`experiment = "a"; label = "row a"`,
		`experiment = "b"; label = "row b"`,
		`experiment = "night"; label = "not configured"; na = ["static"]; not_run = "the night is not configured in this test"`,
	},
	Compares: []string{`id = "a-b"; a = "a"; b = "b"; protocol = "sequential"`},
}.TOML()

const paperTestPublished = `
[[value]]
id = "t/a/sequential"
mean = 88.8
sd = 0.3
n = 6
cite = "Table tab:ablation, row BP+ER"
line = 1
`

// TestPaperEndToEnd runs the real CLI on real MNIST: the run renders the
// table into paper/; check passes; changing one row's config makes check
// name exactly that row's number, the rerun executes only that row's cells
// and the table cells, and check passes again.
func TestPaperEndToEnd(t *testing.T) {
	dir, cfg := mnistProject(t, paperTestConfig, map[string]string{"paper/published.toml": paperTestPublished})
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	out := mustRepro(t, dir, "run", "-j", "2", "-q")
	for _, want := range []string{"wrote paper/tables/t.tex", "wrote paper/tables/t.ids.json", "wrote paper/reproduction.tex"} {
		if !strings.Contains(out, want) {
			t.Errorf("run output lacks %q:\n%s", want, out)
		}
	}
	tex, err := os.ReadFile(filepath.Join(dir, "paper/tables/t.tex"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`\toprule`, `row a & $10^{-3}$ & \reprocard{t.a.sequential}{$`, `row b & $3{\cdot}10^{-3}$ & \reprocard{t.b.sequential}{$`, "SMOKE TEST OUTPUT", "% row 1: t/a/sequential, t/a/static", `not configured &  & {\scriptsize not run$^{b}$} & --- \\`, `Not run: $^{a}$\,experiment b has no protocol static; $^{b}$\,the night is not configured in this test`} {
		if !strings.Contains(string(tex), want) {
			t.Errorf("t.tex lacks %q:\n%s", want, tex)
		}
	}
	if out := mustRepro(t, dir, "check"); !strings.Contains(out, "paper/ is current") {
		t.Fatalf("check after the run: %s", out)
	}
	compileTeX(t, filepath.Join(dir, "paper"))
	why := mustRepro(t, dir, "why", "paper/tables/t.tex:1:1")
	for _, want := range []string{"number t/a/sequential", "train/a/sequential/split1234/seed0", "train/a/sequential/split1234/seed1", "result sha256:", "split/mnist-1234", "code ", "train.bp.lr = "} {
		if !strings.Contains(why, want) {
			t.Errorf("why lacks %q:\n%s", want, why)
		}
	}
	if why2 := mustRepro(t, dir, "why", "t/a/sequential"); !strings.Contains(why2, "number t/a/sequential") {
		t.Errorf("why by ID: %s", why2)
	}
	if why3 := mustRepro(t, dir, "why", "t/compare/a-b"); !strings.Contains(why3, "seed-paired bootstrap over 2 seeds") {
		t.Errorf("why of a comparison: %s", why3)
	}
	out = mustRepro(t, dir, "run", "--profile", "one", "-q")
	if !strings.Contains(out, "wrote paper/one/tables/t.tex") || !strings.Contains(out, "ran 3 cells") {
		t.Errorf("run --profile one (train cells shared with smoke's seed 0; want only aggregate, render, reproduction):\n%s", out)
	}
	if tex2, _ := os.ReadFile(filepath.Join(dir, "paper/tables/t.tex")); string(tex2) != string(tex) {
		t.Errorf("another profile overwrote the default profile's table")
	}
	// gc keeps what every profile reaches: with everything past gc's
	// grace period, a gc of the default profile leaves profile one's
	// cells; --profile-only removes them (its aggregate, render and
	// reproduction cells: the train cells are smoke's too).
	ageTree(t, filepath.Join(dir, "store"), 2*time.Hour)
	if out := mustRepro(t, dir, "gc", "--apply"); !strings.Contains(out, "removed 0 cell records") || !strings.Contains(out, "of profiles smoke, one") {
		t.Errorf("gc --apply:\n%s", out)
	}
	if out := mustRepro(t, dir, "run", "--profile", "one", "-q"); !strings.HasPrefix(out, "nothing to do") {
		t.Errorf("run --profile one after gc:\n%s", out)
	}
	if out := mustRepro(t, dir, "gc", "--apply", "--profile-only"); !strings.Contains(out, "removed 3 cell records") || !strings.Contains(out, "of profile smoke\n") {
		t.Errorf("gc --apply --profile-only:\n%s", out)
	}
	if out := mustRepro(t, dir, "run", "--profile", "one", "-q"); !strings.Contains(out, "ran 3 cells") {
		t.Errorf("run --profile one after gc --profile-only:\n%s", out)
	}
	// A profile whose name climbs out of the work tree writes nothing
	// outside paper/: the run is refused (by the config's validation or by
	// the output path check) before any work.
	evil := strings.Replace(cfg, "[profile.one]", "[profile.\"../../evilprof\"]\nseeds = [0]\nsplit_seeds = [1234]\n\n[profile.one]", 1)
	write("evil.toml", evil)
	if out, err := repro(t, dir, "run", "--config", "evil.toml", "--profile", "../../evilprof", "-q"); err == nil {
		t.Errorf("run --profile ../../evilprof succeeded:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "..", "evilprof")); err == nil {
		t.Errorf("run --profile ../../evilprof wrote %s", filepath.Join(dir, "..", "evilprof"))
	}
	show := mustRepro(t, dir, "show", "t")
	if !strings.Contains(show, "row a") || !strings.Contains(show, "±") {
		t.Errorf("show: %s", show)
	}
	rep := mustRepro(t, dir, "show", "reproduction")
	if !strings.Contains(rep, "t/a/sequential") || !strings.Contains(rep, "88.8 ± 0.3") {
		t.Errorf("show reproduction: %s", rep)
	}

	// Change row b's learning rate: check names b's number (and the
	// comparison that uses it), not a's.
	write("pipeline.toml", strings.Replace(cfg, "lr = 3e-3", "lr = 2e-3", 1))
	out, err = repro(t, dir, "check")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("check after a config change: err %v\n%s", err, out)
	}
	if !strings.Contains(out, "t/b/sequential (row 2, column 1") || !strings.Contains(out, "config changed: train.bp.lr 0.003 -> 0.002") {
		t.Errorf("check does not name the stale number and why:\n%s", out)
	}
	if strings.Contains(out, "t/a/sequential") {
		t.Errorf("check names row a, which did not change:\n%s", out)
	}
	plan := mustRepro(t, dir, "plan")
	if !strings.Contains(plan, "5 to run") {
		t.Errorf("plan after changing row b (want b's 2 train cells, aggregate, render, reproduction):\n%s", plan)
	}
	planRerunsOnly(t, plan, "train/b/")
	out = mustRepro(t, dir, "run", "-j", "2", "-q")
	if !strings.Contains(out, "ran 5 cells") || !strings.Contains(out, "wrote paper/tables/t.tex") {
		t.Errorf("rerun after the change:\n%s", out)
	}
	if tex2, _ := os.ReadFile(filepath.Join(dir, "paper/tables/t.tex")); !strings.Contains(string(tex2), `row b & $2{\cdot}10^{-3}$`) {
		t.Errorf("re-rendered table does not show the new lr:\n%s", tex2)
	}
	if out := mustRepro(t, dir, "check"); !strings.Contains(out, "paper/ is current") {
		t.Fatalf("check after the rerun: %s", out)
	}
	// Nothing changed: a second run does no work and rewrites nothing.
	if out := mustRepro(t, dir, "run", "-q"); !strings.HasPrefix(out, "nothing to do") {
		t.Errorf("third run: %s", out)
	}

	// A row whose train cells fail: the run fails, yet renders the table
	// with the row's n (0) and names the failed cells; check flags them.
	// (A learning rate of 10, the largest pipeline.toml accepts, with the
	// raw error and a target scale of 1000, is a valid setting whose
	// weights diverge: the cell fails instead of caching a number.)
	bad := strings.Replace(cfg, "# ---- tables", "[[experiment]]\nname = \"c\"\nlearner = \"local\"\ndataset = \"mnist\"\nprotocols = [\"sequential\"]\n[experiment.local]\nhidden = [16, 8]\neta = 10.0\ntgt_scale = 1000.0\nunbounded = true\n\n# ---- tables", 1)
	bad = strings.Replace(bad, "[[table.row]]\nexperiment = \"night\"", "[[table.row]]\nexperiment = \"c\"\nlabel = \"row c\"\nreference = true\n[[table.row]]\nexperiment = \"night\"", 1)
	write("pipeline.toml", bad)
	out, err = repro(t, dir, "run", "-q")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("run with a failing row: err %v\n%s", err, out)
	}
	if !strings.Contains(out, "table t: rendered without 2 of 8 train cells") || !strings.Contains(out, "wrote paper/tables/t.tex") {
		t.Errorf("run with a failing row:\n%s", out)
	}
	tex, _ = os.ReadFile(filepath.Join(dir, "paper/tables/t.tex"))
	if !strings.Contains(string(tex), `row c &  & {\scriptsize($n{=}0$)} & {\scriptsize not run$^{`) || !strings.Contains(string(tex), "t/c/sequential (missing: no seed has a result)") {
		t.Errorf("failed row not shown with n=0:\n%s", tex)
	}
	out, err = repro(t, dir, "check")
	if err == nil || !strings.Contains(out, "train/c/sequential/split1234/seed0 is missing from the committed table and would run: failed last time: cell train/c/sequential/split1234/seed0: diverged: non-finite metrics") {
		t.Errorf("check after a failed row: %v\n%s", err, out)
	}
}

// compileTeX compiles the rendered table and report with pdflatex, with
// the packages paper/main.tex loads, when pdflatex is installed.
func compileTeX(t *testing.T, paper string) {
	t.Helper()
	if _, err := exec.LookPath("pdflatex"); err != nil {
		t.Log("no pdflatex: rendered LaTeX not compiled")
		return
	}
	doc := "\\documentclass{article}\\usepackage{booktabs}\\usepackage{array}\\usepackage{longtable}\\usepackage{amsmath}\n" +
		"\\begin{document}\n\\input{tables/t.tex}\n\\input{reproduction.tex}\n\\end{document}\n"
	if err := os.WriteFile(filepath.Join(paper, "doc.tex"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex")
	cmd.Dir = paper
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("pdflatex on the rendered files: %v\n%s", err, out)
	}
}

// ageTree sets every file's times under dir to age ago (past gc's grace).
func ageTree(t *testing.T, dir string, age time.Duration) {
	t.Helper()
	old := time.Now().Add(-age)
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		return os.Chtimes(path, old, old)
	})
	if err != nil {
		t.Fatal(err)
	}
}
