package published

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"repro/verdict"
)

// File is one file of the paper's published values (paper/published.toml),
// each cited to its line of paper.tex.
type File struct {
	// PaperNumbers is how many numbers the paper states, by the rule of
	// docs/verdicts.md (a test recounts them in paper.tex).
	PaperNumbers int           `toml:"paper_numbers"`
	Value        []Value       `toml:"value"`
	Claim        []Claim       `toml:"claim"`
	NotRun       []NotRunGroup `toml:"not_run"`
	// Restatement are the paper's numbers that print again a value judged
	// elsewhere: one verdict, several lines.
	Restatement []Restatement `toml:"restatement"`
}

// Restatement is a number the paper prints again, on another line, that
// a [[value]] already names: the same number (its printing round-trips to
// the value's) judged once, under the value's ID. A number that prints
// differently is not a restatement but a value of its own.
type Restatement struct {
	// Of is the ID of the [[value]] it restates.
	Of   string `toml:"of"`
	Line int    `toml:"line"`
	Cite string `toml:"cite"`
	// Mean, SD, Decimals and Text are as the line prints them, read as
	// for a value (Value).
	Mean     float64  `toml:"mean"`
	SD       *float64 `toml:"sd"`
	Decimals *int     `toml:"decimals"`
	Text     string   `toml:"text,omitzero"`
}

// Places is the number of decimals the paper prints r with.
func (r *Restatement) Places() int {
	if r.Decimals == nil {
		return 1
	}
	return *r.Decimals
}

// NotRunCategory is why a group of the paper's numbers is not judged.
type NotRunCategory string

// The categories of numbers not run: each group of [[not_run]] names one.
const (
	// NotRunConfig: a setting the paper states (a learning rate, a
	// budget, a gate's threshold), an input of the cells, not a result.
	NotRunConfig NotRunCategory = "configuration"
	// NotRunTheory: a constant, bound or worked example of the method's
	// derivation, not a measurement.
	NotRunTheory NotRunCategory = "theory"
	// NotRunCIFAR100: a CIFAR-100 number; the release is not on the data
	// mirror, so its cells cannot run.
	NotRunCIFAR100 NotRunCategory = "CIFAR-100 release absent"
	// NotRunTiming: a wall-clock time of the authors' machine.
	NotRunTiming NotRunCategory = "machine-specific timing"
	// NotRunNoCell: a measurement no cell of the profile computes yet (it
	// would need a learner feature the profile does not have; a value
	// whose declared cells the ledger does not hold yet is a value, not
	// run until they run).
	NotRunNoCell NotRunCategory = "no cell yet"
	// NotRunDevPhase: a number of the development phase (development
	// split, selection sweeps) that the paper profile does not run.
	NotRunDevPhase NotRunCategory = "development-phase run not in the profile"
	// NotRunRange: the end of a range the paper states over several
	// cells without saying which ("1.3--3.0 across the grid").
	NotRunRange NotRunCategory = "range over unnamed cells"
	// NotRunSeed: a failed run's value (below verdict.FailureBelow) that
	// the paper prints by itself. Its other single runs are judged
	// (Value.SeedsOf: against the normal fitted to ours); a
	// failure is no draw of that normal, and the row's count of failures
	// is judged by itself.
	NotRunSeed NotRunCategory = "single seed of a row"
	// NotRunDerived: a difference or ratio of numbers judged on their
	// own, for which no cell declares the pair (single runs, points of a
	// figure, a ratio; the verdict judges differences of paired cells).
	NotRunDerived NotRunCategory = "derived from judged numbers, no pair declared"
)

// NotRunCategories are the categories a [[not_run]] group may name.
var NotRunCategories = []NotRunCategory{NotRunConfig, NotRunTheory, NotRunCIFAR100, NotRunTiming, NotRunNoCell, NotRunDevPhase, NotRunRange, NotRunSeed, NotRunDerived}

