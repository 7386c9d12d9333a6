package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"

	"repro/cellid"
	"repro/experiments"
	"repro/internal/latex"
	"repro/judge"
	"repro/numbers"
	"repro/verdict"
)

func cmdShow() *command {
	var g globalFlags
	fs := newFlags("show", &g)
	summary := fs.Bool("summary", false, "with 'reproduction': print only the one-line verdict (counts of numbers and claims)")
	asJSON := fs.Bool("json", false, "with 'reproduction': print the whole report as JSON (every judgement and the numbers behind it)")
	return &command{
		name: "show", usage: "[--profile P] [--summary | --json] <table | reproduction | experiment NAME>",
		short: "print a rendered table, the reproduction report, or an experiment's config, in the terminal",
		long: `Show prints a table as the store renders it for the current config (or, if
it is not rendered yet, as committed in paper/tables/), with each number's
seed count; '*' marks a bold (best) value. 'repro show reproduction' prints
the reproduction report: its one-line verdict and the counts per table and
figure, then every number that differs (with what is known of its cause),
every claim that differs, and then every number and claim with its verdict
(agrees, differs, inconclusive or not run; docs/verdicts.md gives the
rule). 'repro show reproduction --summary' prints the one line only, and
--json the whole report as JSON.
'repro show experiment NAME' prints an experiment's learner config under
the profile, per protocol, as the fields that differ from the default
system (the learner's defaults under the same protocol and profile), each
with the default beside it, and the presets.toml entries its preset
resolves through (docs/presets.md).`,
		flags: fs, maxArgs: 2,
		run: func(ctx context.Context, e *env, args []string) error {
			if len(args) == 2 && args[0] == "experiment" {
				if *summary {
					return usageErr("--summary goes with 'show reproduction'")
				}
				w, err := openWorkspace(e, &g)
				if err != nil {
					return err
				}
				return runShowExperiment(e, w, args[1])
			}
			if len(args) != 1 || args[0] == "experiment" {
				return usageErr("show takes one table name, 'reproduction', or 'experiment NAME'")
			}
			if (*summary || *asJSON) && args[0] != "reproduction" {
				return usageErr("--summary and --json go with 'show reproduction'")
			}
			w, err := openWorkspace(e, &g)
			if err != nil {
				return err
			}
			if *summary && *asJSON {
				return usageErr("--summary or --json, not both")
			}
			return runShow(ctx, e, w, args[0], showMode{summary: *summary, json: *asJSON})
		},
	}
}

// showMode is how `show reproduction` prints the report: in full, its
// summary line only, or as JSON.
type showMode struct{ summary, json bool }

