package numdiff

import (
	"slices"

	"repro/judge"
	"repro/numbers"
	"repro/verdict"
)

// Number is one number of a build.
type Number struct {
	ID    string
	Group string // table name, or fig/<name>
	// Status is "ok" or why there is no value (the sidecar's): a cell's
	// status as it prints, or a comparison's.
	Status numbers.CompareStatus
	Mean   float64
	SD     float64
	N      int
	Seeds  []int64
	Values []float64
	Kind   verdict.Kind
}

// Build is the numbers of one build.
type Build struct {
	Numbers map[string]*Number
	// Groups are the tables and figures the build has.
	Groups []string
}

// FromSidecars indexes the numbers of rendered tables and figures: every
// table cell and comparison, every figure point (its plotted cell).
func FromSidecars(tables []*numbers.Sidecar, figures []*numbers.FigureSidecar) *Build {
	b := &Build{Numbers: map[string]*Number{}}
	for _, t := range tables {
		b.Groups = append(b.Groups, t.Table)
		byExp := map[string]*numbers.AggCell{}
		for i := range t.Numbers {
			n := &t.Numbers[i]
			byExp[n.ID] = &n.AggCell
			byExp[n.Experiment+" "+n.Protocol] = &n.AggCell
			b.Numbers[n.ID] = cellNumber(n.ID, t.Table, &n.AggCell)
		}
		for i := range t.Comparisons {
			c := &t.Comparisons[i]
			x, y := byExp[c.A], byExp[c.B]
			if x == nil || y == nil {
				x, y = byExp[c.A+" "+c.Protocol], byExp[c.B+" "+c.Protocol]
			}
			b.Numbers[c.ID] = cmpNumber(t.Table, c, x, y)
		}
	}
	for _, f := range figures {
		g := "fig/" + f.Figure
		b.Groups = append(b.Groups, g)
		for _, list := range [][]numbers.FigurePoint{f.Points, f.Lines} {
			for i := range list {
				p := &list[i]
				switch {
				case p.Diff != nil:
					b.Numbers[p.ID] = cmpNumber(g, p.Diff, p.YCell, p.BCell)
					b.Numbers[p.ID].ID = p.ID
				case p.YCell != nil:
					b.Numbers[p.ID] = cellNumber(p.ID, g, p.YCell)
				default:
					b.Numbers[p.ID] = &Number{ID: p.ID, Group: g, Status: numbers.CompareStatus(p.Status.String())}
				}
			}
		}
	}
	return b
}

func cellNumber(id, group string, c *numbers.AggCell) *Number {
	return &Number{ID: id, Group: group, Status: numbers.CompareStatus(c.Status.String()), Mean: c.Acc.Mean, SD: c.Acc.SD, N: c.N,
		Seeds: c.Seeds, Values: c.Values, Kind: judge.MetricKind(c.Metric)}
}

// cmpNumber is a seed-paired difference a - b: its per-seed differences
// over the seeds both have, when the cells are at hand.
func cmpNumber(group string, c *numbers.Comparison, a, b *numbers.AggCell) *Number {
	n := &Number{ID: c.ID, Group: group, Status: c.Status, Mean: c.Diff, N: c.N, Seeds: c.Seeds, Kind: verdict.Points}
	if !c.Status.OK() || a == nil || b == nil {
		return n
	}
	n.Seeds = nil
	for i, s := range a.Seeds {
		if j := slices.Index(b.Seeds, s); j >= 0 && i < len(a.Values) && j < len(b.Values) {
			n.Seeds = append(n.Seeds, s)
			n.Values = append(n.Values, a.Values[i]-b.Values[j])
		}
	}
	if len(n.Values) > 0 {
		_, n.SD = verdict.MeanSD(n.Values)
		n.N = len(n.Values)
	}
	return n
}

// Change is how a number differs between two builds.
type Change int

const (
	// Moved: both builds have a value and the values differ; only these
	// are judged against the seed noise.
	Moved Change = iota
	// New: only the second build has the number.
	New
	// Removed: only the first build has the number.
	Removed
	// Status: both builds have the number, at most one with a value, and
	// its status differs ("not run: …" -> a value, or the reverse).
	Status
)

