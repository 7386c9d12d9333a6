package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"repro/cellid"
	"repro/experiments"
	"repro/pipeline"
	"repro/stages"
)

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
