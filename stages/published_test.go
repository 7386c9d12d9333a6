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

// paperNumbers counts the paper's numbers by the rule docs/verdicts.md
// states: from the first \section on, every number printed with a decimal
// point, an s.d. counted with its mean and an interval with its estimate
// (neither counted again), references, comment lines and the coordinates
// and sizes of TikZ drawings left out. A number written right after a
// command of math or emphasis (90.1\to91.6, \approx0.5, \mathbf{91.6})
// counts; one glued to another word (v1.2, W_2.5, \hspace{0.5em}) does
// not. It returns the count per line (1-based).
func paperNumbers(lines []string) map[int]int {
	strip := []*regexp.Regexp{
		regexp.MustCompile(`\\(ref|label|citep|citet|cite|eqref)\{[^}]*\}`),
		regexp.MustCompile(`\\pm\s*\d+\.\d+`),
		regexp.MustCompile(`\[[^\]]*\d\.\d[^\]]*\]`),
	}
	num := regexp.MustCompile(`\d+\.\d+`)
	math := regexp.MustCompile(`\\(to|approx|sim|mathbf\{|textbf\{)$`)
	out := map[int]int{}
	on, tikz := false, false
	for i, l := range lines {
		if strings.HasPrefix(l, `\section{`) {
			on = true
		}
		if strings.Contains(l, `\begin{tikzpicture}`) {
			tikz = true
		}
		if tikz {
			tikz = !strings.Contains(l, `\end{tikzpicture}`)
			continue
		}
		if !on || strings.HasPrefix(strings.TrimSpace(l), "%") {
			continue
		}
		for _, re := range strip {
			l = re.ReplaceAllString(l, "")
		}
		for _, m := range num.FindAllStringIndex(l, -1) {
			if m[0] > 0 && strings.ContainsRune(`abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_.\{`, rune(l[m[0]-1])) && !math.MatchString(l[:m[0]]) {
				continue
			}
			out[i+1]++
		}
	}
	return out
}

// TestPaperCount checks the paper's count of numbers and each not-run
// group's count against paper.tex: a group counts the numbers on its
// lines that no published value names.
func TestPaperCount(t *testing.T) {
	b, err := os.ReadFile(paperTeX)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s not present", paperTeX)
	}
	if err != nil {
		t.Fatal(err)
	}
	per := paperNumbers(strings.Split(string(b), "\n"))
	total := 0
	for _, n := range per {
		total += n
	}
	pub, err := LoadPublished("../paper/published.toml")
	if err != nil {
		t.Fatal(err)
	}
	if pub.PaperNumbers != total {
		t.Errorf("paper_numbers = %d, the paper has %d by the rule", pub.PaperNumbers, total)
	}
	named := map[int]int{}
	for _, v := range pub.Value {
		if !v.Plot {
			named[v.Line]++
		}
	}
	for _, g := range pub.NotRun {
		n := 0
		for l := g.Lines[0]; l <= g.Lines[1]; l++ {
			n += max(per[l]-named[l], 0)
		}
		if n != g.Count {
			t.Errorf("not run %q: count %d, the paper's lines %v have %d numbers no value names", g.What, g.Count, g.Lines, n)
		}
	}
}
