package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"repro/numbers"
)

// TestPlainCellDecimals: repro show prints a number with the decimals its
// table prints (a realised decay of 9.4e-5 is not "0.0 ± 0.0").
func TestPlainCellDecimals(t *testing.T) {
	t.Parallel()
	six, none := 6, 0
	for _, tc := range []struct {
		dec  *int
		mean float64
		sd   float64
		want string
	}{
		{&six, 0.00009379, 0.0000160, "0.000094 ± 0.000016"},
		{&none, 16885, 0, "16885 ± 0"},
		{nil, 91.64, 0.43, "91.6 ± 0.4"},
	} {
		n := &numbers.NumberRef{Decimals: tc.dec}
		n.Status.Kind = numbers.StatusOK
		n.N, n.Expected = 6, 6
		n.Acc.Mean, n.Acc.SD = tc.mean, tc.sd
		if got := plainCell(n); got != tc.want {
			t.Errorf("plainCell(%v, decimals %v) = %q, want %q", tc.mean, tc.dec, got, tc.want)
		}
	}
}

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
	got := rep.TeX()
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
