package experiments

import (
	"fmt"
	"slices"
	"strings"

	"repro/cellid"
	"repro/numbers"
	"repro/pipeline"
	"repro/stages"
)

// DegradedGraph returns nil when every table's aggregate cell of g (planned
// as p) is cached or can be computed in full. Otherwise some train cells
// failed (or were skipped): it returns a graph in which each such table's
// aggregate reads only the train cells that are cached, with the render and
// reproduction cells on top. The aggregate keeps its full list of expected
// seeds, so the missing ones are recorded (n shown in the cell, seeds named
// in the row's comment and in the reproduction report), never dropped
// silently; the plan of the full graph keeps saying why they are missing.
// notes says, per table, which cells are left out.
func DegradedGraph(g *pipeline.Graph, p *pipeline.Plan) (*pipeline.Graph, []string, error) {
	return degrade(g, p, func(c *pipeline.Cell) bool { return p.Cell(c.ID).State == pipeline.Stale }, true)
}

// BlockedGraph returns nil when no train cell of a table of g is blocked (see
// blockedBy: an input it needs failed, as a data set this machine cannot
// obtain). Otherwise it returns the graph whose aggregates leave out
// exactly the blocked cells, marking the table cells none of whose seeds
// can run "not run" with the reason: what a run here renders when nothing
// else fails, so check compares the committed tables with it.
func BlockedGraph(g *pipeline.Graph, p *pipeline.Plan) (*pipeline.Graph, error) {
	memo := map[string]blocked{}
	any := false
	leave := func(c *pipeline.Cell) bool {
		b := blockedBy(p, c, memo) != ""
		any = any || b
		return b
	}
	dg, _, err := degrade(g, p, leave, false)
	if !any {
		return nil, err
	}
	return dg, err
}

// degrade returns the graph whose stale aggregate and figure cells read
// only the inputs leave does not select, and notes saying, per table, which
// it left out; nil when it left out nothing. With prune, cells that cannot
// compute (stale, and not a table's or figure's) are dropped, so a run of
// the graph computes only the tables; otherwise every cell is kept. It is
// one body because its three passes (replace the stale aggregates and
// figures, rewire every other cell, prune) share the replacement map.
func degrade(g *pipeline.Graph, p *pipeline.Plan, leave func(*pipeline.Cell) bool, prune bool) (*pipeline.Graph, []string, error) {
	replaced := map[*pipeline.Cell]*pipeline.Cell{}
	marked := map[*pipeline.Cell]bool{} // aggregates with cells marked not run here
	var notes []string
	for _, c := range g.Cells {
		if (c.Stage != stages.Aggregate && c.Stage != stages.Figure) || p.Cell(c.ID).State != pipeline.Stale {
			continue
		}
		d := &pipeline.Cell{ID: c.ID, Stage: c.Stage, Params: c.Params, Tables: c.Tables}
		var left []string
		// table cell -> the failed cell each seed waits for ("" for a seed
		// that is not blocked but left out for another reason)
		blockedOn := map[[2]int][]string{}
		for _, in := range c.Inputs {
			pc := p.Cell(in.Cell.ID)
			if !leave(in.Cell) { // cached, in a remote, or (check) able to run
				d.Inputs = append(d.Inputs, in)
				continue
			}
			why := pipeline.JoinReasons(pc.Reasons)
			root := ""
			if b := blockedRoot(p, in.Cell, map[string]blocked{}); b.why != "" {
				why, root = "not run: "+b.why, b.root
			}
			if x, err := cellid.ParseInput(in.Name); err == nil && c.Stage == stages.Aggregate {
				k := [2]int{x.Row, x.Col}
				blockedOn[k] = append(blockedOn[k], root)
			}
			left = append(left, fmt.Sprintf("%s (%s)", in.Cell.ID, why))
		}
		if ap, ok := c.Params.(*stages.AggregateParams); ok {
			d.Params = notRunCells(ap, blockedOn)
			marked[d] = d.Params != c.Params
		}
		if len(left) == 0 {
			continue
		}
		replaced[c] = d
		what := c.ID
		if c.Stage != stages.Figure {
			t, _ := cellid.TableOf(c.ID)
			what = "table " + t
		}
		notes = append(notes, fmt.Sprintf("%s: rendered without %d of %d train cells, shown with their n:\n  %s",
			what, len(left), len(c.Inputs), strings.Join(left, "\n  ")))
	}
	if len(replaced) == 0 {
		return nil, nil, nil
	}
	// Every other cell is kept, its inputs rewired to the replacements;
	// the graph then holds the kept train cells' upstream cells as well.
	var cells []*pipeline.Cell
	for _, c := range g.Cells {
		if d, ok := replaced[c]; ok {
			cells = append(cells, d)
			continue
		}
		rewired := false
		for _, in := range c.Inputs {
			if _, ok := replaced[in.Cell]; ok {
				rewired = true
			}
		}
		if !rewired {
			cells = append(cells, c)
			continue
		}
		cc := *c
		// A table with cells marked not run here says so, whatever its form.
		if rp, ok := c.Params.(*stages.RenderParams); ok {
			if d, ok := replaced[c.Inputs[0].Cell]; ok && marked[d] {
				r := *rp
				r.ShowNotRun = true
				cc.Params = &r
			}
		}
		cc.Inputs = nil
		for _, in := range c.Inputs {
			if d, ok := replaced[in.Cell]; ok {
				in.Cell = d
			}
			cc.Inputs = append(cc.Inputs, in)
		}
		replaced[c] = &cc
		cells = append(cells, &cc)
	}
	// Leave out the cells that cannot compute (failed train cells and what
	// only they feed); the run of the graph then takes everything else from
	// the store.
	var keep []*pipeline.Cell
	for _, c := range cells {
		pc := p.Cell(c.ID)
		if !prune || c.Stage == stages.Aggregate || c.Stage == stages.Figure || c.Stage == stages.Render || c.Stage == stages.Reproduction || pc.State != pipeline.Stale {
			keep = append(keep, c)
		}
	}
	dg, err := pipeline.NewGraph(keep)
	if err != nil {
		return nil, nil, fmt.Errorf("degraded tables: %w", err)
	}
	return dg, notes, nil
}

