package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"repro/numbers"
	"repro/numdiff"
)

func cmdDiff() *command {
	var g globalFlags
	fs := newFlags("diff", &g)
	return &command{
		name: "diff", usage: "[A [B]]",
		short: "list every number that moved between two builds, and whether beyond seed noise",
		long: `Diff compares two builds of the paper number by number. A build is a git
revision (its committed tables and figures: what its ledger rendered) or the
word "store" (what the store holds for the current config: after repro run).
A defaults to HEAD and B to store. It counts the numbers
that moved (a value on both sides), the new and the removed ones and those
whose status changed (a value gained or lost: "not run" -> a value). For
every number that moved it prints before and after (mean ± s.d. over n
seeds) and whether the move is beyond the seeds' noise, by the reproduction
verdicts' statistics: Welch's test of after against before with the
number's equivalence margin, adjusted over the moved numbers
(Benjamini-Hochberg); the others are listed, not judged. Tables and figures one build lacks are
named, not compared. docs/report.md.`,
		flags: fs, maxArgs: 2,
		run: func(ctx context.Context, e *env, args []string) error {
			if len(args) > 2 {
				return usageErr("diff takes at most two builds")
			}
			names := []string{"HEAD", "store"}
			copy(names, args)
			for _, n := range names {
				if strings.HasPrefix(n, "-") || n == "" {
					return usageErr("build %q: a build is a git revision or \"store\", never an option for git", n)
				}
			}
			w, err := openWorkspace(e, &g)
			if err != nil {
				return err
			}
			// Revisions resolved before any work: git is then given a
			// commit's full hash, nothing it could take for an option.
			revs := slices.Clone(names)
			for i, n := range names {
				if n == "store" {
					continue
				}
				dir := w.cfg.Dir
				if dir == "" {
					dir = "."
				}
				if revs[i], err = resolveRevision(ctx, dir, n); err != nil {
					return err
				}
			}
			var builds [2]*numdiff.Build
			for i, n := range names {
				if builds[i], err = loadBuild(ctx, w, revs[i], n); err != nil {
					return err
				}
			}
			printDiff(e, names, numdiff.Compare(builds[0], builds[1]))
			return nil
		},
	}
}

// resolveRevision is the full hash of the commit git revision rev names
// in the repository at dir, or a usage error saying rev names none.
func resolveRevision(ctx context.Context, dir, rev string) (string, error) {
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", usageErr("build %q is no git revision of %s (a build is a git revision or \"store\")%s", rev, dir, gitNote(errb.String()))
	}
	h := strings.TrimSpace(out.String())
	if len(h) < 40 || strings.HasPrefix(h, "-") {
		return "", fmt.Errorf("git rev-parse %s: unexpected output %q", rev, h)
	}
	return h, nil
}

// gitNote is ": <git's message>" when git said something, else "".
func gitNote(msg string) string {
	if msg = strings.TrimSpace(msg); msg != "" {
		return ": " + firstLine(msg)
	}
	return ""
}

// loadBuild reads a build's sidecars: the store's current ones, or those
// git commit rev (a full hash, resolveRevision) commits; name is the build
// as the user gave it, for messages.
func loadBuild(ctx context.Context, w *workspace, rev, name string) (*numdiff.Build, error) {
	var tables []*numbers.Sidecar
	var figures []*numbers.FigureSidecar
	if rev == "store" {
		p, err := w.planHere()
		if err != nil {
			return nil, err
		}
		for _, t := range w.tableNames() {
			if sc, ok, _, err := currentSidecar(ctx, w, p, t); err != nil {
				return nil, err
			} else if ok {
				tables = append(tables, sc)
			}
		}
		for _, f := range w.figureNames() {
			if sc, ok, _, err := currentFigure(ctx, w, p, f); err != nil {
				return nil, err
			} else if ok {
				figures = append(figures, sc)
			}
		}
		return numdiff.FromSidecars(tables, figures), nil
	}
	for _, t := range w.tableNames() {
		b, ok, err := gitShow(ctx, rev, w.idsPath(t))
		if err != nil {
			return nil, err
		}
		if ok {
			sc := &numbers.Sidecar{}
			if err := json.Unmarshal(b, sc); err != nil {
				return nil, fmt.Errorf("%s:%s: %w", name, rel(w, w.idsPath(t)), err)
			}
			tables = append(tables, sc)
		}
	}
	for _, f := range w.figureNames() {
		b, ok, err := gitShow(ctx, rev, w.figurePath(f, "ids.json"))
		if err != nil {
			return nil, err
		}
		if ok {
			sc := &numbers.FigureSidecar{}
			if err := json.Unmarshal(b, sc); err != nil {
				return nil, fmt.Errorf("%s:%s: %w", name, rel(w, w.figurePath(f, "ids.json")), err)
			}
			figures = append(figures, sc)
		}
	}
	if len(tables) == 0 && len(figures) == 0 {
		return nil, fmt.Errorf("build %s: no table or figure is committed there (a build is a git revision or \"store\")", name)
	}
	return numdiff.FromSidecars(tables, figures), nil
}

