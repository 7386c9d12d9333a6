package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"
	"unicode/utf8"

	"repro/experiments"
	"repro/pipeline"
)

func cmdPlan() *command {
	var g globalFlags
	fs := newFlags("plan", &g)
	all := fs.Bool("all", false, "list cached cells too")
	asJSON := fs.Bool("json", false, "machine-readable output")
	estimate := fs.Bool("estimate", false, "also estimate the run's CPU and wall time at -j workers from the CPU times recorded for earlier runs")
	jobs := fs.Int("j", runtime.NumCPU(), "with --estimate: workers to simulate")
	var only onceString
	fs.Var(&only, "only", "plan only what run --only `GLOB` would do: the cells whose ID, or leading segments of it, match, and what they need")
	return &command{
		name: "plan", usage: "[--profile P] [--only GLOB] [--all] [--json] [--estimate [-j N]]",
		short: "list what a run would execute, and why, without running anything",
		long: `Plan lists every cell that would run, with its reasons:
  new                         never planned under this profile
  config changed: K OLD -> NEW its resolved params differ from last time
  input changed: CELL          an input cell will run or produced other bytes
  stage version S A -> B       the stage's code changed its outputs
  output missing / corrupt     the record or a blob is gone or damaged
  failed last time: ERR        the same cell failed before (a run tries it
                               again); the cells waiting for it are counted
                               as blocked on the line below it
  needed by CELL (remote ...)  a remote holds its record, not the outputs a
                               cell that runs reads
and how many cells are cached, and how many a remote holds (settings.remotes;
a run takes them from there; --no-remote plans without remotes).

--estimate adds what the run is expected to cost: each cell's CPU seconds
from the records of earlier runs of the same experiment (in the store or a
remote's ledger; else the stage's cost model), summed, and the wall time of
the scheduler simulated on -j workers (ready cells longest chain first, each
taking its expected CPU time), beside the longest chain of dependent cells;
on a busy machine (1-minute load average), also the wall time with the
run's jobs sharing the cores with that load.`,
		flags: fs,
		run: func(ctx context.Context, e *env, args []string) error {
			if *jobs < 1 {
				return usageErr("-j must be >= 1")
			}
			var w *workspace
			var p *pipeline.Plan
			var err error
			if only != "" {
				// What run --only does: the profile's own graph (not the one
				// whose tables show blocked cells as not run, which only a
				// whole run renders), restricted to the selected cells and
				// what they need.
				if w, err = openWorkspace(e, &g); err != nil {
					return err
				}
				if err := matchesSome(w, "--only", string(only)); err != nil {
					return err
				}
				if p, err = w.plan(); err != nil {
					return err
				}
				p = onlyPlan(p, w.graph, string(only))
			} else if w, p, err = openPlan(e, &g); err != nil {
				return err
			}
			w.explainNew(p)
			if *asJSON {
				return printPlanJSON(e, p, *all)
			}
			// Cells waiting for a cell that failed last time (a data set
			// absent here) are one line per failed cell, after it.
			blocked, _ := experiments.BlockedCells(p)
			isBlocked := blockedIDs(p)
			for _, pc := range p.Cells {
				switch {
				case isBlocked[pc.Cell.ID]:
				case pc.State == pipeline.Stale:
					fmt.Fprintf(e.stdout, "run    %-55s %s\n", pc.Cell.ID, summariseReasons(pc.Reasons))
					if n := len(blocked[pc.Cell.ID]); n > 0 {
						fmt.Fprintf(e.stdout, "blocked %s wait for it (tables show them as not run; plan --json lists them)\n", plural(n, "cell"))
					}
				case *all && pc.State == pipeline.InRemote:
					fmt.Fprintf(e.stdout, "remote %-55s %s in remote %s%s\n", pc.Cell.ID, pc.Key.Short(), pc.Remote, recordOnly(pc))
				case *all:
					fmt.Fprintf(e.stdout, "cached %-55s %s\n", pc.Cell.ID, pc.Key.Short())
				}
			}
			run, cached := p.Counts()
			remote := p.InRemote()
			cached -= remote
			blockedNote := ""
			if len(isBlocked) > 0 {
				run -= len(isBlocked)
				blockedNote = fmt.Sprintf(", %d blocked", len(isBlocked))
			}
			of := fmt.Sprintf("%d cells", len(p.Cells))
			if only != "" {
				of = fmt.Sprintf("--only %s: %d of %d cells", string(only), len(p.Cells), len(w.graph.Cells))
			}
			fmt.Fprintf(e.stdout, "%d to run%s, %d cached%s (profile %s, %s)\n", run, blockedNote, cached, remoteCount(p, remote), w.profile, of)
			if *estimate {
				hist, err := w.historyRemotes(g.noRemote)
				if err != nil {
					return err
				}
				// The cells counted "to run" above, not the blocked ones: a
				// run reaches them only if the cell they wait for succeeds.
				est := pipeline.EstimatePlanExcept(p, w.store, hist, *jobs, func(c *pipeline.Cell) bool { return isBlocked[c.ID] })
				fmt.Fprintln(e.stdout, estimateText(est)+loadText(est, machineLoad(), runtime.NumCPU()))
			}
			return nil
		},
	}
}

