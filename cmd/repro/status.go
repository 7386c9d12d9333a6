package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/olekukonko/tablewriter"

	"repro/artifacts"
	"repro/pipeline"
)

func cmdStatus() *command {
	var g globalFlags
	fs := newFlags("status", &g)
	return &command{
		name: "status", usage: "[--profile P]",
		short: "cached / stale / failed counts per stage and per table",
		long: `Status counts, per stage and per rendered table, the cells that are cached,
stale (would run) and failed (stale, and their last attempt failed), and
the CPU time the cached cells took when they ran. With a remote holding
cells the store lacks (settings.remotes), a column counts those, and the CPU
time includes theirs. Last, what the scheduler saw of the profile's last run
that executed cells: its wall time at -j N, the core-seconds its jobs kept
busy, and the idle rest (wall x N - busy).`,
		flags: fs,
		run: func(ctx context.Context, e *env, args []string) error {
			w, p, err := openPlan(e, &g)
			if err != nil {
				return err
			}
			stageOrder, byStage, byTable := countStatus(p)
			render := func(title string, order []string, m map[string]*statusCounts) {
				renderStatus(e.stdout, title, order, m, p.InRemote() > 0)
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
	return fmt.Sprintf("last run %s: %s executed, %d cached, %d failed in %s wall at -j %d (%s executor); core-seconds busy %s, idle %s (%.1f%% of wall x jobs); cell CPU %s",
		r.End.Format("2006-01-02 15:04Z"), plural(r.Executed, "cell"), r.Cached, r.Failed, cpuText(r.WallSecs), r.Jobs, r.Executor,
		cpuText(r.BusySecs), cpuText(idle), pct, cpuText(r.CPUSecs))
}

// statusCounts are the cells of one stage or table by state, and the CPU
// seconds the cached and remote ones took.
type statusCounts struct {
	cached, stale, failed, remote int
	cpu                           float64
}

func (c *statusCounts) add(pc *pipeline.PlannedCell) {
	switch {
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
func countStatus(p *pipeline.Plan) (stageOrder []string, byStage, byTable map[string]*statusCounts) {
	byStage, byTable = map[string]*statusCounts{}, map[string]*statusCounts{}
	add := func(m map[string]*statusCounts, k string, pc *pipeline.PlannedCell) {
		if m[k] == nil {
			m[k] = &statusCounts{}
		}
		m[k].add(pc)
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
// remotes hold cells.
func renderStatus(out io.Writer, title string, order []string, m map[string]*statusCounts, remotes bool) {
	tw := tablewriter.NewWriter(out)
	if remotes {
		tw.Header(title, "cached", "in remote", "stale", "failed", "total", "cpu")
	} else {
		tw.Header(title, "cached", "stale", "failed", "total", "cpu")
	}
	for _, k := range order {
		c := m[k]
		row := []string{k, fmt.Sprint(c.cached), fmt.Sprint(c.stale), fmt.Sprint(c.failed), fmt.Sprint(c.cached + c.remote + c.stale + c.failed), cpuText(c.cpu)}
		if remotes {
			row = append(row[:2], append([]string{fmt.Sprint(c.remote)}, row[2:]...)...)
		}
		tw.Append(row)
	}
	tw.Render()
}
