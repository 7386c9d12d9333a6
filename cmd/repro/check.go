package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"repro/cellid"
	"repro/experiments"
	"repro/pipeline"
)

func cmdCheck() *command {
	var g globalFlags
	fs := newFlags("check", &g)
	return &command{
		name: "check", usage: "[--profile P]",
		short: "fail, naming each number, when a committed table is stale",
		long: `Check compares the tables committed in paper/ with what the current
pipeline.toml and store would render. It names every stale number: one whose
value would change, whose train cells would rerun (and why), or whose
results in the store differ from those the committed table was rendered
from. A number whose cells are neither in the store nor in a remote (a
fresh clone without the ledger) is not stale but not computed here: check
lists it and does not fail. It exits 1 when anything is stale, else 0.`,
		flags: fs,
		run: func(ctx context.Context, e *env, args []string) error {
			if len(args) > 0 {
				return usageErr("check takes no arguments")
			}
			w, err := openWorkspace(e, &g)
			if err != nil {
				return err
			}
			stale, notHere, err := runCheck(ctx, w)
			if err != nil {
				return err
			}
			for _, s := range stale {
				fmt.Fprintln(e.stdout, s)
			}
			for _, s := range notHere {
				fmt.Fprintln(e.stdout, s)
			}
			if len(stale) > 0 {
				return &exitError{code: 1, err: fmt.Errorf("%d stale item(s) in %s/; run repro run (make paper) and commit them", len(stale), rel(w, w.paperPath()))}
			}
			if len(notHere) > 0 {
				fmt.Fprintf(e.stdout, "%s/ has no stale number, but %s could not be checked: not computed in this store nor held by a remote (repro run computes them; a pushed ledger holds them)\n", rel(w, w.paperPath()), plural(len(notHere), "item"))
				return nil
			}
			figs := ""
			if n := len(w.figureNames()); n > 0 {
				figs = fmt.Sprintf(" and %d figure(s)", n)
			}
			fmt.Fprintf(e.stdout, "%s/ is current: %d table(s)%s match profile %s\n", rel(w, w.paperPath()), len(w.tableNames()), figs, w.profile)
			return nil
		},
	}
}

// runCheck returns one line per stale item of paper/, and one per item
// that is not computed here (neither in the store nor in a remote), which
// cannot be checked but is not known to be stale either.
func runCheck(ctx context.Context, w *workspace) (stale, notHere []string, err error) {
	// Cells that cannot run here (an input failed: a data set this machine
	// cannot obtain) are judged as a run here renders them: not run.
	p, err := w.planHere()
	if err != nil {
		return nil, nil, err
	}
	for _, t := range w.tableNames() {
		st, nh, err := checkTable(ctx, w, p, t)
		if err != nil {
			return nil, nil, err
		}
		stale, notHere = append(stale, st...), append(notHere, nh...)
	}
	st, nh, err := checkReproduction(ctx, w, p)
	if err != nil {
		return nil, nil, err
	}
	stale, notHere = append(stale, st...), append(notHere, nh...)
	figs, figsNotHere, err := checkFigures(ctx, w, p)
	if err != nil {
		return nil, nil, err
	}
	stale, notHere = append(stale, figs...), append(notHere, figsNotHere...)
	return stale, notHere, nil
}