func runShow(ctx context.Context, e *env, w *workspace, name string, mode showMode) error {
	summary := mode.summary
	p, err := w.planHere()
	if err != nil {
		return err
	}
	if name == "reproduction" {
		b, ok, why, err := cellOutput(ctx, w, p, cellid.Reproduction, "report")
		if err != nil {
			return err
		}
		rep := &judge.Report{}
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
			if summary || mode.json {
				return printReport(e, rep, mode)
			}
			fmt.Fprintf(e.stdout, "(not computed for the current config: %s; showing the report of the committed %s and %s)\n", why, rel(w, w.paperPath(tablesSubdir, "*.ids.json")), rel(w, w.paperPath(figuresSubdir, "*.ids.json")))
			if len(missing) > 0 {
				fmt.Fprintf(e.stdout, "(tables and figures not committed yet, left out: %s)\n", strings.Join(missing, ", "))
			}
		}
		if summary || mode.json {
			return printReport(e, rep, mode)
		}
		showReport(e, rep)
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

func showTable(e *env, sc *numbers.Sidecar) error {
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
		// Not run: the LaTeX cell reads "not run" with a lettered note
		// (a table rendered before that left it blank: so does show).
		if n.Status.Kind == numbers.StatusNotRun && strings.Contains(n.Text, "not run") {
			why := n.Status.Why
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

func plainCell(n *numbers.NumberRef) string {
	switch {
	case n.Status.Kind == numbers.StatusNA:
		return "---"
	case n.Status.Kind != numbers.StatusOK:
		return ""
	}
	d := 1 // as the table prints it (sidecars before render v6 name no decimals)
	if n.Decimals != nil {
		d = *n.Decimals
	}
	s := fmt.Sprintf("%.*f ± %.*f", d, n.Acc.Mean, d, n.Acc.SD)
	if strings.Contains(n.Text, `\mathbf`) {
		s = "*" + s
	}
	if n.N != n.Expected {
		s += fmt.Sprintf(" (n=%d of %d)", n.N, n.Expected)
	}
	return s
}

// plainLaTeX turns a row label into terminal text: the one converter
// (package latex), keeping a leading \quad as the row's indent.
func plainLaTeX(s string) string {
	indent := ""
	if t := strings.TrimSpace(s); strings.HasPrefix(t, `\quad`) {
		indent = "  "
	}
	return indent + latex.ToText(s)
}

// committedReport rebuilds the reproduction report from the committed
// sidecars (paper/tables/<table>.ids.json, which carry every number's
// aggregate) and the published values: what the reproduction cell computes
// from the tables as committed, so a fresh clone can show it without a store.
// Tables declared but not committed yet are left out with their published
// values, and listed in missing.
func committedReport(w *workspace) (rep *judge.Report, missing []string, err error) {
	c := w.graph.Cell(cellid.Reproduction)
	if c == nil {
		return nil, nil, fmt.Errorf("profile %s has no reproduction cell", w.profile)
	}
	rp, ok := c.Params.(*judge.Params)
	if !ok {
		return nil, nil, fmt.Errorf("reproduction cell: params %T", c.Params)
	}
	var recs []*numbers.AggregateRecord
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
	for _, f := range rp.Figures {
		name := strings.TrimPrefix(f, "fig:")
		b, err := os.ReadFile(w.figurePath(name, "ids.json"))
		if errors.Is(err, fs.ErrNotExist) {
			missing = append(missing, f)
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		side := &numbers.FigureSidecar{}
		if err := json.Unmarshal(b, side); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", rel(w, w.figurePath(name, "ids.json")), err)
		}
		have["fig/"+name] = true
		recs = append(recs, numbers.FigureRecord(side))
	}
	if len(recs) == 0 {
		return nil, missing, fmt.Errorf("no table is committed under %s", rel(w, w.paperPath(tablesSubdir)))
	}
	// A value of a table or figure not committed is not run here. The
	// disputed rows read ours as committed (paper/disputed.json).
	var disputed *numbers.AggregateRecord
	if len(rp.Disputed) > 0 {
		b, err := os.ReadFile(w.paperPath(disputedTo))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			missing = append(missing, judge.DisputedTable)
		case err != nil:
			return nil, nil, err
		default:
			disputed = &numbers.AggregateRecord{}
			if err := json.Unmarshal(b, disputed); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", rel(w, w.paperPath(disputedTo)), err)
			}
		}
	}
	if rep, err = judge.Reproduce(rp, recs, disputed); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", rel(w, w.paperPath(disputedTo)), err)
	}
	return rep, missing, nil
}