// NotRunGroup is a group of the paper's numbers that no cell of the
// profile computes: the paper's lines that state them, how many there are
// and why they are not run. The report counts them as "not run" so that
// its total is the paper's.
type NotRunGroup struct {
	What  string `toml:"what"`
	Lines []int  `toml:"lines"` // first and last line of paper.tex
	Count int    `toml:"count"`
	// Status is "not run": no cell of the profile computes them (a number
	// a cell computes, or one restating a judged number, is a [[value]] or
	// a [[restatement]], never a group).
	Status string `toml:"status"`
	// Category is why, one of NotRunCategories (omitted from JSON when
	// empty, so a report built from groups without one keeps its bytes).
	Category NotRunCategory `toml:"category" json:"Category,omitempty"`
	Reason   string         `toml:"reason"`
}

// Claim is a comparison the paper states, judged on our numbers with the
// three-way verdict (verdict.Claim): agrees when every condition is
// supported, differs when one is contradicted, inconclusive otherwise. A
// condition compares two number IDs (or a number ID and a constant):
// "val/full/split1 >= val/night/split1". Operators: > and < (beats), >=
// and <= (not worse by more than the margin), ~= (within the margin).
// The test is paired by seed when both operands have values on the same
// seeds, Welch's otherwise.
type Claim struct {
	ID   string `toml:"id"`
	Text string `toml:"text"`
	Cite string `toml:"cite"`
	// Line is the line of paper.tex that states the claim.
	Line int `toml:"line"`
	// Quote is a fragment of that line, verbatim (a test checks it).
	Quote string   `toml:"quote"`
	Holds []string `toml:"holds"`
	// Kind is "relative" for energies and counts ("" : points).
	Kind string `toml:"kind,omitzero"`
	// Cause is what is known of the cause when ours differs.
	Cause string `toml:"cause,omitzero"`
}

var claimOps = []string{">=", "<=", "~=", ">", "<"}

// ParseCondition splits "a OP b" into its operands and operator.
func ParseCondition(c string) (a, op, b string, err error) {
	for _, o := range claimOps {
		if x, y, ok := strings.Cut(c, " "+o+" "); ok {
			a, b = strings.TrimSpace(x), strings.TrimSpace(y)
			if a == "" || b == "" || strings.ContainsAny(a+b, " <>=~") {
				break
			}
			return a, o, b, nil
		}
	}
	return "", "", "", fmt.Errorf("condition %q: want \"ID OP ID\" or \"ID OP number\" with OP one of >= <= ~= > <", c)
}

