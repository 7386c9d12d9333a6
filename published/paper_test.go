package published

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"repro/numbers"
)

// paperTeX is the paper's source beside the work tree: ../shared/spec in
// CI and in the main checkout, ../../shared/spec from a worktree under
// /work/wt (REPRO_PAPER_TEX overrides both). The transcription tests skip
// without it.
var paperTeX = func() string {
	if p := os.Getenv("REPRO_PAPER_TEX"); p != "" {
		return p
	}
	for _, p := range []string{"../../shared/spec/paper.tex", "../../../shared/spec/paper.tex"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "../../shared/spec/paper.tex"
}()

// printedAt returns where the line l prints x at d decimals with its
// sign: the index just after the digits of each match (none: the number is
// not there). The digits are bounded by no other digit, and preceded by a
// minus (as the paper writes one: -, $-$, {-}, \text{--}, \minus, U+2212)
// exactly when x is negative. A range's dash (0.31--0.35) is not a minus,
// and an interval's bounds ([-0.3,+0.1]) and an s.d. (\pm0.3) are not the
// number.
func printedAt(l string, x float64, d int) []int {
	l = notNumbers.ReplaceAllStringFunc(l, func(m string) string { return strings.Repeat(" ", len(m)) })
	txt := numbers.Fixed(x, d)
	neg := strings.HasPrefix(txt, "-")
	txt = strings.TrimPrefix(txt, "-")
	re := regexp.MustCompile(`(^|[^\d.])(` + regexp.QuoteMeta(txt) + `)($|[^\d])`)
	var ends []int
	for off := 0; off < len(l); {
		m := re.FindStringSubmatchIndex(l[off:])
		if m == nil {
			break
		}
		start, end := off+m[4], off+m[5]
		if minusBefore(l[:start]) == neg {
			ends = append(ends, end)
		}
		off = start + 1
	}
	return ends
}

// notNumbers are the printings of bounds and spreads that a value's mean
// is not: an interval's brackets and an s.d. after \pm.
var notNumbers = regexp.MustCompile(`\[[^\]]*\d\.\d[^\]]*,[^\]]*\]|\\pm\s*\d+(\.\d+)?`)

// minusBefore reports whether the text before a number ends in a minus.
func minusBefore(p string) bool {
	p = strings.TrimRight(p, " ~$")
	for _, m := range []string{"\u2212", "{-}", `\text{--}`, `\text{-}`, `\minus`, `\textminus`} {
		if strings.HasSuffix(p, m) {
			return true
		}
	}
	return strings.HasSuffix(p, "-") && !strings.HasSuffix(p, "--")
}

// readPaper reads paper.tex as lines, skipping the test without it.
func readPaper(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(paperTeX)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s not present: the transcription is not checked", paperTeX)
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(b), "\n")
}

// loadPaper reads and checks paper/published.toml.
func loadPaper() (*File, error) {
	const path = "../paper/published.toml"
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, string(b))
}

