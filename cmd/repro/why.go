package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"repro/artifacts"
	"repro/experiments"
	"repro/internal/latex"
	"repro/numbers"
	"repro/pipeline"
	"repro/stages"
)

func cmdWhy() *command {
	var g globalFlags
	fs := newFlags("why", &g)
	depth := fs.Int("depth", 64, "how many levels of inputs to follow")
	return &command{
		name: "why", usage: "<cell ID | key | digest | prefix | table:row:column | number ID>",
		short: "print the provenance of a cell, an artifact or a rendered number",
		long: `Why prints where something came from: the stage and its version, the
resolved config, the seed, the outputs, the code revision (and whether the
work tree was dirty), Go version, host, start and end time, wall and CPU
seconds; then every input, recursively, down to the raw data files and their
SHA-256 checksums. The argument may be a cell ID from 'repro plan --all', a
cell key or blob digest (or a unique prefix of at least 6 hex digits), or a
rendered number: paper/tables/<table>.tex:<row>:<column> or its ID.`,
		flags: fs, maxArgs: 1,
		run: func(ctx context.Context, e *env, args []string) error {
			if len(args) != 1 {
				return usageErr("why takes one argument")
			}
			w, err := openWorkspace(e, &g)
			if err != nil {
				return err
			}
			if handled, err := whyNumber(ctx, e, w, args[0]); handled {
				return err
			}
			// why prints digests as sha256:<hex>; take them back that way.
			keys, err := resolveWhy(w, strings.TrimPrefix(args[0], "sha256:"))
			if err != nil {
				return err
			}
			seen := map[artifacts.Key]bool{}
			for _, k := range keys {
				if err := printProvenance(e.stdout, w.manifest, w.gitEarlier(ctx), k, "", *depth, seen); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

var hexRe = regexp.MustCompile(`^[0-9a-f]{6,64}$`)

// resolveWhy finds the cell keys an argument names.
func resolveWhy(w *workspace, arg string) ([]artifacts.Key, error) {
	if c := w.graph.Cell(arg); c != nil {
		p, err := w.planHere()
		if err != nil {
			return nil, err
		}
		pc := p.Cell(arg)
		if pc.State == pipeline.Stale {
			return nil, fmt.Errorf("cell %s is not computed (would run: %s)", arg, pipeline.JoinReasons(pc.Reasons))
		}
		return []artifacts.Key{pc.Key}, nil
	}
	if !hexRe.MatchString(arg) {
		return nil, fmt.Errorf("%q is neither a number ID, a table place (paper/tables/T.tex:ROW:COL), a cell ID of profile %s nor a hex key or digest%s", arg, w.profile, didYouMean(arg, whyNames(w)))
	}
	// A cell key (prefix), in the store or a remote?
	srcs := w.recordSources()
	seen := map[artifacts.Key]bool{}
	var all, keys []artifacts.Key
	for _, r := range srcs {
		ks, err := r.Keys()
		if err != nil {
			return nil, err
		}
		for _, k := range ks {
			if !seen[k] {
				seen[k] = true
				all = append(all, k)
				if strings.HasPrefix(k.String(), arg) {
					keys = append(keys, k)
				}
			}
		}
	}
	if len(keys) > 1 {
		return nil, fmt.Errorf("prefix %s names %d cells; give more digits", arg, len(keys))
	}
	if len(keys) == 1 {
		return keys, nil
	}
	// An output digest (prefix): the cells that produced it.
	for _, k := range all {
		m, _, err := w.manifest(k)
		if err != nil {
			continue
		}
		for _, o := range m.Outputs {
			if strings.HasPrefix(o.Digest.String(), arg) {
				keys = append(keys, k)
				break
			}
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("no cell or artifact %s in store %s", arg, w.store.Root())
	}
	return keys, nil
}

// printProvenance prints cell k's record and, indented, its inputs'.
func printProvenance(out io.Writer, get manifestGetter, earlier earlierFunc, k artifacts.Key, indent string, depth int, seen map[artifacts.Key]bool) error {
	m, from, err := get(k)
	if err != nil {
		if errors.Is(err, artifacts.ErrNotFound) {
			fmt.Fprintf(out, "%scell %s: no record in the store\n", indent, k.Short())
			return nil
		}
		return err
	}
	fmt.Fprintf(out, "%scell %s\n", indent, m.CellID)
	in := indent + "  "
	if seen[k] {
		fmt.Fprintf(out, "%skey %s (shown above)\n", in, k)
		return nil
	}
	seen[k] = true
	pv := m.Provenance
	fmt.Fprintf(out, "%skey      %s\n", in, k)
	fmt.Fprintf(out, "%sstage    %s v%d\n", in, m.Stage, m.StageVersion)
	ps, _ := pipeline.ParseParamsText(m.Params)
	for i, p := range ps {
		label := "config  "
		if i > 0 {
			label = "        "
		}
		fmt.Fprintf(out, "%s%s %s = %s\n", in, label, p.Name, p.Value)
	}
	for _, o := range m.Outputs {
		fmt.Fprintf(out, "%soutput   %s sha256:%s (%d bytes)\n", in, o.Name, o.Digest, o.Size)
	}
	dirty := ""
	if pv.Dirty {
		dirty = " (dirty work tree)"
		if pv.DirtyDiff != "" {
			dirty = fmt.Sprintf(" (dirty work tree, changes %.12s)", pv.DirtyDiff)
		}
	}
	fmt.Fprintf(out, "%scode     revision %s%s, %s\n", in, pv.Revision, dirty, pv.GoVersion)
	var fromGit []artifacts.Build
	if pv.Recomputed() && len(pv.Earlier) == 0 && earlier != nil {
		fromGit = earlier(m)
	}
	printHistory(out, in, &pv, fromGit)
	cpu := ""
	if pv.CPU != "" {
		cpu = fmt.Sprintf(", CPU %s, %s kernels", pv.CPU, pv.Kernels)
	}
	fmt.Fprintf(out, "%shost     %s (%s executor%s)%s\n", in, pv.Host, pv.Executor, slurmSuffix(pv.SlurmJob), cpu)
	fmt.Fprintf(out, "%stime     %s -> %s (%.2f s wall, %.2f s cpu)\n", in, pv.Start.Format("2006-01-02 15:04:05Z"), pv.End.Format("15:04:05Z"), pv.WallSecs, pv.CPUSecs)
	fmt.Fprintf(out, "%slog      sha256:%s\n", in, m.Log)
	if from != "" {
		fmt.Fprintf(out, "%srecord   from remote %s (not in this store)\n", in, from)
	}
	if depth <= 0 {
		return nil
	}
	for _, inp := range m.Inputs {
		fmt.Fprintf(out, "%sinput %s:\n", in, inp.Name)
		if err := printProvenance(out, get, earlier, inp.Key, in+"  ", depth-1, seen); err != nil {
			return err
		}
	}
	return nil
}

func slurmSuffix(id string) string {
	if id == "" {
		return ""
	}
	return ", slurm job " + id
}

// whyNumber resolves a rendered number, given as
// <path>.tex:<row>:<column> (row and column 1-based as the sidecar counts
// them; column may be a protocol) or as a number ID such as
// ablation/full/sequential or bpk/compare/rotation. It reports whether arg
// was one.
func whyNumber(ctx context.Context, e *env, w *workspace, arg string) (bool, error) {
	if strings.HasPrefix(arg, "fig/") {
		return true, whyFigurePoint(ctx, e, w, arg)
	}
	tables := w.tableNames()
	var table string
	var sc *numbers.Sidecar
	var num *numbers.NumberRef
	var cmp *numbers.Comparison
	p, err := w.planHere()
	if err != nil {
		return true, err
	}
	if file, loc, ok := strings.Cut(arg, ".tex:"); ok {
		if table, sc, num, err = numberAt(arg, file, loc); err != nil {
			return true, err
		}
	} else {
		t, _, _ := strings.Cut(arg, "/")
		found := false
		for _, x := range tables {
			found = found || x == t
		}
		if !found {
			return false, nil
		}
		table = t
		cur, ok, _, err := currentSidecar(ctx, w, p, table)
		if err != nil {
			return true, err
		}
		sc = cur
		if !ok {
			if sc, err = experiments.ReadTableSidecar(w.idsPath(table)); err != nil {
				return true, fmt.Errorf("table %s is neither rendered in the store nor committed: %w", table, err)
			}
			fmt.Fprintf(e.stdout, "(table %s is not rendered for the current config; showing the committed %s)\n", table, rel(w, w.idsPath(table)))
		}
		for i := range sc.Numbers {
			if sc.Numbers[i].ID == arg {
				num = &sc.Numbers[i]
			}
		}
		for i := range sc.Comparisons {
			if sc.Comparisons[i].ID == arg {
				cmp = &sc.Comparisons[i]
			}
		}
		if num == nil && cmp == nil {
			var ids []string
			for _, n := range sc.Numbers {
				ids = append(ids, n.ID)
			}
			for _, c := range sc.Comparisons {
				ids = append(ids, c.ID)
			}
			return true, fmt.Errorf("table %s has no number %s%s", table, arg, didYouMean(arg, ids))
		}
	}
	if cmp != nil {
		fmt.Fprintf(e.stdout, "number %s: %s - %s (%s), seed-paired bootstrap over %d seeds %v\n", cmp.ID, cmp.A, cmp.B, cmp.Protocol, cmp.N, cmp.Seeds)
		if cmp.Status.OK() {
			fmt.Fprintf(e.stdout, "  difference %+.3f, 95%% interval [%+.3f, %+.3f]\n", cmp.Diff, cmp.Lo, cmp.Hi)
		} else {
			fmt.Fprintf(e.stdout, "  %s\n", cmp.Status)
		}
		for _, x := range []string{cmp.A, cmp.B} {
			id := table + "/" + x + "/" + cmp.Protocol
			for i := range sc.Numbers {
				if sc.Numbers[i].ID == id {
					printNumber(e, w, p, sc, &sc.Numbers[i])
				}
			}
		}
		return true, nil
	}
	printNumber(e, w, p, sc, num)
	return true, nil
}

// numberAt finds the number at loc (<row>:<column>) of the committed table
// file (its sidecar beside it), for whyNumber's <path>.tex:<row>:<column>.
func numberAt(arg, file, loc string) (table string, sc *numbers.Sidecar, num *numbers.NumberRef, err error) {
	table = filepath.Base(file)
	rowS, colS, ok := strings.Cut(loc, ":")
	if !ok {
		return "", nil, nil, usageErr("%s: want <table>.tex:<row>:<column>", arg)
	}
	row, err := strconv.Atoi(rowS)
	if err != nil {
		return "", nil, nil, usageErr("%s: row %q is not a number", arg, rowS)
	}
	if sc, err = experiments.ReadTableSidecar(strings.TrimSuffix(file+".tex", ".tex") + ".ids.json"); err != nil {
		return "", nil, nil, fmt.Errorf("%s: %w (the sidecar is written with the table by repro run)", arg, err)
	}
	for i := range sc.Numbers {
		n := &sc.Numbers[i]
		if n.Row == row && (strconv.Itoa(n.Column) == colS || n.Protocol == colS) {
			num = n
		}
	}
	if num == nil {
		return "", nil, nil, fmt.Errorf("%s: no number at row %d, column %s", arg, row, colS)
	}
	return table, sc, num, nil
}

// printNumber prints one number's provenance: its cells, seeds, result
// digests, configuration, data split and code revision.
func printNumber(e *env, w *workspace, p *pipeline.Plan, sc *numbers.Sidecar, n *numbers.NumberRef) {
	out := e.stdout
	if n.Text == "" {
		// A blank table cell: say so, and why, rather than "= " and nothing.
		fmt.Fprintf(out, "number %s: blank in the table (%s)\n", n.ID, n.Status)
	} else {
		fmt.Fprintf(out, "number %s = %s\n", n.ID, latex.ToText(n.Text))
	}
	fmt.Fprintf(out, "  table %s (profile %s), row %d \"%s\", column %d (%s); from %s\n", sc.Table, sc.Profile, n.Row, latex.ToText(n.Label), n.Column, n.Protocol, sc.Source)
	printCell(e, w, p, &n.AggCell)
}

// printCell prints the seeds behind one table or figure cell: each seed's
// value, train cell, result digest, key, code revision and data, and the
// configuration once.
func printCell(e *env, w *workspace, p *pipeline.Plan, n *numbers.AggCell) {
	out := e.stdout
	if n.Status.Kind != numbers.StatusOK {
		fmt.Fprintf(out, "  %s\n", n.Status)
		return
	}
	what := "final accuracy x100"
	if n.Metric != "" && n.Metric != "acc" {
		what = n.Metric
	}
	fmt.Fprintf(out, "  %s: mean %.4f, sd %.4f (ddof 1) over n=%d of %d seeds %v", what, n.Acc.Mean, n.Acc.SD, n.N, n.Expected, n.Seeds)
	if len(n.Missing) > 0 {
		fmt.Fprintf(out, "; MISSING seeds %v", n.Missing)
	}
	if stages.IsEnergyMetric(n.Metric) {
		fmt.Fprintln(out) // an energy record has no forgetting or replay
	} else {
		fmt.Fprintf(out, "\n  forgetting x100: %.3f ± %.3f; replay updates: %.0f ± %.0f\n", n.Forgetting.Mean, n.Forgetting.SD, n.Replay.Mean, n.Replay.SD)
	}
	printedConfig, prevData := false, ""

	for i, id := range n.TrainCells {
		fmt.Fprintf(out, "  seed %d: %s = %.4f, result sha256:%s\n", n.Seeds[i], id, n.Values[i], n.Results[i])
		if pc := p.Cell(id); trainManifest(p, id) == nil && pc != nil {
			stale, v := w.trainVerdict(pc, n.Results[i])
			if stale {
				fmt.Fprintf(out, "    STALE: %s; see repro check\n", v)
			} else {
				fmt.Fprintf(out, "    (%s: repro run computes it; a pushed ledger holds it)\n", v)
			}
		}
		m := numberSeed(w, p, id, n.Results[i])
		if m == nil {
			continue
		}
		if d, _ := m.Output("result"); d.String() != n.Results[i] {
			fmt.Fprintf(out, "    STALE: the store's current result is sha256:%s\n", d)
		}
		dirty := ""
		if m.Provenance.Dirty {
			dirty = " (dirty)"
		}
		fmt.Fprintf(out, "    key %s, stage %s v%d, code %s%s, %s, %s, %.0f s\n", m.Key, m.Stage, m.StageVersion, m.Provenance.Revision, dirty, m.Provenance.GoVersion, m.Provenance.Host, m.Provenance.WallSecs)
		data := dataOf(w.manifest, m.Inputs, map[artifacts.Key]bool{})
		if d := strings.Join(data, "\n"); d == prevData {
			fmt.Fprintf(out, "    data as above\n")
		} else {
			prevData = d
			for _, d := range data {
				fmt.Fprintf(out, "    data %s\n", d)
			}
		}
		if !printedConfig {
			printedConfig = true
			ps, _ := pipeline.ParseParamsText(m.Params)
			fmt.Fprintf(out, "    configuration (all seeds alike but train.seed):\n")
			for _, pr := range ps {
				fmt.Fprintf(out, "      %s = %s\n", pr.Name, pr.Value)
			}
			printTrainDiff(out, w, id)
		}
	}
	fmt.Fprintf(out, "  full provenance of a seed: repro why <train cell ID>\n")
}

// numberSeed is the record behind one seed of a table or figure cell: the
// plan's record of train cell id when it is not stale, else the record of
// its committed result (sha256 hex) if the store or a remote holds one;
// nil when there is none. why prints it and crate links the number to it.
func numberSeed(w *workspace, p *pipeline.Plan, id, result string) *artifacts.Manifest {
	m := trainManifest(p, id)
	if m == nil && p.Cell(id) != nil {
		// The record of the committed result, if one is here, is its
		// provenance all the same.
		m = w.records()[id+" "+result]
	}
	return m
}

// dataOf lists the split, stream and raw data digests upstream of inputs.
func dataOf(get manifestGetter, inputs []artifacts.Input, seen map[artifacts.Key]bool) []string {
	var out []string
	for _, in := range inputs {
		if seen[in.Key] {
			continue
		}
		seen[in.Key] = true
		stage, _, _ := strings.Cut(in.CellID, "/")
		switch stage {
		case "split", "download":
			for _, o := range in.Outputs {
				out = append(out, fmt.Sprintf("%s %s sha256:%s", in.CellID, o.Name, o.Digest))
			}
		}
		if m, _, err := get(in.Key); err == nil {
			out = append(out, dataOf(get, m.Inputs, seen)...)
		}
	}
	return out
}

// whyFigurePoint prints the provenance of one plotted point
// (fig/<figure>/<series>/<x>, or fig/<figure>/line/<experiment>): the
// figure's current sidecar in the store, else the committed one.
func whyFigurePoint(ctx context.Context, e *env, w *workspace, arg string) error {
	name, _, _ := strings.Cut(strings.TrimPrefix(arg, "fig/"), "/")
	if !slices.Contains(w.figureNames(), name) {
		return fmt.Errorf("%s: no figure %q in profile %s (figures: %s)", arg, name, w.profile, strings.Join(w.figureNames(), ", "))
	}
	p, err := w.planHere()
	if err != nil {
		return err
	}
	sc, ok, _, err := currentFigure(ctx, w, p, name)
	if err != nil {
		return err
	}
	if !ok {
		if sc, err = experiments.ReadFigureSidecar(w.figurePath(name, "ids.json")); err != nil {
			return fmt.Errorf("figure %s is neither rendered in the store nor committed: %w", name, err)
		}
		fmt.Fprintf(e.stdout, "(figure %s is not rendered for the current config; showing the committed %s)\n", name, rel(w, w.figurePath(name, "ids.json")))
	}
	var pt *numbers.FigurePoint
	for _, list := range [][]numbers.FigurePoint{sc.Points, sc.Lines} {
		for i := range list {
			if list[i].ID == arg {
				pt = &list[i]
			}
		}
	}
	if pt == nil {
		var ids []string
		for _, x := range append(sc.Points, sc.Lines...) {
			ids = append(ids, x.ID)
		}
		return fmt.Errorf("figure %s has no point %s; its points: %s", name, arg, strings.Join(ids, " "))
	}
	out := e.stdout
	fmt.Fprintf(out, "point %s = %s\n", pt.ID, pt.Text)
	fmt.Fprintf(out, "  figure %s (%s, profile %s), panel %d, series %s, experiment %s; from %s\n", sc.Figure, sc.Label, sc.Profile, pt.Panel, pt.Series, pt.Experiment, sc.Source)
	if pt.Status.Kind != numbers.StatusOK {
		fmt.Fprintf(out, "  %s\n", pt.Status)
	} else {
		fmt.Fprintf(out, "  drawn at x = %.4f, y = %.4f; bars (%s) y [%.4f, %.4f]", pt.X, pt.Y, pt.Errors, pt.YLo, pt.YHi)
		if pt.XCell != nil {
			fmt.Fprintf(out, ", x [%.4f, %.4f]", pt.XLo, pt.XHi)
		}
		fmt.Fprintln(out)
	}
	if sel := pt.Selection; sel != nil {
		var cands []string
		for _, c := range sel.Candidates {
			if c.Status.Kind != numbers.StatusOK {
				cands = append(cands, c.Experiment+" "+c.Status.String())
				continue
			}
			cands = append(cands, fmt.Sprintf("%s %.2f ± %.2f (%d seeds)", c.Experiment, c.Mean, c.SD, c.N))
		}
		fmt.Fprintf(out, "  selected (%s): %s, of %s\n", sel.Rule, cmp.Or(sel.Chosen, "none"), strings.Join(cands, "; "))
	}
	if d := pt.Diff; d != nil && d.Status.OK() {
		fmt.Fprintf(out, "  seed-paired margin %s - %s (%s) over %d seeds %v: %+.3f, 95%% bootstrap interval [%+.3f, %+.3f]\n", d.A, d.B, d.Protocol, d.N, d.Seeds, d.Diff, d.Lo, d.Hi)
	}
	for _, c := range []struct {
		role string
		cell *numbers.AggCell
	}{{"y", pt.YCell}, {"x", pt.XCell}, {"minus", pt.BCell}} {
		if c.cell == nil {
			continue
		}
		fmt.Fprintf(out, " %s: experiment %s, protocol %s\n", c.role, c.cell.Experiment, c.cell.Protocol)
		printCell(e, w, p, c.cell)
	}
	return nil
}

// printHistory prints, for a record of a bit-identical recompute, the
// build that computed the outputs first and every build that recomputed
// them since (provenance.earlier), this record's last. A record of a
// recompute older than that field names no earlier build: fromGit are
// then the builds of the record's earlier versions in the ledger's git
// history.
func printHistory(out io.Writer, in string, pv *artifacts.Provenance, fromGit []artifacts.Build) {
	if !pv.Recomputed() && len(pv.Earlier) == 0 {
		return
	}
	label := "history "
	line := func(format string, a ...any) {
		fmt.Fprintf(out, "%s%s "+format+"\n", append([]any{in, label}, a...)...)
		label = "        "
	}
	earlier, note := pv.Earlier, ""
	if len(earlier) == 0 && len(fromGit) > 0 {
		earlier, note = fromGit, ", from the ledger's git history"
	}
	if len(earlier) == 0 {
		line("computed by a build this record does not name (recomputed before records kept the builds they replace; the ledger's git history holds the record it replaced)")
	}
	all := append(slices.Clone(earlier), pv.Build())
	for i, b := range all {
		what, where := "recomputed bit-identically by", note
		switch {
		case i == 0 && len(earlier) > 0 && b.Executor != artifacts.ExecutorRecompute:
			what = "computed by"
		case b.Executor != artifacts.ExecutorRecompute:
			what = "computed again (same outputs) by"
		}
		if i == len(all)-1 {
			where = ", this record"
		}
		line("%s %s (%s executor on %s, %s%s)", what, buildText(b), b.Executor, b.Host, b.End.Format("2006-01-02 15:04Z"), where)
	}
}

// buildText names an earlier build: its revision, and its changes if dirty.
func buildText(b artifacts.Build) string {
	switch {
	case b.Dirty && b.DirtyDiff != "":
		return fmt.Sprintf("revision %s (dirty work tree, changes %.12s)", b.Revision, b.DirtyDiff)
	case b.Dirty:
		return fmt.Sprintf("revision %s (dirty work tree)", b.Revision)
	}
	return "revision " + b.Revision
}

// whyNames is every name why takes in words: the profile's cell IDs and
// the committed tables' and figures' number and point IDs (for a
// did-you-mean).
func whyNames(w *workspace) []string {
	var names []string
	for _, c := range w.graph.Cells {
		names = append(names, c.ID)
	}
	for _, t := range w.tableNames() {
		if sc, err := experiments.ReadTableSidecar(w.idsPath(t)); err == nil {
			for _, n := range sc.Numbers {
				names = append(names, n.ID)
			}
			for _, c := range sc.Comparisons {
				names = append(names, c.ID)
			}
		}
	}
	for _, f := range w.figureNames() {
		if sc, err := experiments.ReadFigureSidecar(w.figurePath(f, "ids.json")); err == nil {
			for _, p := range append(append([]numbers.FigurePoint{}, sc.Points...), sc.Lines...) {
				names = append(names, p.ID)
			}
		}
	}
	return names
}
