package core_test

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"repro/core"
	"repro/experiments"
	"repro/pipeline"
	"repro/stages"
)

// TestReferenceCheckCoverage holds the reference check against what the
// paper profile runs: every mask and gate mode of a local-learner train
// cell of pipeline.toml (a superset of the configurations behind judged
// numbers) must be run by a path of `make reference-check`
// (refcheck_test.go), and every gate, and every rest mask with state of
// its own, must be followed along a trajectory of at least
// core.GateTrajectoryMin batches. A new experiment that uses a mode no
// path covers fails here, naming it. Under make reference-check
// (REPRO_REFCHECK set) it prints the listing, one line per mode.
func TestReferenceCheckCoverage(t *testing.T) {
	cfg, err := pipeline.LoadConfig("../pipeline.toml")
	if err != nil {
		t.Fatal(err)
	}
	m, err := experiments.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	g, err := m.Build("paper")
	if err != nil {
		t.Fatal(err)
	}
	type use struct{ experiments, tables map[string]bool }
	used := map[string]*use{}
	for _, c := range g.Cells {
		p, ok := c.Params.(*stages.TrainParams)
		if !ok || p.Local == nil {
			continue
		}
		exp := strings.Split(c.ID, "/")[1]
		for _, k := range core.RefModeKeys(p.Local) {
			u := used[k]
			if u == nil {
				u = &use{map[string]bool{}, map[string]bool{}}
				used[k] = u
			}
			u.experiments[exp] = true
			for _, tb := range c.Tables {
				u.tables[tb] = true
			}
		}
	}
	if len(used) < 10 {
		t.Fatalf("only %d mask and gate modes in the paper profile's local cells: the scan found too little", len(used))
	}
	cover, err := core.RefCoverage()
	if err != nil {
		t.Fatal(err)
	}
	listing := os.Getenv("REPRO_REFCHECK") != ""
	if listing {
		fmt.Println("mode coverage (the mask and gate modes of the paper profile's local-learner cells, and the paths that run them):")
	}
	for _, k := range core.AllModeKeys() {
		u, c := used[k], cover[k]
		switch {
		case u == nil && c == nil:
			continue
		case u != nil && c == nil:
			t.Errorf("%s: used by %s, run by no reference-check path (core/refcheck_test.go)", k, strings.Join(slices.Sorted(maps.Keys(u.experiments)), ", "))
			continue
		case u != nil && core.StatefulMode(k) && c.Longest < core.GateTrajectoryMin:
			t.Errorf("%s: used by %s, followed along no trajectory of %d batches or more (longest: %d)",
				k, strings.Join(slices.Sorted(maps.Keys(u.experiments)), ", "), core.GateTrajectoryMin, c.Longest)
		}
		if !listing {
			continue
		}
		who := "no experiment of the paper profile"
		if u != nil {
			exps := slices.Sorted(maps.Keys(u.experiments))
			if len(exps) > 6 {
				exps = append(exps[:6], fmt.Sprintf("and %d more", len(exps)-6))
			}
			who = fmt.Sprintf("%d experiments (%s), tables %s", len(u.experiments), strings.Join(exps, ", "),
				strings.Join(slices.Sorted(maps.Keys(u.tables)), ", "))
		}
		line := fmt.Sprintf("  %s, used by %s: %d step paths (%s)", k, who, len(c.Steps), firstFew(c.Steps))
		if len(c.Trajectories) > 0 {
			line += fmt.Sprintf("; %d trajectories, the longest %d batches", len(c.Trajectories), c.Longest)
		}
		fmt.Println(line)
	}
}

// firstFew joins the first three names and says how many more there are.
func firstFew(names []string) string {
	if len(names) <= 3 {
		return strings.Join(names, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(names[:3], "; "), len(names)-3)
}
