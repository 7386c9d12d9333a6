package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"repro/artifacts"
	"repro/cellid"
	"repro/experiments"
	"repro/pipeline"
	"repro/stages"
)

// exitCode returns the exit status of a finished command (0 when err is nil).
func exitCode(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	t.Fatalf("not an exit status: %v", err)
	return -1
}

// reproSplit runs the CLI and returns stdout and stderr apart, and the exit status.
func reproSplit(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return reproWith(t, reproBin, dir, args...)
}

const tinyDAG = "cells = 6\nwidth = 3\nfan_in = 2\nwork = 10\n"

// TestOnlyMatchingNothingFails: a glob that selects no cell is a usage
// error naming it, not "nothing to do".
func TestOnlyMatchingNothingFails(t *testing.T) {
	t.Parallel()
	dir := workdir(t, tinyDAG)
	out, errOut, code := reproSplit(t, dir, "run", "--only", "synth/l9")
	if code != 2 || !strings.Contains(errOut, `--only "synth/l9" matches no cell of profile default`) || strings.Contains(out, "nothing to do") {
		t.Fatalf("run --only synth/l9: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if _, errOut, code := reproSplit(t, dir, "verify", "--recompute", "nope/*"); code != 2 || !strings.Contains(errOut, "matches no cell") {
		t.Fatalf("verify --recompute nope/*: exit %d, stderr %q", code, errOut)
	}
	if out := mustRepro(t, dir, "run", "--only", "synth/l0/c1"); !strings.Contains(out, "ran 1 cell,") {
		t.Fatalf("run --only synth/l0/c1: %q", out)
	}
	// A second --only is refused, not silently preferred to the first.
	out, errOut, code = reproSplit(t, dir, "run", "--only", "synth/l0/c1", "--only", "synth/l0/c2")
	if code != 2 || !strings.Contains(errOut, `given twice ("synth/l0/c1", then "synth/l0/c2")`) || strings.Contains(out, "ran ") {
		t.Fatalf("run --only twice: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestPlanJSONEmptyAndReasonsBounded: plan --json prints [] when nothing
// would run, and a plan line stays short however many inputs changed.
func TestPlanJSONEmptyAndReasonsBounded(t *testing.T) {
	t.Parallel()
	dir := workdir(t, "cells = 40\nwidth = 20\nfan_in = 8\nwork = 10\n")
	mustRepro(t, dir, "run", "-q")
	if out, _, code := reproSplit(t, dir, "plan", "--json"); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Fatalf("plan --json with everything cached: exit %d, %q", code, out)
	}
	// Change every first-layer cell: each second-layer cell has 8 changed inputs.
	writeConfig(t, dir, "cells = 40\nwidth = 20\nfan_in = 8\nwork = 10\nscale = 2.0\nscale_layer = 0\n")
	out := mustRepro(t, dir, "plan")
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if len(line) > 7+55+1+maxReasonLen {
			t.Errorf("plan line of %d characters: %s", len(line), line)
		}
	}
	if !strings.Contains(out, "8 inputs changed: synth/l0/c") {
		t.Errorf("plan does not summarise the changed inputs:\n%s", out)
	}
	js, _, _ := reproSplit(t, dir, "plan", "--json")
	var rows []struct {
		Cell    string
		Reasons []struct{ Kind, Detail, Text string }
	}
	if err := json.Unmarshal([]byte(js), &rows); err != nil {
		t.Fatalf("plan --json: %v\n%.2000s", err, js)
	}
	found := false
	for _, r := range rows {
		for _, x := range r.Reasons {
			found = found || x.Kind == "input-changed" && x.Detail == "synth/l0/c1" && x.Text == "input changed: synth/l0/c1"
		}
	}
	if !found {
		t.Errorf("plan --json lost a reason (kind input-changed, detail synth/l0/c1):\n%.2000s", js)
	}
}

func TestSummariseReasons(t *testing.T) {
	long := pipeline.Reason{Kind: pipeline.ReasonConfigChanged, Detail: "profile.seeds [" + strings.Repeat("1, ", 300) + "]"}
	input := func(id string) pipeline.Reason { return pipeline.Reason{Kind: pipeline.ReasonInputChanged, Detail: id} }
	for _, tc := range []struct {
		name    string
		reasons []pipeline.Reason
		want    string
	}{
		{"one", []pipeline.Reason{{Kind: pipeline.ReasonNew}}, "new"},
		{"one input", []pipeline.Reason{{Kind: pipeline.ReasonStageVersion, Detail: "s 1 -> 2"}, input("a/b")}, "stage version s 1 -> 2; input changed: a/b"},
		{"inputs", []pipeline.Reason{input("a"), input("b"), input("c")}, "3 inputs changed: a and 2 more"},
	} {
		if got := summariseReasons(tc.reasons); got != tc.want {
			t.Errorf("%s: summariseReasons = %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := summariseReasons([]pipeline.Reason{long}); len(got) > maxReasonLen+10 || !strings.HasSuffix(got, "more characters; plan --json)") {
		t.Errorf("long reason summarised to %d characters: %q", len(got), got)
	}
}

// TestHelp: '<cmd> --help' prints on stdout and exits 0, as 'repro help
// <cmd>' does; every command has a description; the exit statuses are
// documented; a bad flag is still a usage error on stderr.
func TestHelp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range allCommands() {
		if strings.TrimSpace(c.long) == "" {
			t.Errorf("repro help %s: no description", c.name)
		}
		want, _, code := reproSplit(t, dir, "help", c.name)
		if code != 0 {
			t.Fatalf("repro help %s: exit %d", c.name, code)
		}
		for _, flag := range []string{"--help", "-h"} {
			out, errOut, code := reproSplit(t, dir, c.name, flag)
			if code != 0 || out != want || errOut != "" {
				t.Errorf("repro %s %s: exit %d, stderr %q, stdout %q; want exit 0 and %q", c.name, flag, code, errOut, out, want)
			}
		}
	}
	out, _, code := reproSplit(t, dir, "help")
	if code != 0 || !strings.Contains(out, "exit status:") || !strings.Contains(out, "130  interrupted") {
		t.Errorf("repro help: exit %d, no exit statuses:\n%s", code, out)
	}
	if out, errOut, code := reproSplit(t, dir, "plan", "--bogus"); code != 2 || out != "" || !strings.Contains(errOut, "usage: repro plan") {
		t.Errorf("repro plan --bogus: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// A bare repro asks for nothing: usage on stderr, exit 2; a typo gets a
	// suggestion.
	if out, errOut, code := reproSplit(t, dir); code != 2 || out != "" || !strings.Contains(errOut, "usage: repro") {
		t.Errorf("repro: exit %d, stdout %q, stderr %q; want usage on stderr, exit 2", code, out, errOut)
	}
	if _, errOut, code := reproSplit(t, dir, "stauts"); code != 2 || !strings.Contains(errOut, `unknown command "stauts" (did you mean status?)`) {
		t.Errorf("repro stauts: exit %d, stderr %q", code, errOut)
	}
}

func TestDidYouMean(t *testing.T) {
	names := []string{"status", "show", "plan", "ablation"}
	for in, want := range map[string]string{
		"stauts": " (did you mean status?)", "ablaton": " (did you mean ablation?)", "pln": " (did you mean plan?)", "xyzzy": "",
	} {
		if got := didYouMean(in, names); got != want {
			t.Errorf("didYouMean(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestWhyTakesDigestForm: why accepts sha256:<hex>, the form it prints.
func TestWhyTakesDigestForm(t *testing.T) {
	t.Parallel()
	dir := workdir(t, tinyDAG)
	mustRepro(t, dir, "run", "-q")
	var digest string
	for _, v := range planState(t, dir) {
		if _, d, ok := strings.Cut(v, "map[out:"); ok {
			digest = strings.TrimSuffix(d, "]")
			break
		}
	}
	if len(digest) != 64 {
		t.Fatalf("no output digest in plan: %v", planState(t, dir))
	}
	plain := mustRepro(t, dir, "why", digest)
	if got := mustRepro(t, dir, "why", "sha256:"+digest); got != plain || !strings.HasPrefix(got, "cell synth/") {
		t.Fatalf("why sha256:%s = %q, want %q", digest, got, plain)
	}
}

// writeConfig replaces dir's pipeline.toml by a synthetic one, as workdir writes it.
func writeConfig(t *testing.T, dir, synthetic string) {
	t.Helper()
	cfg := "[settings]\nstore = \"store\"\n\n[synthetic]\n" + synthetic
	if err := os.WriteFile(filepath.Join(dir, "pipeline.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestStoreRefusesForeignDirectory: --store naming a directory that holds
// other files is refused before any work, and leaves it untouched; repro
// init makes a store there when asked.
func TestStoreRefusesForeignDirectory(t *testing.T) {
	t.Parallel()
	dir := workdir(t, tinyDAG)
	home := filepath.Join(dir, "home")
	os.MkdirAll(home, 0o755)
	os.WriteFile(filepath.Join(home, "thesis.tex"), []byte("x"), 0o644)
	for _, args := range [][]string{{"run", "--store", home}, {"plan", "--store", home}, {"verify", "--store", home}} {
		out, errOut, code := reproSplit(t, dir, args...)
		if code != 1 || !strings.Contains(errOut, "not a repro store") || !strings.Contains(errOut, "repro init --store") {
			t.Errorf("repro %s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), code, out, errOut)
		}
	}
	if ents, _ := os.ReadDir(home); len(ents) != 1 {
		t.Fatalf("a refused store directory now holds %d entries", len(ents))
	}
	if out := mustRepro(t, dir, "init", "--store", home); !strings.HasPrefix(out, "created store ") {
		t.Fatalf("init: %q", out)
	}
	if out := mustRepro(t, dir, "run", "-q", "--store", home); !strings.Contains(out, "ran 6 cells") {
		t.Fatalf("run after init: %q", out)
	}
	if out := mustRepro(t, dir, "init", "--store", home); !strings.HasPrefix(out, "store ") || !strings.HasSuffix(out, " exists\n") {
		t.Fatalf("init again: %q", out)
	}
	// A new directory and an empty one still become stores by themselves.
	os.MkdirAll(filepath.Join(dir, "empty"), 0o755)
	for _, s := range []string{"empty", "fresh/store"} {
		if out := mustRepro(t, dir, "run", "-q", "--store", s); !strings.Contains(out, "ran 6 cells") {
			t.Fatalf("run --store %s: %q", s, out)
		}
	}
}

// TestOutputsStayUnderPaper: whatever a profile is called, the rendered
// files' paths are checked to lie inside paper/.
func TestOutputsStayUnderPaper(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		profile string
		ok      bool
	}{
		{"paper", true}, {"smoke", true}, {"a/b", true},
		{"../../evilprof", false}, {"..", false}, {"../paper2", false}, {"x/../../..", false},
	} {
		w := &workspace{cfg: &pipeline.Config{Dir: dir, Settings: pipeline.Settings{DefaultProfile: "paper"}}, profile: tc.profile, graph: &pipeline.Graph{}}
		if err := w.checkOutputs(); (err == nil) != tc.ok {
			t.Errorf("profile %q: checkOutputs() = %v, want ok %v", tc.profile, err, tc.ok)
		}
	}
}

var updateReport = flag.Bool("update-report", false, "rewrite paper/reproduction.tex from the committed sidecars")

// repoRoot is the module's root (this package is cmd/repro).
const repoRoot = "../.."

// TestCommittedReportMatchesCommittedTeX: the report rebuilt from the
// committed sidecars is exactly the committed paper/reproduction.tex, so
// what 'show reproduction' prints on a fresh clone is the committed report.
func TestCommittedReportMatchesCommittedTeX(t *testing.T) {
	w := repoWorkspace(t)
	rep, _, err := committedReport(w)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(w.paperPath(reproductionTo))
	if err != nil {
		t.Fatal(err)
	}
	got := stages.ReproductionTeX(rep)
	if *updateReport {
		// The report's own rendering changed (a reproduction stage version):
		// the committed report follows the committed tables.
		if err := os.WriteFile(w.paperPath(reproductionTo), []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got != string(want) {
		t.Errorf("report from the committed sidecars differs from the committed %s:\n%s", reproductionTo, firstDiff(got, string(want)))
	}
}

// TestCommittedTablesRender: rendering the committed sidecars' numbers with
// the current table declarations gives the committed paper/tables/*.tex and
// sidecars byte for byte (with -update-report it rewrites them: for a change
// of the renderer's own text, a render stage version).
func TestCommittedTablesRender(t *testing.T) {
	w := repoWorkspace(t)
	for _, table := range w.tableNames() {
		sc, err := experiments.ReadTableSidecar(w.idsPath(table))
		if errors.Is(err, fs.ErrNotExist) {
			continue // declared, not rendered yet
		}
		if err != nil {
			t.Fatal(err)
		}
		rec := recordOf(sc)
		rec.Table = strings.TrimPrefix(sc.Source, "aggregate/")
		agg := w.graph.Cell(cellid.Aggregate(table)).Params.(*stages.AggregateParams)
		rec.DefaultSeeds, rec.Protocols = agg.DefaultSeeds, agg.Protocols
		rp := *w.graph.Cell(cellid.Render(table)).Params.(*stages.RenderParams)
		// A table rendered by a run where some of its cells could not run
		// (CIFAR-100 here) was rendered from the degraded graph, which
		// shows such cells as "not run" with a note.
		if committed, _ := os.ReadFile(w.texPath(table)); strings.Contains(string(committed), `not run$^{`) {
			rp.ShowNotRun = true
		}
		tex, side, err := stages.RenderTable(&rp, rec)
		if err != nil {
			t.Fatal(err)
		}
		ids, err := json.MarshalIndent(side, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		for path, got := range map[string]string{w.texPath(table): tex, w.idsPath(table): string(ids) + "\n"} {
			if *updateReport {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if want, _ := os.ReadFile(path); got != string(want) {
				t.Errorf("%s rendered from its sidecar differs:\n%s", path, firstDiff(got, string(want)))
			}
		}
	}
}

// repoWorkspace is the repository's own pipeline.toml under its default
// profile, without a store.
func repoWorkspace(t *testing.T) *workspace {
	t.Helper()
	cfg, err := pipeline.LoadConfig(filepath.Join(repoRoot, "pipeline.toml"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := experiments.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	name, _, err := m.Profile("")
	if err != nil {
		t.Fatal(err)
	}
	g, err := m.Build(name)
	if err != nil {
		t.Fatal(err)
	}
	return &workspace{cfg: cfg, profile: name, matrix: m, graph: g}
}

// firstDiff shows the first line where got and want differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n got  %s\n want %s", i+1, a, b)
		}
	}
	return "(equal)"
}

// copyTree copies the committed files a fresh clone has that a command
// reads (pipeline.toml and paper/) into a new directory.
func freshClone(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	err := filepath.WalkDir(repoRoot, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, path)
		if d.IsDir() {
			if rel != "." && rel != "paper" && rel != filepath.Join("paper", "tables") && rel != filepath.Join("paper", "figures") && rel != filepath.Join("paper", "reference-runs") {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		if rel != "pipeline.toml" && filepath.Dir(rel) == "." || filepath.Dir(rel) == "paper" && strings.HasSuffix(rel, ".pdf") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestShowReproductionFreshClone: with an empty store, show reproduction
// prints the committed report (as show <table> prints the committed table).
func TestShowReproductionFreshClone(t *testing.T) {
	t.Parallel()
	dir := freshClone(t)
	tex, err := os.ReadFile(filepath.Join(dir, "paper", reproductionTo))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`\\textbf\{(reproduction \(profile [^)]*\): numbers: [^\n]*\))\.\}`).FindStringSubmatch(string(tex))
	if m == nil {
		t.Fatalf("no summary in the committed %s", reproductionTo)
	}
	out, errOut, code := reproSplit(t, dir, "show", "reproduction")
	want := m[1]
	if code != 0 || !strings.Contains(out, "showing the report of the committed paper/tables/*.ids.json") || !strings.Contains(out, want) {
		t.Fatalf("show reproduction on a fresh clone: exit %d, stderr %q, stdout:\n%s\nwant %q", code, errOut, out, want)
	}
	sum, _, code := reproSplit(t, dir, "show", "reproduction", "--summary")
	if code != 0 || strings.TrimSpace(sum) != want {
		t.Errorf("show reproduction --summary: exit %d, %q, want the one line %q", code, sum, want)
	}
}

// outputBlob returns the blob path of a cached cell's output "out".
func outputBlob(t *testing.T, dir, cell string) (digest, path string) {
	t.Helper()
	_, d, ok := strings.Cut(planState(t, dir)[cell], "map[out:")
	if !ok {
		t.Fatalf("%s: no output in plan", cell)
	}
	d = strings.TrimSuffix(d, "]")
	return d, filepath.Join(dir, "store", "blobs", d[:2], d+".zst")
}

// TestVerifyFindsEverything: a blob deleted from under a manifest, a stray
// file in the blob tree and a corrupt blob that cannot be moved aside are
// each reported (exit 1) with the cells that need them and the command that
// recomputes them; stray files are moved aside, and gc leaves them.
func TestVerifyFindsEverything(t *testing.T) {
	t.Parallel()
	dir := workdir(t, tinyDAG)
	mustRepro(t, dir, "run", "-q")

	d, blob := outputBlob(t, dir, "synth/l0/c0")
	os.Remove(blob)
	out, _, code := reproSplit(t, dir, "verify")
	for _, want := range []string{
		"MISSING blobs/" + d[:2] + "/" + d + ".zst: output out of cell synth/l0/c0: blob " + d[:12] + ": not found\n",
		"  needed by synth/l0/c0 (key ", "): repro run --only 'synth/l0/c0' recomputes it\n", "1 problem(s)",
	} {
		if code != 1 || !strings.Contains(out, want) {
			t.Errorf("verify after deleting a blob: exit %d, output lacks %q:\n%s", code, want, out)
		}
	}
	if out := mustRepro(t, dir, "run", "--only", "synth/l0/c0", "-q"); !strings.Contains(out, "ran 1 cell,") {
		t.Errorf("the command verify named: %s", out)
	}

	garbage := filepath.Join(dir, "store", "blobs", "00", "garbage.zst")
	os.MkdirAll(filepath.Dir(garbage), 0o755)
	os.WriteFile(garbage, []byte("not zstd"), 0o644)
	out, _, code = reproSplit(t, dir, "verify")
	if code != 1 || !strings.Contains(out, "STRAY blobs/00/garbage.zst: not a blob (the name is no SHA-256 digest); moved to corrupt/garbage.zst\n") {
		t.Errorf("verify with a stray file: exit %d:\n%s", code, out)
	}
	if _, err := os.Stat(garbage); err == nil {
		t.Errorf("the stray file was not moved")
	}
	if out, _, code := reproSplit(t, dir, "verify"); code != 0 || !strings.Contains(out, " 0 problem(s)") {
		t.Errorf("verify after the stray file was moved: exit %d:\n%s", code, out)
	}
	// gc never deletes a file it did not name: it says it left it.
	stray := filepath.Join(dir, "store", "blobs", "01", "notes.txt")
	os.MkdirAll(filepath.Dir(stray), 0o755)
	os.WriteFile(stray, []byte("x"), 0o644)
	old := time.Now().Add(-2 * time.Hour)
	os.Chtimes(stray, old, old)
	if out := mustRepro(t, dir, "gc", "--apply"); !strings.Contains(out, "left 1 other file in the blob tree alone (not named as repro names blobs; not deleted): blobs/01/notes.txt") {
		t.Errorf("gc --apply with a stray file: %s", out)
	}
	if _, err := os.Stat(stray); err != nil {
		t.Errorf("gc removed the stray file: %v", err)
	}

	// A corrupt blob where corrupt/ cannot be made: the corruption first,
	// then why it stayed.
	os.RemoveAll(filepath.Join(dir, "store", "corrupt"))
	os.WriteFile(filepath.Join(dir, "store", "corrupt"), nil, 0o444)
	d, blob = outputBlob(t, dir, "synth/l1/c4")
	b, _ := os.ReadFile(blob)
	b[len(b)/2] ^= 1
	os.Chmod(blob, 0o644)
	os.WriteFile(blob, b, 0o644)
	out, _, code = reproSplit(t, dir, "verify")
	want := "CORRUPT blobs/" + d[:2] + "/" + d + ".zst: blob " + d[:12] + ": corrupt"
	if code != 1 || !strings.Contains(out, want) || !strings.Contains(out, "; could not move it aside: mkdir ") || !strings.Contains(out, "needed by synth/l1/c4 (key ") {
		t.Errorf("verify of a corrupt blob that cannot be moved: exit %d, want %q:\n%s", code, want, out)
	}
}

// TestProgressShowsTrueRunningCount: under -j 2 a cell's end is followed at
// once by the next start; the line, printed on a clock, shows 2 running.
func TestProgressShowsTrueRunningCount(t *testing.T) {
	var out strings.Builder
	p := startProgress(&out, false, "local", true, 20*time.Millisecond)
	cell := &pipeline.Cell{ID: "synth/l0/c0"}
	ev := func(kind pipeline.EventKind, done, running int) {
		p.event(pipeline.Event{Kind: kind, Cell: cell, Done: done, Total: 4, Running: running})
	}
	ev(pipeline.EventStart, 0, 1)
	ev(pipeline.EventStart, 0, 2)
	for i := 1; i <= 2; i++ {
		ev(pipeline.EventDone, i, 1) // the scheduler starts the next cell at once
		ev(pipeline.EventStart, i, 2)
		time.Sleep(60 * time.Millisecond)
	}
	p.finish()
	got := out.String()
	if !strings.Contains(got, "[local] 2/4 cells done, 2 running, 0 failed") || strings.Contains(got, "1 running") {
		t.Errorf("progress lines:\n%s", got)
	}
}

// TestProgressETACountsWork: the ETA divides the expected CPU seconds left
// by those done per second so far, counting a running cell's own progress,
// so one long cell finished first does not make the many short ones left
// look long.
func TestProgressETACountsWork(t *testing.T) {
	p := startProgress(io.Discard, true, "local", false, time.Hour)
	defer p.finish()
	long, short := &pipeline.Cell{ID: "train/long"}, &pipeline.Cell{ID: "train/short"}
	k1, k2 := artifacts.Key{1}, artifacts.Key{2}
	// 100 s of work: a 60 s cell done, a 10 s cell half done, 30 s waiting.
	p.event(pipeline.Event{Kind: pipeline.EventStart, Cell: long, Key: k1, Cost: 60, WorkLeft: 100, Total: 5, Running: 1})
	p.event(pipeline.Event{Kind: pipeline.EventStart, Cell: short, Key: k2, Cost: 10, WorkLeft: 100, Total: 5, Running: 2})
	p.event(pipeline.Event{Kind: pipeline.EventDone, Cell: long, Key: k1, WorkDone: 60, WorkLeft: 40, Done: 1, Total: 5, Running: 1})
	p.cell(k2.String(), short.ID, 1, 2)
	// 65 s done in 130 s of wall: 0.5 per second, 35 left, so 70 s.
	if got, ok := p.eta(130 * time.Second); !ok || got != 70*time.Second {
		t.Errorf("eta %v (%v), want 1m10s", got, ok)
	}
	// Without costs (an executor's events before any is known) it counts
	// cells: 1 of 4 done in 10 s leaves 30 s.
	q := startProgress(io.Discard, true, "local", false, time.Hour)
	defer q.finish()
	q.event(pipeline.Event{Kind: pipeline.EventDone, Cell: short, Key: k2, Done: 1, Total: 4})
	if got, ok := q.eta(10 * time.Second); !ok || got != 30*time.Second {
		t.Errorf("eta without costs %v (%v), want 30s", got, ok)
	}
}

// TestPaperPDF compiles the committed paper (main.tex with the committed
// tables and report) when pdflatex and pdftotext are installed: the first
// table stands on the title page, and the report cites real references.
func TestPaperPDF(t *testing.T) {
	for _, tool := range []string{"pdflatex", "pdftotext"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	t.Parallel()
	paper := filepath.Join(freshClone(t), "paper")
	for range 2 { // twice, so that references resolve
		cmd := exec.Command("pdflatex", "-interaction=nonstopmode", "-halt-on-error", "main.tex")
		cmd.Dir = paper
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("pdflatex main.tex: %v\n%s", err, out)
		}
	}
	text := func(args ...string) string {
		out, err := exec.Command("pdftotext", append(args, filepath.Join(paper, "main.pdf"), "-")...).Output()
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	if p1 := text("-f", "1", "-l", "1"); !strings.Contains(p1, "Table 1:") {
		t.Errorf("page 1 holds no table:\n%s", p1)
	}
	all := text()
	for _, bad := range []string{"??", "tab:ablation", "tab:bpk"} {
		if strings.Contains(all, bad) {
			t.Errorf("the PDF shows %q (an unresolved or raw reference)", bad)
		}
	}
}

// TestLoadText: the wall estimate is restated at the machine's load only
// when other work takes the cores from the run's jobs.
func TestLoadText(t *testing.T) {
	e := pipeline.Estimate{Cells: 10, CPU: 600, Wall: 300, Jobs: 2}
	if got := loadText(e, 0.1, 2); got != "" {
		t.Errorf("idle machine: %q, want nothing", got)
	}
	if got := loadText(e, 0, 2); got != "" {
		t.Errorf("unknown load: %q, want nothing", got)
	}
	// Load 4 on 2 cores with 2 jobs: each job gets a third of a core.
	if got, want := loadText(e, 4, 2), "; at this machine's load (4.0 on 2 cores) about 15m00s wall"; got != want {
		t.Errorf("loaded machine: %q, want %q", got, want)
	}
}