// TestPublishedLines checks the transcription of paper/published.toml
// against the paper: every value's and restatement's printed text (its
// mean at its decimals, with its sign) is on the line it names, a plotted
// value's line is its figure's label, a restatement prints the number of
// the value it restates, every claim's quote is on its line, and every
// group of numbers not run spans lines of the paper.
func TestPublishedLines(t *testing.T) {
	lines := readPaper(t)
	pub, err := loadPaper()
	if err != nil {
		t.Fatal(err)
	}
	at := func(n int) string {
		if n < 1 || n > len(lines) {
			return ""
		}
		return lines[n-1]
	}
	check := func(what string, line int, mean float64, places int, text string) {
		l := at(line)
		if text != "" {
			if !strings.Contains(l, text) {
				t.Errorf("%s: %q is not on line %d: %q", what, text, line, l)
			}
			return
		}
		if len(printedAt(l, mean, places)) == 0 {
			t.Errorf("%s: %s is not on line %d: %q", what, numbers.Fixed(mean, places), line, l)
		}
	}
	values := map[string]*Value{}
	for i, v := range pub.Value {
		values[v.ID] = &pub.Value[i]
		if v.Plot {
			if !strings.Contains(at(v.Line), `\label{fig:`) {
				t.Errorf("%s: line %d is not a figure's label: %q", v.ID, v.Line, at(v.Line))
			}
			continue
		}
		check(v.ID, v.Line, v.Mean, v.Places(), v.Text)
	}
	for _, r := range pub.Restatement {
		what := fmt.Sprintf("restatement of %s at line %d", r.Of, r.Line)
		check(what, r.Line, r.Mean, r.Places(), r.Text)
		// The same number: the value, printed as the restatement prints
		// it, reads the same (91.62 restated as 91.6 is; 91.6 as 91.7 is
		// not).
		v := values[r.Of]
		if p := min(r.Places(), v.Places()); numbers.Fixed(v.Mean, p) != numbers.Fixed(r.Mean, p) {
			t.Errorf("%s: %s does not restate the value's %s", what, numbers.Fixed(r.Mean, r.Places()), numbers.Fixed(v.Mean, v.Places()))
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

// isRuleNumber reports whether an entry printed as text (or, without
// text, its mean at places decimals) is a number by the counting rule: one
// printed with a decimal point. Integers, counts in words and plotted
// points are judged too, but come on top of the paper's count.
func isRuleNumber(text string, mean float64, places int) bool {
	if text == "" {
		text = numbers.Fixed(mean, places)
	}
	return regexp.MustCompile(`\d+\.\d+`).MatchString(text)
}

// namedLines counts, per line of paper.tex, the values and restatements
// of pub that print a number by the rule there, and returns with it how
// many entries print no such number (plotted points, integers, words).
func namedLines(pub *File) (named map[int]int, others int) {
	named = map[int]int{}
	for _, v := range pub.Value {
		if v.Plot || !isRuleNumber(v.Text, v.Mean, v.Places()) {
			others++
			continue
		}
		named[v.Line]++
	}
	for _, r := range pub.Restatement {
		if !isRuleNumber(r.Text, r.Mean, r.Places()) {
			others++
			continue
		}
		named[r.Line]++
	}
	return named, others
}

// TestPaperCount checks the paper's count of numbers and each not-run
// group's count against paper.tex: a group counts the numbers on its
// lines that no value or restatement names.
func TestPaperCount(t *testing.T) {
	per := paperNumbers(readPaper(t))
	total := 0
	for _, n := range per {
		total += n
	}
	pub, err := loadPaper()
	if err != nil {
		t.Fatal(err)
	}
	if pub.PaperNumbers != total {
		t.Errorf("paper_numbers = %d, the paper has %d by the rule", pub.PaperNumbers, total)
	}
	named, _ := namedLines(pub)
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

// TestPaperAccounted checks that every number of the paper is accounted
// for exactly once: judged (a value or a restatement names it) or in one
// not-run group, the groups never overlapping, so that the values, the
// restatements and the groups' counts add up to paper_numbers plus the
// entries the rule does not count: plotted points, integers and words,
// and a number two values name (a line printing one number that two
// cells compute). The summary's total ("the paper's N with a decimal
// point and M others") is that sum once restatements are counted.
func TestPaperAccounted(t *testing.T) {
	per := paperNumbers(readPaper(t))
	pub, err := loadPaper()
	if err != nil {
		t.Fatal(err)
	}
	named, others := namedLines(pub)
	grouped := map[int]string{}
	counted := 0
	for _, g := range pub.NotRun {
		counted += g.Count
		for l := g.Lines[0]; l <= g.Lines[1]; l++ {
			if w, ok := grouped[l]; ok {
				t.Errorf("not run %q and %q both cover line %d", w, g.What, l)
			}
			grouped[l] = g.What
		}
	}
	unnamed, twice := 0, 0
	for l, n := range per {
		if u := n - named[l]; u > 0 {
			unnamed += u
			if _, ok := grouped[l]; !ok {
				t.Errorf("line %d: %d of its numbers are neither named nor in a not-run group", l, u)
			}
		}
	}
	for l, n := range named {
		if d := n - per[l]; d > 0 {
			twice += d
			t.Logf("line %d: %d entries more than its %d numbers (one number named twice)", l, d, per[l])
		}
	}
	if unnamed != counted {
		t.Errorf("the not-run groups count %d numbers, the paper has %d no value or restatement names", counted, unnamed)
	}
	entries := len(pub.Value) + len(pub.Restatement) + counted
	if want := pub.PaperNumbers + others + twice; entries != want {
		t.Errorf("values %d + restatements %d + not run %d = %d, want the paper's %d + %d not counted by the rule + %d named twice = %d",
			len(pub.Value), len(pub.Restatement), counted, entries, pub.PaperNumbers, others, twice, want)
	}
	t.Logf("values %d + restatements %d + not run %d = %d: the paper's %d, %d not counted by the rule, %d named twice",
		len(pub.Value), len(pub.Restatement), counted, entries, pub.PaperNumbers, others, twice)
}

// transcribed is one entry of published.toml as the transcription tests
// check it against its line.
type transcribed struct {
	what   string
	line   int
	mean   float64
	places int
	sd     *float64
	n      int // 0: not stated
	lo, hi *float64
}

// seedCount finds a seed count a line states ("six seeds", "three seeds
// each", "one seed", "six seed pairs"); countWord any count in words.
var (
	seedCount = regexp.MustCompile(`\b(one|two|three|four|five|six|twelve)\s+(seeds?|seed pairs|pairs)\b`)
	countWord = regexp.MustCompile(`(?i)\b(one|two|three|four|five|six|twelve)\b`)
)

var countWords = map[string]int{"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "twelve": 12}

// sdAfter matches an s.d. printed after a mean (\pm0.3), and interval an
// interval ([-0.3,+0.4]).
var (
	sdAfter  = regexp.MustCompile(`^\s*\$?\s*\\pm\s*\$?\s*(\d+(?:\.\d+)?)`)
	interval = regexp.MustCompile(`\[([^\],\[]+),([^\]\[]+)\]`)
)

// boundIs reports whether a printed bound (with its sign, as the paper
// writes it) is x at the bound's own decimals.
func boundIs(printed string, x float64) bool {
	s := strings.NewReplacer("$", "", " ", "", "+", "", "{-}", "-", "\u2212", "-", `\text{--}`, "-", `\minus`, "-").Replace(printed)
	d := 0
	if _, frac, ok := strings.Cut(s, "."); ok {
		d = len(frac)
	}
	return numbers.Fixed(x, d) == s
}

// checkPrinted checks one entry's mean, s.d., interval and n against its
// line l (next is the line after, where a sentence may go on): some
// printing of the mean on l (with its sign) is followed by the entry's
// s.d. if it has one and by none if it has none; the entry's interval is
// printed on l or next; and when l states seed counts in one word only
// ("six seeds", "six seed pairs"), it is the entry's n. It returns what
// is wrong ("" when nothing).
func checkPrinted(e transcribed, l, next string) string {
	ends := printedAt(l, e.mean, e.places)
	if len(ends) == 0 {
		return fmt.Sprintf("%s is not on the line", numbers.Fixed(e.mean, e.places))
	}
	var why []string
	for _, end := range ends {
		m := sdAfter.FindStringSubmatch(l[end:])
		why = nil
		switch {
		case e.sd == nil && m != nil:
			why = append(why, fmt.Sprintf("the line prints an s.d. %s the entry does not have", m[1]))
		case e.sd != nil && m == nil:
			why = append(why, fmt.Sprintf("the entry's s.d. %s is not printed after the mean", numbers.Fixed(*e.sd, e.places)))
		case e.sd != nil && m[1] != numbers.Fixed(*e.sd, e.places):
			why = append(why, fmt.Sprintf("s.d. %s, the line prints %s", numbers.Fixed(*e.sd, e.places), m[1]))
		}
		if why == nil {
			break
		}
	}
	if e.lo != nil {
		found := false
		for _, iv := range interval.FindAllStringSubmatch(l+" "+next, -1) {
			found = found || boundIs(iv[1], *e.lo) && boundIs(iv[2], *e.hi)
		}
		if !found {
			why = append(why, fmt.Sprintf("the interval [%s, %s] is not on the line or the next", numbers.Fixed(*e.lo, e.places), numbers.Fixed(*e.hi, e.places)))
		}
	}
	words := map[int]bool{}
	for _, m := range countWord.FindAllStringSubmatch(l, -1) {
		words[countWords[strings.ToLower(m[1])]] = true
	}
	if len(words) == 1 && seedCount.MatchString(l) && e.n > 0 && !words[e.n] {
		why = append(why, fmt.Sprintf("n = %d, the line states %v seeds", e.n, slices.Collect(maps.Keys(words))))
	}
	return strings.Join(why, "; ")
}

// transcriptionSample is how many entries TestTranscriptionSample draws
// per run: about what a reviewer checks by hand (the audit of 6 December
// 2026 drew 40).
const transcriptionSample = 40

// TestTranscriptionSample draws a random sample of the values and
// restatements of published.toml, a new one each run, and checks each
// one's mean, s.d., interval and n against its line (checkPrinted). A
// failure prints the seed: REPRO_TRANSCRIPTION_SEED=<seed> draws the same
// sample again, and REPRO_TRANSCRIPTION_SAMPLE=0 checks every entry.
func TestTranscriptionSample(t *testing.T) {
	lines := readPaper(t)
	pub, err := loadPaper()
	if err != nil {
		t.Fatal(err)
	}
	var all []transcribed
	values := map[string]*Value{}
	for i, v := range pub.Value {
		values[v.ID] = &pub.Value[i]
		if v.Plot || v.Text != "" {
			continue // a figure's point, or a printing that is not digits
		}
		all = append(all, transcribed{what: v.ID, line: v.Line, mean: v.Mean, places: v.Places(), sd: v.SD, n: v.N, lo: v.Lo, hi: v.Hi})
	}
	for _, r := range pub.Restatement {
		if r.Text != "" {
			continue
		}
		all = append(all, transcribed{what: "restatement of " + r.Of, line: r.Line, mean: r.Mean, places: r.Places(), sd: r.SD})
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("REPRO_TRANSCRIPTION_SEED"); s != "" {
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("REPRO_TRANSCRIPTION_SEED=%q: %v", s, err)
		}
	}
	n := transcriptionSample
	if s := os.Getenv("REPRO_TRANSCRIPTION_SAMPLE"); s != "" {
		if n, err = strconv.Atoi(s); err != nil {
			t.Fatalf("REPRO_TRANSCRIPTION_SAMPLE=%q: %v", s, err)
		}
	}
	if n <= 0 || n > len(all) {
		n = len(all)
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	for _, e := range all[:n] {
		l, next := "", ""
		if e.line <= len(lines) {
			l = lines[e.line-1]
		}
		if e.line < len(lines) {
			next = lines[e.line]
		}
		if why := checkPrinted(e, l, next); why != "" {
			t.Errorf("%s, line %d: %s: %q (REPRO_TRANSCRIPTION_SEED=%d draws this sample again)", e.what, e.line, why, l, seed)
		}
	}
}
