package stages

import (
	"errors"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"testing"
)

// paperTeX is the paper's source beside the work tree (../shared/spec in
// CI and in the worktrees); the transcription tests skip without it.
const paperTeX = "../../shared/spec/paper.tex"

// TestPublishedLines checks the transcription of paper/published.toml
// against the paper: every value's printed text (its mean at its
// decimals) is on the line it names, a plotted value's line is its
// figure's label, every claim's quote is on its line, and every group of
// numbers not run spans lines of the paper.
func TestPublishedLines(t *testing.T) {
	b, err := os.ReadFile(paperTeX)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s not present: the transcription is not checked", paperTeX)
	}
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	pub, err := LoadPublished("../paper/published.toml")
	if err != nil {
		t.Fatal(err)
	}
	at := func(n int) string {
		if n < 1 || n > len(lines) {
			return ""
		}
		return lines[n-1]
	}
	for _, v := range pub.Value {
		l := at(v.Line)
		if v.Plot {
			if !strings.Contains(l, `\label{fig:`) {
				t.Errorf("%s: line %d is not a figure's label: %q", v.ID, v.Line, l)
			}
			continue
		}
		if v.Text != "" {
			if !strings.Contains(l, v.Text) {
				t.Errorf("%s: %q is not on line %d: %q", v.ID, v.Text, v.Line, l)
			}
			continue
		}
		txt := fmtN(v.Mean, v.Places())
		txt = strings.TrimPrefix(txt, "-")
		if !regexp.MustCompile(`(^|[^\d.])` + regexp.QuoteMeta(txt) + `($|[^\d])`).MatchString(l) {
			t.Errorf("%s: %q is not on line %d: %q", v.ID, txt, v.Line, l)
		}
	}
	for _, c := range pub.Claim {
		if !strings.Contains(at(c.Line), c.Quote) {
			t.Errorf("claim %s: %q is not on line %d: %q", c.ID, c.Quote, c.Line, at(c.Line))
		}
	}
	for _, g := range pub.NotRun {
		if g.Lines[1] > len(lines) {
			t.Errorf("not run %q: lines %v beyond the paper's %d", g.What, g.Lines, len(lines))
		}
	}
}