// Value is one published number: a table cell (mean ± sd over n
// seeds) or a stated paired difference (mean [lo, hi]).
type Value struct {
	ID   string   `toml:"id"`
	Mean float64  `toml:"mean"`
	SD   *float64 `toml:"sd"`
	N    int      `toml:"n"`
	Lo   *float64 `toml:"lo"`
	Hi   *float64 `toml:"hi"`
	Cite string   `toml:"cite"`
	// NoiseFrom names, for a single published run (n = 1, no s.d.), the
	// number ID of the same configuration over several seeds: its s.d.
	// over our seeds stands in for one run's seed noise, on both sides.
	// Without it a single run has no noise estimate and must match to the
	// published rounding.
	NoiseFrom string `toml:"noise_from,omitzero"`
	// Line is the line of paper.tex that prints the value (the value's
	// text, as Decimals print it, is on that line).
	Line int `toml:"line"`
	// Decimals is how many decimals the paper prints (nil: 1). A value
	// printed with fewer is uncertain by half a unit of its last digit.
	Decimals *int `toml:"decimals"`
	// Collapsed is, where the paper states it, how many of its n runs
	// collapsed (fail severely): counted beside ours, with Fisher's test.
	Collapsed *int `toml:"collapsed"`
	// Text is the value as the paper prints it when that is not its
	// digits ("half the seeds" for a count of 3 of 6); the test of the
	// transcription looks for it on Line.
	Text string `toml:"text,omitzero"`
	// Plot: the value is a point of one of the paper's figures that its
	// text does not print (read from the authors' plotting script); Line
	// is then the figure's \label line, and Decimals the script's.
	Plot bool `toml:"plot,omitzero"`
	// Cause is what is known of the cause when ours differs.
	Cause string `toml:"cause,omitzero"`
	// Exponent is k of a value printed as a×10^k (mean is the whole
	// value, decimals a's): its printing is uncertain by half a unit of
	// a's last digit times 10^k.
	Exponent int `toml:"exponent,omitzero"`
	// Kind overrides the metric's kind of number: "exact" for a count no
	// randomness touches (a clocked replay schedule's batches, samples,
	// updates), judged against its printing alone.
	Kind string `toml:"kind,omitzero"`
	// SeedsOf and Rank: the value is one of the paper's runs of the
	// number SeedsOf, printed by itself (a row's lowest or highest seed,
	// or each of the seeds it lists): the Rank-th lowest of its N runs (1
	// the lowest, N the highest), judged against the normal fitted to our
	// runs of that number (verdict.OrderStat; docs/verdicts.md).
	// Survivors: Rank and N count only the runs that did not fail
	// severely (below verdict.FailureBelow), and ours are fitted to ours
	// that did not. Minus: the runs are per-seed differences SeedsOf -
	// Minus, paired by seed (with Survivors, over the seeds where neither
	// failed).
	SeedsOf   string `toml:"seeds_of,omitzero"`
	Rank      int    `toml:"rank,omitzero"`
	Survivors bool   `toml:"survivors,omitzero"`
	Minus     string `toml:"minus,omitzero"`
	// Extreme, Over, OverMinus and Spread: the value is one end of a
	// range the paper states over rows it names ("84--88 at every rate",
	// "seed deviations 1.8--4.1", "1.4--1.9 points ahead at every
	// level"): the lowest or the highest (Extreme) of the numbers Over,
	// each over N of the paper's runs; with Spread, of their seed s.d.s;
	// with OverMinus, of the per-seed differences Over[i] - OverMinus[i],
	// paired by seed. Judged against the same end of our rows under the
	// model that the paper's rows are ours shifted (for s.d.s: scaled)
	// (verdict.ExtremeStat; docs/verdicts.md).
	Extreme   string   `toml:"extreme,omitzero"`
	Over      []string `toml:"over,omitzero"`
	OverMinus []string `toml:"over_minus,omitzero"`
	Spread    bool     `toml:"spread,omitzero"`
}

// checkExtreme checks the fields of a value that is one end of a range
// over named rows (extreme, over, over_minus, spread).
func (v *Value) checkExtreme() error {
	if v.Extreme == "" {
		if len(v.Over) > 0 || len(v.OverMinus) > 0 || v.Spread {
			return fmt.Errorf("over, over_minus and spread go with extreme")
		}
		return nil
	}
	if _, err := verdict.ParseEnd(v.Extreme); err != nil {
		return err
	}
	switch {
	case len(v.Over) < 2:
		return fmt.Errorf("over: %d rows: a range is over two or more", len(v.Over))
	case len(v.OverMinus) > 0 && len(v.OverMinus) != len(v.Over):
		return fmt.Errorf("over_minus: %d rows for over's %d: one a row, or none", len(v.OverMinus), len(v.Over))
	case v.N < 2:
		return fmt.Errorf("n = %d: want the paper's runs a row, n >= 2", v.N)
	case v.SD != nil || v.Lo != nil || v.NoiseFrom != "" || v.Collapsed != nil || v.Kind == "exact" || v.SeedsOf != "":
		return fmt.Errorf("a range's end: no sd, interval, noise_from, collapsed, exact kind or seeds_of")
	case v.Spread && !(v.Mean > verdict.HalfUnit(v.Places(), v.Exponent)):
		return fmt.Errorf("spread: an s.d. of %s printed as zero has no scale", strconv.FormatFloat(v.Mean, 'g', -1, 64))
	}
	seen := map[string]bool{v.ID: true}
	for i, id := range v.Over {
		if id == "" || seen[id] {
			return fmt.Errorf("over[%d] %q: empty, the value's own ID, or named twice", i, id)
		}
		seen[id] = true
		if len(v.OverMinus) > 0 && (v.OverMinus[i] == "" || v.OverMinus[i] == id || v.OverMinus[i] == v.ID) {
			return fmt.Errorf("over_minus[%d] %q: names another number than over[%d] and the value", i, v.OverMinus[i], i)
		}
	}
	return nil
}

