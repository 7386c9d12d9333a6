package experiments

import (
	"fmt"
	"slices"
	"strings"

	"repro/artifacts"
	"repro/cellid"
	"repro/numbers"
	"repro/pipeline"
	"repro/stages"
)

// The staleness check of the committed tables (repro check): which numbers
// of a committed sidecar differ from what the store renders, and which
// would change because their train cells would rerun.

// DiffNumbers names the numbers whose rendered text differs.
func DiffNumbers(old, cur *numbers.Sidecar) []string {
	var out []string
	curBy := map[string]*numbers.NumberRef{}
	for i := range cur.Numbers {
		curBy[cur.Numbers[i].ID] = &cur.Numbers[i]
	}
	seen := map[string]bool{}
	for _, o := range old.Numbers {
		seen[o.ID] = true
		c := curBy[o.ID]
		switch {
		case c == nil:
			out = append(out, fmt.Sprintf("%s (row %d, column %d): no longer in the table", o.ID, o.Row, o.Column))
		case c.Text != o.Text:
			out = append(out, fmt.Sprintf("%s (row %d, column %d): committed %q, would render %q", o.ID, o.Row, o.Column, o.Text, c.Text))
		}
	}
	for _, c := range cur.Numbers {
		if !seen[c.ID] {
			out = append(out, fmt.Sprintf("%s (row %d, column %d): new, would render %q", c.ID, c.Row, c.Column, c.Text))
		}
	}
	oldCmp := map[string]numbers.Comparison{}
	for _, c := range old.Comparisons {
		oldCmp[c.ID] = c
	}
	for _, c := range cur.Comparisons {
		o, ok := oldCmp[c.ID]
		if !ok || o.Status != c.Status || signedRound(o.Diff) != signedRound(c.Diff) || signedRound(o.Lo) != signedRound(c.Lo) || signedRound(o.Hi) != signedRound(c.Hi) {
			out = append(out, fmt.Sprintf("%s: committed %s, would be %s", c.ID, CompareText(o, ok), CompareText(c, true)))
		}
	}
	return out
}

func signedRound(x float64) string { return fmt.Sprintf("%+.1f", x) }

// CompareText shows a comparison as its rounded difference and interval,
// or why it is not computed (ok false: absent).
func CompareText(c numbers.Comparison, ok bool) string {
	switch {
	case !ok:
		return "absent"
	case !c.Status.OK():
		return string(c.Status)
	}
	return fmt.Sprintf("%s [%s, %s]", signedRound(c.Diff), signedRound(c.Lo), signedRound(c.Hi))
}

// StaleInputs names the committed numbers whose train cells would rerun,
// are gone, or hold other results than the committed table used; and the
// numbers whose set of cells changed in the current config. A train cell the
// plan would run is judged by verdict (given the planned cell and the
// committed result digest): stale, or merely not computed here; notHere
// names the numbers all of whose such cells are the latter.
func StaleInputs(g *pipeline.Graph, p *pipeline.Plan, table string, old *numbers.Sidecar, verdict func(pc *pipeline.PlannedCell, result string) (stale bool, why string)) (out, notHere []string) {
	want := currentCells(g, table)
	for _, n := range old.Numbers {
		var why, absent []string
		committed := map[string]string{}
		for i, id := range n.TrainCells {
			committed[id] = n.Results[i]
		}
		cur, inGraph := want[n.ID]
		for _, id := range cur {
			if _, ok := committed[id]; ok {
				continue
			}
			// A number the committed table shows without any run (not run
			// where it was rendered) whose cells would run only because
			// nothing is known of them here: not stale, not computed here.
			if pc := p.Cell(id); len(n.TrainCells) == 0 && pc != nil && pc.State == pipeline.Stale && nothingKnownHere(pc.Reasons) {
				absent = append(absent, id+" not computed here (not run in the committed table)")
				continue
			}
			s := id + " is missing from the committed table"
			if pc := p.Cell(id); pc != nil && pc.State == pipeline.Stale {
				s += " and would run: " + pipeline.JoinReasons(pc.Reasons)
			} else {
				s += " and is now in the store"
			}
			why = append(why, s)
		}
		for _, id := range n.TrainCells {
			pc := p.Cell(id)
			switch {
			case pc == nil || inGraph && !slices.Contains(cur, id):
				why = append(why, id+" is no longer in the table's cells")
			case pc.State == pipeline.Stale:
				if stale, v := verdict(pc, committed[id]); stale {
					why = append(why, v)
				} else {
					absent = append(absent, v)
				}
			default:
				if d, _ := pc.Manifest.Output("result"); d.String() != committed[id] {
					why = append(why, id+" has another result in the store")
				}
			}
		}
		place := fmt.Sprintf("%s (row %d, column %d, committed %q): ", n.ID, n.Row, n.Column, n.Text)
		switch {
		case len(why) > 0:
			out = append(out, place+strings.Join(why, "; "))
		case len(absent) > 0:
			notHere = append(notHere, place+notHereSummary(absent))
		}
	}
	return out, notHere
}