// String names the change as diff prints it.
func (c Change) String() string {
	switch c {
	case Moved:
		return "moved"
	case New:
		return "new"
	case Removed:
		return "removed"
	case Status:
		return "status changed"
	}
	return "?"
}

// Move is a number that differs between two builds. Before or After is
// nil for a number only one build has.
type Move struct {
	ID, Group     string
	Change        Change
	Before, After *Number
	// Judgement is after against before, by the verdicts' rule: only for
	// Change Moved (both sides have a value). Beyond says such a move is
	// beyond the seed noise: Welch's test rejects equal means after the
	// Benjamini-Hochberg adjustment over the moves, or neither side has
	// any seed spread. It is false for every other change: a new, removed
	// or newly computed number has no before and after to judge.
	Judgement *verdict.Judgement
	Beyond    bool
}

// Result is the comparison of two builds.
type Result struct {
	// Moves are every number that differs, in ID order, whatever its
	// Change.
	Moves     []Move
	Unchanged int
	// OnlyA and OnlyB are the tables and figures one build lacks: their
	// numbers are not compared.
	OnlyA, OnlyB []string
}

// Compare lists the numbers of the groups both builds have that moved
// from a to b, in ID order.
func Compare(a, b *Build) *Result {
	res := &Result{}
	both := map[string]bool{}
	for _, g := range a.Groups {
		if slices.Contains(b.Groups, g) {
			both[g] = true
		} else {
			res.OnlyA = append(res.OnlyA, g)
		}
	}
	for _, g := range b.Groups {
		if !both[g] {
			res.OnlyB = append(res.OnlyB, g)
		}
	}
	var ids []string
	for id, n := range a.Numbers {
		if both[n.Group] {
			ids = append(ids, id)
		}
	}
	for id, n := range b.Numbers {
		if both[n.Group] && a.Numbers[id] == nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	var fam verdict.Family
	for _, id := range ids {
		x, y := a.Numbers[id], b.Numbers[id]
		if x != nil && y != nil && same(x, y) {
			res.Unchanged++
			continue
		}
		m := Move{ID: id, Before: x, After: y}
		switch {
		case x == nil:
			m.Group, m.Change = y.Group, New
		case y == nil:
			m.Group, m.Change = x.Group, Removed
		case x.Status.OK() && y.Status.OK():
			m.Group, m.Change = x.Group, Moved
			j := verdict.Welch(verdict.Ours(y.Mean, y.SD, y.N), verdict.Ours(x.Mean, x.SD, x.N), y.Kind)
			m.Judgement = &j
		default:
			m.Group, m.Change = x.Group, Status
		}
		res.Moves = append(res.Moves, m)
	}
	for i := range res.Moves {
		if j := res.Moves[i].Judgement; j != nil {
			fam.Add(j)
		}
	}
	fam.Settle()
	for i := range res.Moves {
		m := &res.Moves[i]
		switch {
		case m.Judgement == nil:
			m.Beyond = false
		case m.Before.SD == 0 && m.After.SD == 0:
			m.Beyond = m.Before.Mean != m.After.Mean
		default:
			m.Beyond = m.Judgement.Outcome == verdict.Differs
		}
	}
	return res
}

// same reports whether a number is unchanged: status, every seed and its
// value (the mean and s.d. when there are no per-seed values).
func same(x, y *Number) bool {
	return x.Status == y.Status && x.Mean == y.Mean && x.SD == y.SD && x.N == y.N &&
		slices.Equal(x.Seeds, y.Seeds) && slices.Equal(x.Values, y.Values)
}

// Count is the number of moves of change c.
func (r *Result) Count(c Change) int {
	n := 0
	for _, m := range r.Moves {
		if m.Change == c {
			n++
		}
	}
	return n
}

// Beyond is the number of moves beyond the seed noise.
func (r *Result) Beyond() int {
	n := 0
	for _, m := range r.Moves {
		if m.Beyond {
			n++
		}
	}
	return n
}