// checkSeed checks the fields of a value that is one of the paper's runs
// (seeds_of, rank, survivors, minus).
func (v *Value) checkSeed() error {
	if v.SeedsOf == "" {
		if v.Rank != 0 || v.Survivors || v.Minus != "" {
			return fmt.Errorf("rank, survivors and minus go with seeds_of")
		}
		return nil
	}
	switch {
	case v.SeedsOf == v.ID || v.Minus == v.ID || v.Minus == v.SeedsOf:
		return fmt.Errorf("seeds_of and minus name two other numbers")
	case v.N < 2 || v.Rank < 1 || v.Rank > v.N:
		return fmt.Errorf("rank %d of n = %d: want 1 <= rank <= n, n >= 2 (the paper's runs it ranks among)", v.Rank, v.N)
	case v.SD != nil || v.Lo != nil || v.NoiseFrom != "" || v.Collapsed != nil || v.Kind == "exact":
		return fmt.Errorf("one run: no sd, interval, noise_from, collapsed or exact kind")
	}
	return nil
}

// Places is the number of decimals the paper prints v with.
func (v *Value) Places() int {
	if v.Decimals == nil {
		return 1
	}
	return *v.Decimals
}

// Parse decodes and checks the content src of a published-values
// file (path names it in errors, with the line of the value's id where a
// value is wrong: "paper/published.toml:7790: value x: ..."): known keys
// only, unique IDs, a cite for every value, lo and hi together, and each
// special shape's fields together (seeds_of, extreme).
func Parse(path, src string) (*File, error) {
	p := &File{}
	md, err := toml.Decode(src, p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if u := md.Undecoded(); len(u) > 0 {
		return nil, fmt.Errorf("%s: unknown key %s", path, u[0])
	}
	seen := map[string]bool{}
	for i, v := range p.Value {
		if v.ID == "" || seen[v.ID] {
			return nil, fmt.Errorf("%s: value[%d]: id %q missing or duplicate", path, i, v.ID)
		}
		seen[v.ID] = true
		at := valueAt(path, src, v.ID)
		if v.Cite == "" || v.Line <= 0 {
			return nil, fmt.Errorf("%s: value %s: cite and line (of paper.tex) are required", at, v.ID)
		}
		if v.Decimals != nil && (*v.Decimals < 0 || *v.Decimals > 4) {
			return nil, fmt.Errorf("%s: value %s: decimals %d: want 0 to 4", at, v.ID, *v.Decimals)
		}
		if v.Collapsed != nil && (*v.Collapsed < 0 || *v.Collapsed > v.N) {
			return nil, fmt.Errorf("%s: value %s: collapsed %d of n = %d", at, v.ID, *v.Collapsed, v.N)
		}
		for _, x := range []*float64{&v.Mean, v.SD, v.Lo, v.Hi} {
			if x != nil && (math.IsNaN(*x) || math.IsInf(*x, 0)) {
				return nil, fmt.Errorf("%s: value %s: not a finite number", at, v.ID)
			}
		}
		if (v.Lo == nil) != (v.Hi == nil) {
			return nil, fmt.Errorf("%s: value %s: lo and hi go together", at, v.ID)
		}
		if v.Kind != "" {
			if _, err := verdict.ParseKind(v.Kind); err != nil {
				return nil, fmt.Errorf("%s: value %s: %w", at, v.ID, err)
			}
		}
		if v.Exponent < 0 || v.Exponent > 12 {
			return nil, fmt.Errorf("%s: value %s: exponent %d: want 0 to 12", at, v.ID, v.Exponent)
		}
		if v.NoiseFrom != "" && (v.N != 1 || v.SD != nil || v.NoiseFrom == v.ID) {
			return nil, fmt.Errorf("%s: value %s: noise_from is for a single run (n = 1, no sd) and names another number", at, v.ID)
		}
		if err := v.checkSeed(); err != nil {
			return nil, fmt.Errorf("%s: value %s: %w", at, v.ID, err)
		}
		if err := v.checkExtreme(); err != nil {
			return nil, fmt.Errorf("%s: value %s: %w", at, v.ID, err)
		}
	}
	claims := map[string]bool{}
	for i, c := range p.Claim {
		if c.ID == "" || claims[c.ID] || c.Cite == "" || c.Text == "" || len(c.Holds) == 0 || c.Line <= 0 || c.Quote == "" {
			return nil, fmt.Errorf("%s: claim[%d] %q: id (unique), text, cite, line, quote and holds are required", path, i, c.ID)
		}
		if c.Kind != "" {
			if _, err := verdict.ParseKind(c.Kind); err != nil {
				return nil, fmt.Errorf("%s: claim %s: %w", path, c.ID, err)
			}
		}
		claims[c.ID] = true
		for _, h := range c.Holds {
			if _, _, _, err := ParseCondition(h); err != nil {
				return nil, fmt.Errorf("%s: claim %s: %w", path, c.ID, err)
			}
		}
	}
	for i, g := range p.NotRun {
		if g.What == "" || g.Reason == "" || g.Count <= 0 || len(g.Lines) != 2 || g.Lines[0] <= 0 || g.Lines[1] < g.Lines[0] || g.Status != "not run" {
			return nil, fmt.Errorf("%s: not_run[%d] %q: what, reason, count > 0, lines = [first, last] and status \"not run\" are required", path, i, g.What)
		}
		if !slices.Contains(NotRunCategories, g.Category) {
			return nil, fmt.Errorf("%s: not_run[%d] %q: category %q: want one of %q", path, i, g.What, g.Category, NotRunCategories)
		}
	}
	for i, r := range p.Restatement {
		if !seen[r.Of] {
			return nil, fmt.Errorf("%s: restatement[%d] (line %d): of %q names no value", path, i, r.Line, r.Of)
		}
		if r.Cite == "" || r.Line <= 0 {
			return nil, fmt.Errorf("%s: restatement[%d] of %s: cite and line (of paper.tex) are required", path, i, r.Of)
		}
		if r.Decimals != nil && (*r.Decimals < 0 || *r.Decimals > 4) {
			return nil, fmt.Errorf("%s: restatement[%d] of %s: decimals %d: want 0 to 4", path, i, r.Of, *r.Decimals)
		}
		for _, x := range []*float64{&r.Mean, r.SD} {
			if x != nil && (math.IsNaN(*x) || math.IsInf(*x, 0)) {
				return nil, fmt.Errorf("%s: restatement[%d] of %s: not a finite number", path, i, r.Of)
			}
		}
	}
	return p, nil
}

// valueAt is where a value is in its file: "path:line", the line of its
// id key (path alone when src does not spell the id on a line of its own,
// as an inline table would).
func valueAt(path, src, id string) string {
	for i, l := range strings.Split(src, "\n") {
		k, v, ok := strings.Cut(l, "=")
		if !ok || strings.TrimSpace(k) != "id" {
			continue
		}
		v = strings.TrimSpace(v)
		q, err := strconv.Unquote(v)
		if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' { // a literal string
			q, err = v[1:len(v)-1], nil
		}
		if err == nil && q == id {
			return fmt.Sprintf("%s:%d", path, i+1)
		}
	}
	return path
}