// blockedBy returns why a stale cell could not run because a cell it
// depends on failed (the first such failure, without its "cell <id>: "
// prefix), or "" when nothing upstream failed or the cell is a train cell
// that ran and failed itself (a result that is missing, not a cell that
// was never run). Only the failure's first line is kept: it is the reason
// a table prints, so it carries no machine path.
func blockedBy(p *pipeline.Plan, c *pipeline.Cell, memo map[string]blocked) string {
	return blockedRoot(p, c, memo).why
}

// blocked is the failed cell a stale cell waits for, and its reason.
type blocked struct{ root, why string }

// blockedRoot is blockedBy with the failed cell's ID.
func blockedRoot(p *pipeline.Plan, c *pipeline.Cell, memo map[string]blocked) blocked {
	if b, ok := memo[c.ID]; ok {
		return b
	}
	memo[c.ID] = blocked{}
	pc := p.Cell(c.ID)
	if pc == nil || pc.State != pipeline.Stale {
		return blocked{}
	}
	if pc.Failure != nil {
		if c.Stage == stages.Train {
			return blocked{}
		}
		why, _, _ := strings.Cut(pc.Failure.Error, "\n")
		b := blocked{c.ID, strings.TrimPrefix(why, "cell "+c.ID+": ")}
		memo[c.ID] = b
		return b
	}
	for _, in := range c.Inputs {
		if b := blockedRoot(p, in.Cell, memo); b.why != "" {
			memo[c.ID] = b
			return b
		}
	}
	return blocked{}
}

// BlockedCells groups the stale cells of p that cannot run because a cell
// they depend on failed last time (a download whose release this machine
// lacks, say) by that failed cell; the failed cells themselves, which a
// run tries again, are not in it. why gives each failed cell's reason.
func BlockedCells(p *pipeline.Plan) (by map[string][]*pipeline.PlannedCell, why map[string]string) {
	memo := map[string]blocked{}
	by, why = map[string][]*pipeline.PlannedCell{}, map[string]string{}
	for _, pc := range p.Cells {
		if b := blockedRoot(p, pc.Cell, memo); b.why != "" && b.root != pc.Cell.ID {
			by[b.root] = append(by[b.root], pc)
			why[b.root] = b.why
		}
	}
	return by, why
}

// notRunCells returns ap with every table cell all of whose seeds could
// not run because an input failed (blockedOn: the failed cell each seed
// waits for, "" for a seed left out for another reason) marked not run,
// "blocked by <failed cell>", or ap itself when there is none. A cell some
// of whose seeds ran, or whose own train cells failed, keeps its status: it
// is shown with its n. The status enters the aggregate's key, so it names
// the failed cell, never its error's text, which a reworded message or
// another machine's path would change.
func notRunCells(ap *stages.AggregateParams, blockedOn map[[2]int][]string) *stages.AggregateParams {
	nc := len(ap.Protocols)
	var out *stages.AggregateParams
	for k, roots := range blockedOn {
		i := k[0]*nc + k[1]
		if i >= len(ap.Cells) || ap.Cells[i].Status.Kind != numbers.StatusRun || len(roots) != len(strings.Fields(ap.Cells[i].Seeds)) {
			continue
		}
		if slices.Contains(roots, "") {
			continue
		}
		if out == nil {
			cp := *ap
			cp.Cells = slices.Clone(ap.Cells)
			out = &cp
		}
		c := &out.Cells[i]
		c.Status, c.Seeds, c.Cell = BlockedStatus(roots[0]), "", ""
	}
	if out == nil {
		return ap
	}
	return out
}

// BlockedStatus is the status of a table cell or figure point none of
// whose cells can run because cell root failed: not run, "blocked by
// <root>".
func BlockedStatus(root string) numbers.Status { return numbers.NotRun("blocked by " + root) }
