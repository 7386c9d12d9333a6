package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"

	"github.com/olekukonko/tablewriter"

	"repro/experiments"
	"repro/experiments/cellid"
	"repro/stages"
)

func cmdShow() *command {
	var g globalFlags
	fs := newFlags("show", &g)
	summary := fs.Bool("summary", false, "with reproduction: only the verdict, one line")
	return &command{
		name: "show", usage: "[--profile P] <table | reproduction [--summary]>",
		short: "print a rendered table, or the reproduction report, in the terminal",
		long: `Show prints a table as the store renders it for the current config (or, if
it is not rendered yet, as committed in paper/tables/): mean ± s.d. over
seeds, "(n=k of m)" where seeds are missing, "not run (a)" with the reason
under the table; '*' marks a bold (best) value. 'repro show reproduction' prints
the reproduction report: for every number the paper's value, ours, the
difference and whether it lies within the seed noise. 'repro show
reproduction --summary' prints its verdict in one line (make paper ends
with it).`,
		flags: fs,
		run: func(ctx context.Context, e *env, args []string) error {
			if len(args) != 1 {
				return usageErr("show takes one table name")
			}
			if *summary && args[0] != "reproduction" {
				return usageErr("--summary goes with show reproduction, not a table")
			}
			w, err := openWorkspace(e, &g)
			if err != nil {
				return err
			}
			return runShow(ctx, e, w, args[0], *summary)
		},
	}
}

func runShow(ctx context.Context, e *env, w *workspace, name string, summary bool) error {
	p, err := w.planHere()
	if err != nil {
		return err
	}
	if name == "reproduction" {
		b, ok, why, err := cellOutput(ctx, w, p, cellid.Reproduction, "report")
		if err != nil {
			return err
		}
		rep := &stages.ReproReport{}
		if ok {
			if err := json.Unmarshal(b, rep); err != nil {
				return err
			}
		} else {
			// As for a table: what the work tree holds, said so.
			var missing []string
			if rep, missing, err = committedReport(w); err != nil {
				return fmt.Errorf("the reproduction report is not computed (%s), and the committed tables give none: %w", why, err)
			}
			if summary {
				fmt.Fprintf(e.stdout, "reproduction (profile %s, from the committed tables: the report is not computed for the current config): %s (repro show reproduction)\n", w.profile, rep.Summary())
				return nil
			}
			fmt.Fprintf(e.stdout, "(not computed for the current config: %s; showing the report of the committed %s)\n", why, rel(w, w.paperPath(tablesSubdir, "*.ids.json")))
			if len(missing) > 0 {
				fmt.Fprintf(e.stdout, "(tables not committed yet, left out: %s)\n", strings.Join(missing, ", "))
			}
		}
		if summary {
			fmt.Fprintf(e.stdout, "reproduction (profile %s): %s (repro show reproduction)\n", rep.Profile, rep.Summary())
			return nil
		}
		if rep.Stamp != "" {
			fmt.Fprintln(e.stdout, rep.Stamp)
		}
		tw := tablewriter.NewWriter(e.stdout)
		tw.Header("number", "published", "ours", "diff", "within noise", "note")
		for _, r := range rep.Rows {
			d := ""
			if r.HasDiff {
				d = fmt.Sprintf("%+.1f", r.Diff)
			}
			tw.Append(r.ID, r.Published, r.Ours, d, r.Within, r.Note)
		}
		tw.Render()
		fmt.Fprintf(e.stdout, "%d numbers compared with the paper, %d within the seed noise, %d not run (profile %s)\n", rep.Compared, rep.Within, rep.NotRun, rep.Profile)
		return nil
	}
	sc, ok, why, err := currentSidecar(ctx, w, p, name)
	if err != nil {
		return err
	}
	if !ok {
		known := false
		for _, t := range w.tableNames() {
			known = known || t == name
		}
		if !known {
			names := slices.Sorted(slices.Values(w.tableNames()))
			return usageErr("no table %q%s (have %s, reproduction)", name, didYouMean(name, append(names, "reproduction")), strings.Join(names, ", "))
		}
		if sc, err = experiments.ReadTableSidecar(w.idsPath(name)); err != nil {
			return fmt.Errorf("table %s is not rendered (%s) and not in the work tree: %w", name, why, err)
		}
		fmt.Fprintf(e.stdout, "(not rendered for the current config: %s; showing %s)\n", why, rel(w, w.idsPath(name)))
	}
	return showTable(e, sc)
}

