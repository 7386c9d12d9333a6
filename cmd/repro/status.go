package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/olekukonko/tablewriter"

	"repro/artifacts"
	"repro/experiments"
	"repro/pipeline"
)

func cmdStatus() *command {
	var g globalFlags
	fs := newFlags("status", &g)
	cost := fs.Bool("cost", false, "print instead the CPU time of each experiment, largest first")
	return &command{
		name: "status", usage: "[--profile P] [--cost]",
		short: "cached / stale / failed counts per stage and per table",
		long: `Status counts, per stage and per rendered table, the cells that are cached,
stale (would run), failed (stale, and their last attempt failed) and
blocked (they wait for a cell that failed: a data set absent here), and
the CPU time the cached cells took when they ran. With a remote holding
cells the store lacks (settings.remotes), a column counts those, and the CPU
time includes theirs. Last, what the scheduler saw of the profile's last run
that executed cells: its wall time at -j N, the core-seconds its jobs kept
busy, and the idle rest (wall x N - busy).

--cost prints instead where the CPU time went: per experiment (the cells
whose IDs differ only in their seed and split numbers, e.g.
"train/anchor/sequential/split/seed"), the cells with a record, their CPU
time in total, per cell and at most, and the experiment's share of the
profile's, largest first. It reads the records of the store and, without
--no-remote, of the remotes: a fresh clone reports the ledger's times.`,
		flags: fs,
		run: func(ctx context.Context, e *env, args []string) error {
			w, p, err := openPlan(e, &g)
			if err != nil {
				return err
			}
			if *cost {
				renderCost(e.stdout, w.profile, p)
				return nil
			}
			blocked := blockedIDs(p)
			stageOrder, byStage, byTable := countStatus(p, blocked)
			render := func(title string, order []string, m map[string]*statusCounts) {
				renderStatus(e.stdout, title, order, m, p.InRemote() > 0, len(blocked) > 0)
			}
			fmt.Fprintf(e.stdout, "profile %s, store %s\n", w.profile, w.store.Root())
			render("stage", stageOrder, byStage)
			if len(byTable) > 0 {
				var tables []string
				for t := range byTable {
					tables = append(tables, t)
				}
				sort.Strings(tables)
				render("table", tables, byTable)
			}
			if r, err := w.store.GetLastRun(w.profile); err == nil {
				fmt.Fprintln(e.stdout, lastRunText(r))
			}
			return nil
		},
	}
}