// gitShow reads path as revision rev commits it; ok is false when rev has
// no such file.
func gitShow(ctx context.Context, rev, path string) ([]byte, bool, error) {
	dir, file := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	var out, errb bytes.Buffer
	if strings.HasPrefix(rev, "-") {
		return nil, false, fmt.Errorf("git show: revision %q looks like an option", rev) // resolveRevision makes it a hash
	}
	cmd := exec.CommandContext(ctx, "git", "-C", dir, "show", "--end-of-options", rev+":./"+file)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := errb.String()
		if strings.Contains(msg, "does not exist in") || strings.Contains(msg, "exists on disk, but not in") {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("git show %s:%s: %s", rev, path, strings.TrimSpace(msg))
	}
	return out.Bytes(), true, nil
}

// printDiff prints the counts, then the numbers that moved (beyond the
// seed noise first), those whose status changed, the new ones and the
// removed ones. Only a number with a value on both sides is judged against
// the seed noise: a new number is not a move.
func printDiff(e *env, names []string, r *numdiff.Result) {
	out := e.stdout
	moved := r.Count(numdiff.Moved)
	parts := []string{fmt.Sprintf("%s moved (%d beyond seed noise)", plural(moved, "number"), r.Beyond())}
	for _, c := range []numdiff.Change{numdiff.New, numdiff.Removed} {
		if n := r.Count(c); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, c))
		}
	}
	if n := r.Count(numdiff.Status); n > 0 {
		parts = append(parts, fmt.Sprintf("%d with a new status (a value gained or lost)", n))
	}
	parts = append(parts, fmt.Sprintf("%d unchanged", r.Unchanged))
	fmt.Fprintf(out, "diff %s %s: %s\n", names[0], names[1], strings.Join(parts, ", "))
	if len(r.OnlyA) > 0 {
		fmt.Fprintf(out, "not compared, only in %s: %s\n", names[0], strings.Join(r.OnlyA, ", "))
	}
	if len(r.OnlyB) > 0 {
		fmt.Fprintf(out, "not compared, only in %s: %s\n", names[1], strings.Join(r.OnlyB, ", "))
	}
	for _, pass := range []bool{true, false} {
		for _, m := range r.Moves {
			if m.Change != numdiff.Moved || m.Beyond != pass {
				continue
			}
			what := "within seed noise"
			if m.Beyond {
				what = "BEYOND seed noise"
			}
			fmt.Fprintf(out, "moved   %s: %s -> %s; %s", m.ID, numText(m.Before), numText(m.After), what)
			if j := m.Judgement; j != nil {
				fmt.Fprintf(out, " (%s: %s)", j.Outcome, j)
			}
			fmt.Fprintln(out)
		}
	}
	for _, m := range r.Moves {
		if m.Change == numdiff.Status {
			fmt.Fprintf(out, "status  %s: %s -> %s\n", m.ID, numText(m.Before), numText(m.After))
		}
	}
	for _, m := range r.Moves {
		if m.Change == numdiff.New {
			fmt.Fprintf(out, "new     %s: %s\n", m.ID, numText(m.After))
		}
	}
	for _, m := range r.Moves {
		if m.Change == numdiff.Removed {
			fmt.Fprintf(out, "removed %s: was %s\n", m.ID, numText(m.Before))
		}
	}
}

// numText is a number as diff prints it.
func numText(n *numdiff.Number) string {
	switch {
	case n == nil:
		return "absent"
	case !n.Status.OK():
		return string(n.Status)
	}
	return fmt.Sprintf("%.3f ± %.3f (n=%d)", n.Mean, n.SD, n.N)
}