func showTable(e *env, sc *stages.Sidecar) error {
	if sc.Stamp != "" {
		fmt.Fprintln(e.stdout, sc.Stamp)
	}
	var cols []string
	rows := map[int][]string{}
	var order []int
	var notes []string // why cells were not run, lettered a, b, ...
	for _, n := range sc.Numbers {
		if n.Row == 1 {
			cols = append(cols, n.Protocol)
		}
		if _, ok := rows[n.Row]; !ok {
			order = append(order, n.Row)
			rows[n.Row] = []string{plainLaTeX(n.Label)}
			if sc.ParamTitle != "" {
				rows[n.Row] = append(rows[n.Row], plainLaTeX(n.Param))
			}
		}
		cell := plainCell(&n)
		// Not run: the general tables say why (their LaTeX cell reads
		// "not run"); the simple ones leave the cell blank, as the paper's.
		if why, ok := strings.CutPrefix(n.Status, "not run"); ok && strings.Contains(n.Text, "not run") {
			why = strings.TrimPrefix(why, ": ")
			i := slices.Index(notes, why)
			if i < 0 {
				i = len(notes)
				notes = append(notes, why)
			}
			cell = fmt.Sprintf("not run (%c)", 'a'+i)
		}
		rows[n.Row] = append(rows[n.Row], cell)
	}
	tw := tablewriter.NewWriter(e.stdout)
	head := []string{sc.Table}
	if sc.ParamTitle != "" {
		head = append(head, plainLaTeX(sc.ParamTitle))
	}
	tw.Header(append(head, cols...))
	for _, r := range order {
		tw.Append(rows[r])
	}
	tw.Render()
	for i, why := range notes {
		fmt.Fprintf(e.stdout, "(%c) not run: %s\n", 'a'+i, why)
	}
	for _, c := range sc.Comparisons {
		fmt.Fprintf(e.stdout, "%s: %s - %s (%s): %s\n", c.ID, c.A, c.B, c.Protocol, experiments.CompareText(c, true))
	}
	return nil
}

func plainCell(n *stages.NumberRef) string {
	switch {
	case n.Status == "n/a":
		return "---"
	case n.Status != "ok":
		return ""
	}
	s := fmt.Sprintf("%.1f ± %.1f", n.Acc.Mean, n.Acc.SD)
	if strings.Contains(n.Text, `\mathbf`) {
		s = "*" + s
	}
	if n.N != n.Expected {
		s += fmt.Sprintf(" (n=%d of %d)", n.N, n.Expected)
	}
	return s
}

var (
	texCmdArg = regexp.MustCompile(`\\(textbf|emph|mathbf|texttt)\{([^{}]*)\}`)
	texRef    = regexp.MustCompile(`~?\\ref\{([^{}]*)\}`)
)

// plainLaTeX turns a row label into terminal text (roughly).
func plainLaTeX(s string) string {
	s = texCmdArg.ReplaceAllString(s, "$2")
	s = texRef.ReplaceAllString(s, " $1")
	r := strings.NewReplacer(`\quad `, "  ", `\quad`, "  ", `\kwta{}`, "k-WTA", `{\cdot}`, "·", `\lambda`, "λ", `\mu`, "μ", `\eta`, "η", `\beta`, "β", `\gamma`, "γ", `\theta`, "θ", `\sigma`, "σ", `\rho`, "ρ",
		`{=}`, "=", `\%`, "%", `$`, "", `~`, " ", `\ `, " ", "{", "", "}", "")
	return r.Replace(s)
}

// committedReport rebuilds the reproduction report from the committed
// sidecars (paper/tables/<table>.ids.json, which carry every number's
// aggregate) and the published values: what the reproduction cell computes
// from the tables as committed, so a fresh clone can show it without a store.
// Tables declared but not committed yet are left out with their published
// values, and listed in missing.
func committedReport(w *workspace) (rep *stages.ReproReport, missing []string, err error) {
	c := w.graph.Cell(cellid.Reproduction)
	if c == nil {
		return nil, nil, fmt.Errorf("profile %s has no reproduction cell", w.profile)
	}
	rp, ok := c.Params.(*stages.ReproductionParams)
	if !ok {
		return nil, nil, fmt.Errorf("reproduction cell: params %T", c.Params)
	}
	var recs []*stages.AggregateRecord
	have := map[string]bool{}
	for _, t := range rp.Tables {
		sc, err := experiments.ReadTableSidecar(w.idsPath(t))
		if errors.Is(err, fs.ErrNotExist) {
			missing = append(missing, t)
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		have[t] = true
		recs = append(recs, recordOf(sc))
	}
	if len(recs) == 0 {
		return nil, missing, fmt.Errorf("no table is committed under %s", rel(w, w.paperPath(tablesSubdir)))
	}
	sub := *rp
	sub.Values = slices.DeleteFunc(slices.Clone(rp.Values), func(v stages.PublishedValue) bool {
		t, _, _ := strings.Cut(v.ID, "/")
		return !have[t]
	})
	rep, err = stages.Reproduce(&sub, recs)
	return rep, missing, err
}

// recordOf is the aggregate record a sidecar was rendered from, as far as
// the report reads it: the numbers row by row, and the comparisons.
func recordOf(sc *stages.Sidecar) *stages.AggregateRecord {
	rec := &stages.AggregateRecord{Table: sc.Table, Comparisons: sc.Comparisons}
	row := 0
	for _, n := range sc.Numbers {
		if n.Row != row {
			row = n.Row
			rec.Rows = append(rec.Rows, nil)
		}
		c := n.AggCell
		// The sidecar's own id and protocol shadow the embedded cell's.
		c.ID, c.Protocol = n.ID, n.Protocol
		rec.Rows[len(rec.Rows)-1] = append(rec.Rows[len(rec.Rows)-1], c)
	}
	return rec
}