// notHereSummary says which of a number's cells are not computed here,
// briefly when it is all of them for the same reason.
func notHereSummary(absent []string) string {
	if len(absent) > 1 {
		same := true
		_, first, _ := strings.Cut(absent[0], " not computed here")
		for _, a := range absent[1:] {
			_, r, _ := strings.Cut(a, " not computed here")
			same = same && r == first
		}
		if same {
			return fmt.Sprintf("its %d train cells are not computed here%s", len(absent), first)
		}
	}
	return strings.Join(absent, "; ")
}

// currentCells maps each number ID of a table to the train cells its
// aggregate cell reads under the current config.
func currentCells(g *pipeline.Graph, table string) map[string][]string {
	out := map[string][]string{}
	agg := g.Cell(cellid.Aggregate(table))
	if agg == nil {
		return out
	}
	ap, ok := agg.Params.(*stages.AggregateParams)
	if !ok {
		return out
	}
	for _, in := range agg.Inputs {
		x, err := cellid.ParseInput(in.Name)
		if err != nil || x.Row >= len(ap.Rows) || x.Col >= len(ap.Protocols) {
			continue
		}
		id := table + "/" + ap.Rows[x.Row] + "/" + ap.Protocols[x.Col]
		out[id] = append(out[id], in.Cell.ID)
	}
	return out
}

// StalePoints names the committed points of a figure whose train cells
// would rerun because the config changed, or hold another result than the
// committed figure used (stale), and the train cells merely not computed
// here (notHere).
func StalePoints(p *pipeline.Plan, old *numbers.FigureSidecar, verdict func(pc *pipeline.PlannedCell, result string) (stale bool, why string)) (stale, notHere []string) {
	for _, pt := range append(old.Points, old.Lines...) {
		var why []string
		for _, c := range []*numbers.AggCell{pt.YCell, pt.XCell, pt.BCell} {
			if c == nil {
				continue
			}
			for i, id := range c.TrainCells {
				pc := p.Cell(id)
				switch {
				case pc == nil:
					why = append(why, id+" is no longer in the graph")
				case pc.State == pipeline.Stale:
					if st, v := verdict(pc, c.Results[i]); st {
						why = append(why, v)
					} else {
						notHere = append(notHere, id)
					}
				default:
					if d, _ := pc.Manifest.Output("result"); d.String() != c.Results[i] {
						why = append(why, id+" has another result in the store")
					}
				}
			}
		}
		if len(why) > 0 {
			stale = append(stale, fmt.Sprintf("%s (committed %q): %s", pt.ID, pt.Text, strings.Join(why, "; ")))
		}
	}
	return stale, notHere
}