// recordOf is the aggregate record a sidecar was rendered from, as far as
// the report reads it: the numbers row by row, and the comparisons.
func recordOf(sc *numbers.Sidecar) *numbers.AggregateRecord {
	rec := &numbers.AggregateRecord{Table: sc.Table, Comparisons: sc.Comparisons}
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

// printReport prints the report's summary line, or the report as JSON.
func printReport(e *env, rep *judge.Report, mode showMode) error {
	if !mode.json {
		_, err := fmt.Fprintln(e.stdout, rep.Summary())
		return err
	}
	b, err := json.MarshalIndent(rep, "", " ")
	if err != nil {
		return err
	}
	_, err = e.stdout.Write(append(b, '\n'))
	return err
}

// showReport prints the reproduction report in the terminal: the verdict
// line and the counts per group first, then the differs, then everything.
func showReport(e *env, rep *judge.Report) {
	out := e.stdout
	if rep.Stamp != "" {
		fmt.Fprintln(out, rep.Stamp)
	}
	fmt.Fprintln(out, rep.Summary())
	tw := tablewriter.NewWriter(out)
	tw.Header("group", "judged", "agree", "differ", "inconclusive", "not run")
	add := func(name string, t judge.Tally) {
		tw.Append(name, strconv.Itoa(t.Judged), strconv.Itoa(t.Agree), strconv.Itoa(t.Differ), strconv.Itoa(t.Inconclusive), strconv.Itoa(t.NotRun))
	}
	for _, g := range rep.Groups {
		add(g.Group, g.Tally)
	}
	add("numbers", rep.Numbers)
	add("claims", rep.ClaimTally)
	tw.Render()
	fmt.Fprintf(out, "\nThe rule: %s\n", judge.RuleText)
	if len(rep.Disputed) > 0 {
		fmt.Fprintf(out, "\nDisputed rows, by seeds on both codes (%d; docs/disputed.md):\n%s", len(rep.Disputed), judge.DisputedText(rep.Disputed))
	}
	rows := rep.SortedRows()
	n := 0
	for _, r := range rows {
		if r.Verdict == verdict.Differs {
			n++
		}
	}
	fmt.Fprintf(out, "\nNumbers that differ (%d):\n", n)
	for _, r := range rows[:n] {
		cause := r.Cause
		if cause == "" {
			cause = "not known"
		}
		fmt.Fprintf(out, "- %s: paper %s, ours %s: %s. %s.%s Cause: %s. (%s)\n", r.ID, r.Published, r.Ours, r.Judgement.Certificate(), r.Judgement, noteText(r.Note), cause, source(r.Cite, r.Line))
	}
	var differ []judge.ClaimResult
	for _, c := range rep.Claims {
		if c.Verdict == verdict.Differs {
			differ = append(differ, c)
		}
	}
	fmt.Fprintf(out, "\nClaims that differ (%d):\n", len(differ))
	showClaims(e, differ)
	fmt.Fprintf(out, "\nEvery number (%d; differs first):\n", len(rows))
	for _, r := range rows {
		j := ""
		if r.Judgement != nil {
			j = " " + r.Judgement.String() + "."
			if c := r.Judgement.Certificate(); c != "" {
				j = " " + c + "." + j
			}
		}
		if r.Restates != "" {
			j += " Restates " + r.Restates + " (one comparison)."
		}
		fmt.Fprintf(out, "%-12s %s: paper %s, ours %s.%s%s (%s)\n", r.Verdict, r.ID, r.Published, cmpOr(r.Ours, "none"), j, noteText(r.Note), source(r.Cite, r.Line))
	}
	fmt.Fprintf(out, "\nEvery claim (%d):\n", len(rep.Claims))
	showClaims(e, rep.Claims)
	if len(rep.NotRun) > 0 {
		fmt.Fprintf(out, "\nThe paper's numbers not run (%d: %s):\n", rep.Numbers.NotRun, rep.NotRunByCategory)
		for _, g := range rep.NotRun {
			fmt.Fprintf(out, "- %s: %d numbers, %s, paper.tex lines %d-%d: %s\n", g.What, g.Count, g.Category, g.Lines[0], g.Lines[1], g.Reason)
		}
	}
}

func showClaims(e *env, cs []judge.ClaimResult) {
	for _, c := range cs {
		fmt.Fprintf(e.stdout, "%-12s %s: %s (%s)\n", c.Verdict, c.ID, c.Text, source(c.Cite, c.Line))
		for _, k := range c.Conditions {
			j := ""
			if k.Judgement != nil {
				j = "; " + k.Judgement.String()
			}
			fmt.Fprintf(e.stdout, "%14s%s: %s, %s%s\n", "", k.Text, k.Verdict, k.Detail, j)
		}
		if c.Cause != "" {
			fmt.Fprintf(e.stdout, "%14sCause: %s.\n", "", c.Cause)
		}
	}
}

func noteText(s string) string {
	if s == "" {
		return ""
	}
	return " " + s + "."
}

func cmpOr(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

func source(cite string, line int) string {
	if line > 0 {
		return fmt.Sprintf("%s, paper.tex:%d", cite, line)
	}
	return cite
}