// checkTable is runCheck for table t: the committed .tex and sidecar
// against what the store renders, or the inputs that would change.
func checkTable(ctx context.Context, w *workspace, p *pipeline.Plan, t string) (stale, notHere []string, err error) {
	texPath := rel(w, w.texPath(t))
	committedTex, err := readFileOr(w.texPath(t))
	if err != nil {
		return nil, nil, err
	}
	old, err := experiments.ReadTableSidecar(w.idsPath(t))
	if errors.Is(err, os.ErrNotExist) || committedTex == "" {
		stale = append(stale, fmt.Sprintf("%s: not in the work tree (never rendered)", texPath))
		return stale, notHere, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if old.Profile != w.profile {
		stale = append(stale, fmt.Sprintf("%s: rendered from profile %s, checking profile %s", texPath, old.Profile, w.profile))
	}
	cur, ok, why, err := currentSidecar(ctx, w, p, t)
	if err != nil {
		return nil, nil, err
	}
	if ok {
		tex, _, _, err := cellOutput(ctx, w, p, cellid.Render(t), "tex")
		if err != nil {
			return nil, nil, err
		}
		if string(tex) == committedTex {
			return stale, notHere, nil
		}
		n := 0
		for _, s := range experiments.DiffNumbers(old, cur) {
			stale = append(stale, texPath+": "+s)
			n++
		}
		if n == 0 {
			stale = append(stale, texPath+": differs from what the store renders (layout, caption or stamp)")
		}
		return stale, notHere, nil
	}
	// The table would re-render: name the numbers whose inputs change.
	st, nh := experiments.StaleInputs(w.graph, p, t, old, w.trainVerdict)
	for _, s := range st {
		stale = append(stale, texPath+": "+s)
	}
	switch {
	case len(st) == 0 && len(nh) > 1:
		notHere = append(notHere, fmt.Sprintf("%s: %d numbers not computed here", texPath, len(nh)))
	default:
		for _, s := range nh {
			notHere = append(notHere, texPath+": "+s)
		}
	}
	if len(st)+len(nh) == 0 {
		// No train cell behind the table (every row not run in this
		// profile): it would render only because nothing is known here.
		if pc := p.Cell(cellid.Render(t)); pc != nil && experiments.NotComputedHere(pc.Reasons) {
			notHere = append(notHere, fmt.Sprintf("%s: no train cell behind it, not computed here", texPath))
		} else {
			stale = append(stale, fmt.Sprintf("%s: would re-render (%s)", texPath, why))
		}
	}
	return stale, notHere, nil
}

// checkReproduction is runCheck for the reproduction report.
func checkReproduction(ctx context.Context, w *workspace, p *pipeline.Plan) (stale, notHere []string, err error) {
	pc := p.Cell(cellid.Reproduction)
	if pc == nil {
		return nil, nil, nil
	}
	path := w.paperPath(reproductionTo)
	committed, err := readFileOr(path)
	if err != nil {
		return nil, nil, err
	}
	b, ok, why, err := cellOutput(ctx, w, p, cellid.Reproduction, "tex")
	switch {
	case err != nil:
		return nil, nil, err
	case !ok && experiments.NotComputedHere(pc.Reasons):
		notHere = append(notHere, fmt.Sprintf("%s: not computed here", rel(w, path)))
	case !ok:
		stale = append(stale, fmt.Sprintf("%s: would re-render (%s)", rel(w, path), why))
	case string(b) != committed:
		stale = append(stale, fmt.Sprintf("%s: differs from what the store renders", rel(w, path)))
	}
	return stale, notHere, nil
}

// checkFigures compares every committed figure (its sidecar, PDF and PNG)
// with what the store renders for the current config, naming each point
// whose value would change; a figure the store has not rendered is checked
// through its points' train cells, stale or merely not computed here.
func checkFigures(ctx context.Context, w *workspace, p *pipeline.Plan) (stale, notHere []string, err error) {
	for _, f := range w.figureNames() {
		idsPath := w.figurePath(f, "ids.json")
		where := rel(w, idsPath)
		old, err := experiments.ReadFigureSidecar(idsPath)
		if errors.Is(err, os.ErrNotExist) {
			// Not committed: stale if this store has rendered it (repro run
			// writes it), else not computed here.
			switch _, ok, why, err := currentFigure(ctx, w, p, f); {
			case err != nil:
				return nil, nil, err
			case ok:
				stale = append(stale, where+": not in the work tree, but rendered in the store (repro run writes it)")
			default:
				notHere = append(notHere, fmt.Sprintf("%s: not rendered yet (%s)", where, why))
			}
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		if old.Profile != w.profile {
			stale = append(stale, fmt.Sprintf("%s: rendered from profile %s, checking profile %s", where, old.Profile, w.profile))
		}
		cur, ok, why, err := currentFigure(ctx, w, p, f)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			st, nh := experiments.StalePoints(p, old, w.trainVerdict)
			for _, s := range st {
				stale = append(stale, where+": "+s)
			}
			switch {
			case len(st) > 0:
			case len(nh) > 0:
				notHere = append(notHere, fmt.Sprintf("%s: %d train cells not computed here", where, len(nh)))
			case experiments.NotComputedHere(p.Cell(cellid.Figure(f)).Reasons):
				notHere = append(notHere, where+": not computed here")
			default:
				stale = append(stale, fmt.Sprintf("%s: would re-render (%s)", where, why))
			}
			continue
		}
		n := 0
		for _, s := range experiments.DiffPoints(old, cur) {
			stale = append(stale, where+": "+s)
			n++
		}
		for _, o := range figureFiles {
			b, _, _, err := cellOutput(ctx, w, p, cellid.Figure(f), o.output)
			if err != nil {
				return nil, nil, err
			}
			committed, err := readFileOr(w.figurePath(f, o.ext))
			if err != nil {
				return nil, nil, err
			}
			if committed != string(b) && n == 0 {
				stale = append(stale, fmt.Sprintf("%s: differs from what the store renders", rel(w, w.figurePath(f, o.ext))))
			}
		}
	}
	return stale, notHere, nil
}