// printPlanJSON writes plan --json: the cells that would run (every cell
// with all), each with its state, key, reasons, remote and outputs.
func printPlanJSON(e *env, p *pipeline.Plan, all bool) error {
	// reason is one plan reason: its kind (pipeline.ReasonKind's name,
	// what a script branches on), detail, and the text plan prints.
	type reason struct {
		Kind   pipeline.ReasonKind `json:"kind"`
		Detail string              `json:"detail,omitempty"`
		Since  string              `json:"since,omitempty"`
		Text   string              `json:"text"`
	}
	type row struct {
		Cell    string            `json:"cell"`
		State   string            `json:"state"`
		Key     string            `json:"key,omitempty"`
		Reasons []reason          `json:"reasons,omitempty"`
		Remote  string            `json:"remote,omitempty"`
		Outputs map[string]string `json:"outputs,omitempty"`
	}
	rows := []row{} // [] when nothing would run, never null
	for _, pc := range p.Cells {
		if pc.State != pipeline.Stale && !all {
			continue
		}
		r := row{Cell: pc.Cell.ID, State: pc.State.String(), Remote: pc.Remote}
		for _, x := range pc.Reasons {
			r.Reasons = append(r.Reasons, reason{x.Kind, x.Detail, x.Since, x.String()})
		}
		if pc.KeyKnown {
			r.Key = pc.Key.String()
		}
		if pc.Manifest != nil {
			r.Outputs = map[string]string{}
			for _, o := range pc.Manifest.Outputs {
				r.Outputs[o.Name] = o.Digest.String()
			}
		}
		rows = append(rows, r)
	}
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(rows)
}

// estimateText is plan --estimate's line: "estimate: 37 cells, 1h58m CPU
// (35 from recorded runs), about 1h01m wall at -j 2 (1.03x CPU/2; longest
// chain 13m05s)".
func estimateText(e pipeline.Estimate) string {
	if e.Cells == 0 {
		return "estimate: nothing to run"
	}
	ratio := ""
	if e.CPU > 0 {
		ratio = fmt.Sprintf("%.2fx CPU/%d; ", e.Wall/(e.CPU/float64(e.Jobs)), e.Jobs)
	}
	return fmt.Sprintf("estimate: %s, %s CPU (%d from recorded runs of the same experiment), about %s wall at -j %d (%slongest chain %s)",
		plural(e.Cells, "cell"), cpuText(e.CPU), e.Known, cpuText(e.Wall), e.Jobs, ratio, cpuText(e.Path))
}

// loadText is the wall time estimate at the machine's current load: the
// simulation assumes each worker has a core to itself, and on a machine
// whose other work keeps load (the 1-minute load average) busy, the run's
// jobs share cores with it, each getting about cores / (load + jobs) of
// one. "" when the machine is idle enough for that to change nothing
// (less than 10%) or the load is unknown.
func loadText(e pipeline.Estimate, load float64, cores int) string {
	if load <= 0 || e.Wall <= 0 {
		return ""
	}
	busy := float64(min(e.Jobs, cores))
	share := min(1, float64(cores)/(load+busy))
	if share > 0.9 {
		return ""
	}
	return fmt.Sprintf("; at this machine's load (%.1f on %d cores) about %s wall", load, cores, cpuText(e.Wall/share))
}

// machineLoad is the 1-minute load average (Linux /proc/loadavg), 0 where
// it cannot be read.
func machineLoad() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var l float64
	if _, err := fmt.Sscan(string(b), &l); err != nil {
		return 0
	}
	return l
}

// maxReasonLen bounds a plan line's reasons: an aggregate cell over
// hundreds of seeds has as many "input changed" reasons, and a seed list
// diff is as long as the list (one seed added to smoke gave a line of
// 4,234 characters). plan --json keeps them whole.
const maxReasonLen = 160

// summariseReasons joins reasons for one plan line, at most maxReasonLen
// characters: runs of "input changed: CELL" collapse to a count with the
// first cell named, and a reason still too long is cut with the number of
// characters left out.
func summariseReasons(reasons []pipeline.Reason) string {
	var parts []string
	var inputs []pipeline.Reason
	for _, r := range reasons {
		if r.Kind == pipeline.ReasonInputChanged && r.Detail != "" && r.Since == "" {
			inputs = append(inputs, r)
			continue
		}
		parts = append(parts, r.String())
	}
	switch {
	case len(inputs) == 1:
		parts = append(parts, inputs[0].String())
	case len(inputs) > 1:
		parts = append(parts, fmt.Sprintf("%d inputs changed: %s and %d more", len(inputs), inputs[0].Detail, len(inputs)-1))
	}
	s := strings.Join(parts, "; ")
	if n := utf8.RuneCountInString(s); n > maxReasonLen {
		const keep = maxReasonLen - 30
		s = string([]rune(s)[:keep]) + fmt.Sprintf("... (%d more characters; plan --json)", n-keep)
	}
	return s
}

// onlyPlan is p restricted to the cells run --only glob would consider:
// those matching glob and, recursively, their inputs (pipeline's
// selectCells), in p's order.
func onlyPlan(p *pipeline.Plan, g *pipeline.Graph, glob string) *pipeline.Plan {
	want := map[string]bool{}
	for i := len(g.Cells) - 1; i >= 0; i-- { // reverse topological
		c := g.Cells[i]
		if cellMatch(glob, c.ID) || want[c.ID] {
			want[c.ID] = true
			for _, in := range c.Inputs {
				want[in.Cell.ID] = true
			}
		}
	}
	q := *p
	q.Cells = nil
	for _, pc := range p.Cells {
		if want[pc.Cell.ID] {
			q.Cells = append(q.Cells, pc)
		}
	}
	return &q
}