// cpuText formats CPU seconds for the status table: "41.2s", "3m05s",
// "2h14m".
func cpuText(s float64) string {
	d := time.Duration(s * float64(time.Second)).Round(time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%.1fs", s)
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// lastRunText is status's line on the profile's last run.
func lastRunText(r *artifacts.RunRecord) string {
	idle := max(r.IdleSecs(), 0)
	capacity := r.WallSecs * float64(r.Jobs)
	pct := 0.0
	if capacity > 0 {
		pct = 100 * idle / capacity
	}
	return fmt.Sprintf("last run %s: %s executed, %d cached, %d failed or skipped in %s wall at -j %d (%s executor); core-seconds busy %s, idle %s (%.1f%% of wall x jobs); cell CPU %s",
		r.End.Format("2006-01-02 15:04Z"), plural(r.Executed, "cell"), r.Cached, r.Failed, cpuText(r.WallSecs), r.Jobs, r.Executor,
		cpuText(r.BusySecs), cpuText(idle), pct, cpuText(r.CPUSecs))
}

// statusCounts are the cells of one stage or table by state, and the CPU
// seconds the cached and remote ones took.
type statusCounts struct {
	cached, stale, failed, remote, blocked int
	cpu                                    float64
}

func (c *statusCounts) add(pc *pipeline.PlannedCell, blocked bool) {
	switch {
	case blocked:
		c.blocked++
	case pc.State == pipeline.Cached:
		c.cached++
		c.cpu += pc.Manifest.Provenance.CPUSecs
	case pc.State == pipeline.InRemote:
		c.remote++
		c.cpu += pc.Manifest.Provenance.CPUSecs
	case pc.Failure != nil:
		c.failed++
	default:
		c.stale++
	}
}

// countStatus counts p's cells per stage (in plan order) and per table.
// blocked holds the IDs of the cells counted as blocked.
func countStatus(p *pipeline.Plan, blocked map[string]bool) (stageOrder []string, byStage, byTable map[string]*statusCounts) {
	byStage, byTable = map[string]*statusCounts{}, map[string]*statusCounts{}
	add := func(m map[string]*statusCounts, k string, pc *pipeline.PlannedCell) {
		if m[k] == nil {
			m[k] = &statusCounts{}
		}
		m[k].add(pc, blocked[pc.Cell.ID])
	}
	for _, pc := range p.Cells {
		s := pc.Cell.Stage.Name
		if byStage[s] == nil {
			stageOrder = append(stageOrder, s)
		}
		add(byStage, s, pc)
		for _, t := range pc.Cell.Tables {
			add(byTable, t, pc)
		}
	}
	return stageOrder, byStage, byTable
}

// renderStatus prints one status table, with an "in remote" column when
// remotes hold cells, and a "blocked" column when cells are.
func renderStatus(out io.Writer, title string, order []string, m map[string]*statusCounts, remotes, blocked bool) {
	tw := tablewriter.NewWriter(out)
	header := []string{title, "cached"}
	if remotes {
		header = append(header, "in remote")
	}
	header = append(header, "stale", "failed")
	if blocked {
		header = append(header, "blocked")
	}
	tw.Header(append(header, "total", "cpu"))
	for _, k := range order {
		c := m[k]
		row := []string{k, fmt.Sprint(c.cached)}
		if remotes {
			row = append(row, fmt.Sprint(c.remote))
		}
		row = append(row, fmt.Sprint(c.stale), fmt.Sprint(c.failed))
		if blocked {
			row = append(row, fmt.Sprint(c.blocked))
		}
		row = append(row, fmt.Sprint(c.cached+c.remote+c.stale+c.failed+c.blocked), cpuText(c.cpu))
		tw.Append(row)
	}
	tw.Render()
}

// blockedIDs is the set of p's cells that wait for a cell that failed
// last time (experiments.BlockedCells).
func blockedIDs(p *pipeline.Plan) map[string]bool {
	by, _ := experiments.BlockedCells(p)
	ids := map[string]bool{}
	for _, cells := range by {
		for _, pc := range cells {
			ids[pc.Cell.ID] = true
		}
	}
	return ids
}

// experimentCost is the recorded CPU time of one experiment's cells.
type experimentCost struct {
	name       string
	cells      int
	cpu, most  float64
	unrecorded int // cells of the experiment with no record (stale or failed)
}

// costByExperiment sums the CPU seconds of p's cached and remote cells per
// experiment (pipeline.ExperimentOf), largest total first, ties by name.
func costByExperiment(p *pipeline.Plan) []*experimentCost {
	by := map[string]*experimentCost{}
	var out []*experimentCost
	for _, pc := range p.Cells {
		name := pipeline.ExperimentOf(pc.Cell.ID)
		c := by[name]
		if c == nil {
			c = &experimentCost{name: name}
			by[name] = c
			out = append(out, c)
		}
		if pc.State != pipeline.Cached && pc.State != pipeline.InRemote {
			c.unrecorded++
			continue
		}
		s := pc.Manifest.Provenance.CPUSecs
		c.cells++
		c.cpu += s
		c.most = max(c.most, s)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].cpu != out[j].cpu {
			return out[i].cpu > out[j].cpu
		}
		return out[i].name < out[j].name
	})
	return out
}

// renderCost prints status --cost: one row per experiment with recorded
// cells, then the total and the cells without a record.
func renderCost(out io.Writer, profile string, p *pipeline.Plan) {
	exps := costByExperiment(p)
	var total float64
	var cells, unrecorded int
	for _, c := range exps {
		total += c.cpu
		cells += c.cells
		unrecorded += c.unrecorded
	}
	tw := tablewriter.NewWriter(out)
	tw.Header("experiment", "cells", "cpu", "per cell", "most", "share")
	for _, c := range exps {
		if c.cells == 0 {
			continue
		}
		share := 0.0
		if total > 0 {
			share = 100 * c.cpu / total
		}
		tw.Append([]string{c.name, fmt.Sprint(c.cells), cpuText(c.cpu), cpuText(c.cpu / float64(c.cells)), cpuText(c.most), fmt.Sprintf("%.1f%%", share)})
	}
	tw.Render()
	fmt.Fprintf(out, "profile %s: %s with a record, CPU %s; %s without one (stale or failed)\n",
		profile, plural(cells, "cell"), cpuText(total), plural(unrecorded, "cell"))
}
