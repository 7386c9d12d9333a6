package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"repro/pipeline"
	"repro/stages"
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
from. It exits 1 when anything is stale, 0 when paper/ is current.`,
		flags: fs,
		run: func(ctx context.Context, e *env, args []string) error {
			if len(args) > 0 {
				return usageErr("check takes no arguments")
			}
			w, err := openWorkspace(e, &g)
			if err != nil {
				return err
			}
			stale, err := runCheck(ctx, w)
			if err != nil {
				return err
			}
			for _, s := range stale {
				fmt.Fprintln(e.stdout, s)
			}
			if len(stale) > 0 {
				return &exitError{code: 1, err: fmt.Errorf("%d stale item(s) in %s/; run repro run (make paper) and commit them", len(stale), rel(w, w.paperPath()))}
			}
			fmt.Fprintf(e.stdout, "%s/ is current: %d table(s) match profile %s\n", rel(w, w.paperPath()), len(w.tableNames()), w.profile)
			return nil
		},
	}
}

// runCheck returns one line per stale item of paper/.
func runCheck(ctx context.Context, w *workspace) ([]string, error) {
	p, err := w.plan()
	if err != nil {
		return nil, err
	}
	var stale []string
	for _, t := range w.tableNames() {
		texPath := rel(w, w.texPath(t))
		committedTex, err := readFileOr(w.texPath(t))
		if err != nil {
			return nil, err
		}
		old, err := committedSidecar(w.idsPath(t))
		if errors.Is(err, os.ErrNotExist) || committedTex == "" {
			stale = append(stale, fmt.Sprintf("%s: not in the work tree (never rendered)", texPath))
			continue
		}
		if err != nil {
			return nil, err
		}
		if old.Profile != w.profile {
			stale = append(stale, fmt.Sprintf("%s: rendered from profile %s, checking profile %s", texPath, old.Profile, w.profile))
		}
		cur, ok, why, err := currentSidecar(ctx, w, p, t)
		if err != nil {
			return nil, err
		}
		if ok {
			tex, _, _, err := cellOutput(ctx, w, p, "render/"+t, "tex")
			if err != nil {
				return nil, err
			}
			if string(tex) == committedTex {
				continue
			}
			n := 0
			for _, s := range diffNumbers(old, cur) {
				stale = append(stale, texPath+": "+s)
				n++
			}
			if n == 0 {
				stale = append(stale, texPath+": differs from what the store renders (layout, caption or stamp)")
			}
			continue
		}
		// The table would re-render: name the numbers whose inputs change.
		n := 0
		for _, s := range staleInputs(w, p, t, old) {
			stale = append(stale, texPath+": "+s)
			n++
		}
		if n == 0 {
			stale = append(stale, fmt.Sprintf("%s: would re-render (%s)", texPath, why))
		}
	}
	if w.graph.Cell("reproduction") != nil {
		path := w.paperPath(reproductionTo)
		committed, err := readFileOr(path)
		if err != nil {
			return nil, err
		}
		b, ok, why, err := cellOutput(ctx, w, p, "reproduction", "tex")
		switch {
		case err != nil:
			return nil, err
		case !ok:
			stale = append(stale, fmt.Sprintf("%s: would re-render (%s)", rel(w, path), why))
		case string(b) != committed:
			stale = append(stale, fmt.Sprintf("%s: differs from what the store renders", rel(w, path)))
		}
	}
	return stale, nil
}

// diffNumbers names the numbers whose rendered text differs.
func diffNumbers(old, cur *stages.Sidecar) []string {
	var out []string
	curBy := map[string]*stages.NumberRef{}
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
	oldCmp := map[string]stages.Comparison{}
	for _, c := range old.Comparisons {
		oldCmp[c.ID] = c
	}
	for _, c := range cur.Comparisons {
		o, ok := oldCmp[c.ID]
		if !ok || o.Status != c.Status || signedRound(o.Diff) != signedRound(c.Diff) || signedRound(o.Lo) != signedRound(c.Lo) || signedRound(o.Hi) != signedRound(c.Hi) {
			out = append(out, fmt.Sprintf("%s: committed %s, would be %s", c.ID, cmpText(o, ok), cmpText(c, true)))
		}
	}
	return out
}

func signedRound(x float64) string { return fmt.Sprintf("%+.1f", x) }

func cmpText(c stages.Comparison, ok bool) string {
	switch {
	case !ok:
		return "absent"
	case c.Status != "ok":
		return c.Status
	}
	return fmt.Sprintf("%s [%s, %s]", signedRound(c.Diff), signedRound(c.Lo), signedRound(c.Hi))
}

// staleInputs names the committed numbers whose train cells would rerun,
// are gone, or hold other results than the committed table used; and the
// numbers whose set of cells changed in the current config.
func staleInputs(w *workspace, p *pipeline.Plan, table string, old *stages.Sidecar) []string {
	var out []string
	want := currentCells(w, table)
	for _, n := range old.Numbers {
		var why []string
		committed := map[string]string{}
		for i, id := range n.TrainCells {
			committed[id] = n.Results[i]
		}
		cur, inGraph := want[n.ID]
		for _, id := range cur {
			if _, ok := committed[id]; ok {
				continue
			}
			w := id + " is missing from the committed table"
			if pc := p.Cell(id); pc != nil && pc.State != pipeline.Cached {
				w += " and would run: " + strings.Join(pc.Reasons, "; ")
			} else {
				w += " and is now in the store"
			}
			why = append(why, w)
		}
		for _, id := range n.TrainCells {
			pc := p.Cell(id)
			switch {
			case pc == nil || inGraph && !containsString(cur, id):
				why = append(why, id+" is no longer in the table's cells")
			case pc.State != pipeline.Cached:
				why = append(why, id+" would run: "+strings.Join(pc.Reasons, "; "))
			default:
				if d, _ := pc.Manifest.Output("result"); d.String() != committed[id] {
					why = append(why, id+" has another result in the store")
				}
			}
		}
		if len(why) > 0 {
			out = append(out, fmt.Sprintf("%s (row %d, column %d, committed %q): %s", n.ID, n.Row, n.Column, n.Text, strings.Join(why, "; ")))
		}
	}
	return out
}

// currentCells maps each number ID of a table to the train cells its
// aggregate cell reads under the current config.
func currentCells(w *workspace, table string) map[string][]string {
	out := map[string][]string{}
	agg := w.graph.Cell("aggregate/" + table)
	if agg == nil {
		return out
	}
	ap, ok := agg.Params.(*stages.AggregateParams)
	if !ok {
		return out
	}
	for _, in := range agg.Inputs {
		var r, c, s int
		if _, err := fmt.Sscanf(in.Name, "r%02dc%ds%d", &r, &c, &s); err != nil || r >= len(ap.Rows) || c >= len(ap.Protocols) {
			continue
		}
		id := table + "/" + ap.Rows[r] + "/" + ap.Protocols[c]
		out[id] = append(out[id], in.Cell.ID)
	}
	return out
}

func containsString(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
