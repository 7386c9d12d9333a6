package main

import (
	"errors"
	"fmt"
	"testing"

	"repro/internal/dataset"
	"repro/pipeline"
)

// TestAbsentReleases: a download whose release is absent here is reported
// once with the cells it blocks, and only the other failures count as
// real; a cell blocked by both counts under the real one.
func TestAbsentReleases(t *testing.T) {
	st := &pipeline.Stage{Name: "s"}
	cell := func(id string, in ...*pipeline.Cell) *pipeline.Cell {
		c := &pipeline.Cell{ID: id, Stage: st}
		for i, x := range in {
			c.Inputs = append(c.Inputs, pipeline.CellInput{Name: fmt.Sprint("in", i), Cell: x})
		}
		return c
	}
	dl := cell("download/c100")
	prep := cell("prepare/c100", dl)
	tr := cell("train/a", prep, dl) // two paths to the same root
	bad := cell("train/b")
	agg := cell("aggregate/t", tr, bad)
	g, err := pipeline.NewGraph([]*pipeline.Cell{dl, prep, tr, bad, agg})
	if err != nil {
		t.Fatal(err)
	}
	absentErr := fmt.Errorf("cell download/c100: download c100: %w", errors.Join(dataset.ErrAbsent))
	skipped := func(id, in string) pipeline.CellFailure {
		return pipeline.CellFailure{CellID: id, Err: fmt.Errorf("input %s failed", in)}
	}
	// Only the absent release: nothing real, its line counts 2 cells.
	rep := &pipeline.RunReport{Failures: []pipeline.CellFailure{
		{CellID: "download/c100", Err: absentErr}, skipped("prepare/c100", "download/c100"), skipped("train/a", "prepare/c100"),
	}}
	absent, real := absentReleases(g, rep)
	if len(real) != 0 || len(absent) != 1 || absent[0].cell != "download/c100" || absent[0].blocks != 2 {
		t.Fatalf("absent release alone: absent %+v, real %+v", absent, real)
	}
	// With a real failure too: it and what it blocks are real.
	rep.Failures = append(rep.Failures, pipeline.CellFailure{CellID: "train/b", Err: errors.New("NaN")}, skipped("aggregate/t", "train/b"))
	absent, real = absentReleases(g, rep)
	if len(absent) != 1 || absent[0].blocks != 2 || len(real) != 2 || real[0].CellID != "train/b" || real[1].CellID != "aggregate/t" {
		t.Fatalf("with a real failure: absent %+v, real %+v", absent, real)
	}
	// A download that failed otherwise (a checksum mismatch) is real.
	rep.Failures = []pipeline.CellFailure{{CellID: "download/c100", Err: errors.New("sha256 mismatch")}, skipped("prepare/c100", "download/c100")}
	if absent, real = absentReleases(g, rep); len(absent) != 0 || len(real) != 2 {
		t.Fatalf("checksum failure: absent %+v, real %+v", absent, real)
	}
}