// DiffPoints names the points of a figure that were added, dropped, or
// would be drawn differently.
func DiffPoints(old, cur *numbers.FigureSidecar) []string {
	var out []string
	curBy := map[string]numbers.FigurePoint{}
	for _, c := range append(cur.Points, cur.Lines...) {
		curBy[c.ID] = c
	}
	seen := map[string]bool{}
	for _, o := range append(old.Points, old.Lines...) {
		seen[o.ID] = true
		c, ok := curBy[o.ID]
		switch {
		case !ok:
			out = append(out, o.ID+": no longer in the figure")
		case c.Status != o.Status:
			out = append(out, fmt.Sprintf("%s: committed %q, would be %q", o.ID, o.Status, c.Status))
		case c.Text != o.Text:
			out = append(out, fmt.Sprintf("%s: committed %q, would draw %q", o.ID, o.Text, c.Text))
		}
	}
	for _, c := range append(cur.Points, cur.Lines...) {
		if !seen[c.ID] {
			out = append(out, fmt.Sprintf("%s: new, would draw %q", c.ID, c.Text))
		}
	}
	return out
}

// notHereReasons are the plan reason kinds that say nothing about a change:
// the cell was never planned in this store, never finished, or failed.
// neverSeenReasons say only that a cell was never seen here; the other
// not-here reasons say it was seen but left no result.
var (
	neverSeenReasons = []pipeline.ReasonKind{pipeline.ReasonNew, pipeline.ReasonInputPending}
	notHereReasons   = append(slices.Clone(neverSeenReasons), pipeline.ReasonNeverFinished, pipeline.ReasonFailed, pipeline.ReasonNeededBy)
)

// A committed number whose train cell the current plan would run is either
// stale (the current config gives the cell another key than the one that
// produced the committed result) or merely not computed here (a fresh
// clone, or a store that never ran this profile): the two call for
// different actions, and only the first makes `repro check` fail.

// nothingKnownHere reports whether every plan reason says only that the
// cell was never seen here (new, input pending): unlike a failure, which
// a committed table missing the cell should be flagged for.
func nothingKnownHere(reasons []pipeline.Reason) bool {
	return len(reasons) > 0 && pipeline.OnlyReasons(reasons, neverSeenReasons...)
}

// NotComputedHere reports whether every plan reason is one that says
// nothing about a change (notHereReasons).
func NotComputedHere(reasons []pipeline.Reason) bool {
	return pipeline.OnlyReasons(reasons, notHereReasons...)
}

// RecordChanges says what differs between the record rec of a cell
// (computed earlier, here or on a remote) and the planned cell pc: its
// stage version and its params; nil when neither changed.
func RecordChanges(pc *pipeline.PlannedCell, rec *artifacts.Manifest) []pipeline.Reason {
	return pipeline.RecordChanges(pc.Cell, pc.Params, rec.Stage, rec.StageVersion, rec.Params)
}

// TrainVerdict says whether a committed result of the train cell pc, which
// the plan would run, is stale, and why. rec is the record that produced
// the committed result, or nil when neither the store nor a remote holds it.
func TrainVerdict(pc *pipeline.PlannedCell, rec *artifacts.Manifest) (stale bool, why string) {
	id := pc.Cell.ID
	if rec != nil {
		diffs := RecordChanges(pc, rec)
		if len(diffs) == 0 && pc.KeyKnown && pc.Key != rec.Key {
			diffs = append(diffs, pipeline.Reason{Kind: pipeline.ReasonInputChanged})
		}
		if len(diffs) > 0 {
			diffs[len(diffs)-1].Since = "the committed result, record " + rec.Key.Short()
			return true, id + " would run: " + pipeline.JoinReasons(diffs)
		}
		return false, id + " not computed here (the committed result's record has the current config)"
	}
	if NotComputedHere(pc.Reasons) {
		return false, id + " not computed here"
	}
	return true, id + " would run: " + pipeline.JoinReasons(pc.Reasons)
}
