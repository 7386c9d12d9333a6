package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"repro/experiments"
	"repro/internal/dataset"
	"repro/pipeline"
)

// absentRelease is a download cell of a run that failed because its
// release is absent from this machine (dataset.ErrAbsent), and how many
// of the run's cells could not run for want of it.
type absentRelease struct {
	cell, why string
	blocks    int
}

// absentReleases splits a run's failures: those of downloads whose release
// is absent here (each with the cells only it blocked) and the others
// (real failures, and cells skipped because of one). A cell skipped for
// both counts under the real failure.
func absentReleases(g *pipeline.Graph, rep *pipeline.RunReport) (absent []absentRelease, real []pipeline.CellFailure) {
	failed := map[string]pipeline.CellFailure{}
	for _, f := range rep.Failures {
		failed[f.CellID] = f
	}
	isAbsent := func(id string) bool {
		f, ok := failed[id]
		return ok && errors.Is(f.Err, dataset.ErrAbsent)
	}
	// roots[id]: the failed cells upstream of id (id itself when it failed
	// rather than being skipped).
	roots := map[string][]string{}
	var rootsOf func(c *pipeline.Cell) []string
	rootsOf = func(c *pipeline.Cell) []string {
		if r, ok := roots[c.ID]; ok {
			return r
		}
		var r []string
		for _, in := range c.Inputs {
			if _, ok := failed[in.Cell.ID]; ok {
				for _, x := range rootsOf(in.Cell) {
					if !slices.Contains(r, x) {
						r = append(r, x)
					}
				}
			}
		}
		if len(r) == 0 {
			r = []string{c.ID} // it failed itself
		}
		roots[c.ID] = r
		return r
	}
	index := map[string]int{}
	for _, f := range rep.Failures {
		c := g.Cell(f.CellID)
		if c == nil {
			real = append(real, f)
			continue
		}
		rs := rootsOf(c)
		onlyAbsent := true
		for _, r := range rs {
			onlyAbsent = onlyAbsent && isAbsent(r)
		}
		if !onlyAbsent {
			real = append(real, f)
			continue
		}
		for _, r := range rs {
			i, ok := index[r]
			if !ok {
				i = len(absent)
				index[r] = i
				why, _, _ := strings.Cut(failed[r].Err.Error(), "\n")
				absent = append(absent, absentRelease{cell: r, why: strings.TrimPrefix(why, "cell "+r+": ")})
			}
			if r != f.CellID {
				absent[i].blocks++
			}
		}
	}
	return absent, real
}

// absentText is the run's line for a release absent here.
func (a absentRelease) text() string {
	return fmt.Sprintf("not computed here: %s (%s) blocks %s; the tables show them as %q",
		a.cell, a.why, plural(a.blocks, "cell"), experiments.BlockedStatus(a.cell).String())
}
