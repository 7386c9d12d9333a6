package stages

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"repro/pipeline"
)

// CountParams are the params of a count cell: none besides its inputs.
type CountParams struct {
	Experiment string `toml:"experiment"` // the runs' experiment, for the log
}

// CountRecord is the "result" output of a count cell (canonical JSON).
type CountRecord struct {
	Runs         int     `json:"runs"`
	Finite       int     `json:"finite"`         // runs whose final accuracy is a number
	MeanFinalAcc float64 `json:"mean_final_acc"` // over the finite runs, a fraction
}

// Count counts the train records of its inputs (every input a train cell,
// any name) and how many ended with a finite final accuracy, and writes
// "result" (CountRecord).
//
// Version history:
//
//   - 1: runs, finite runs and their mean final accuracy.
var Count = &pipeline.Stage{
	Name:      "count",
	Version:   1,
	NewParams: func() any { return &CountParams{} },
	Run:       runCount,
}

func runCount(ctx context.Context, rc *pipeline.RunContext) error {
	p := rc.Params.(*CountParams)
	rec := &CountRecord{}
	sum := 0.0
	for _, name := range rc.InputNames() {
		in := rc.Input(name)
		b, err := in.Read(ctx, "result")
		if err != nil {
			return fmt.Errorf("input %s: result: %w", in.CellID, err)
		}
		var tr TrainRecord
		if err := json.Unmarshal(b, &tr); err != nil || tr.Result == nil {
			return fmt.Errorf("input %s: result: not a train record (%v)", in.CellID, err)
		}
		rec.Runs++
		if a := tr.Result.FinalAcc; !math.IsNaN(a) && !math.IsInf(a, 0) && tr.Diverged == "" {
			rec.Finite++
			sum += a
		}
	}
	if rec.Runs == 0 {
		return fmt.Errorf("no train record to count")
	}
	if rec.Finite > 0 {
		rec.MeanFinalAcc = sum / float64(rec.Finite)
	}
	fmt.Fprintf(rc.Log, "%s: %d runs, %d finite, mean final accuracy %.2f%%\n", p.Experiment, rec.Runs, rec.Finite, 100*rec.MeanFinalAcc)
	return putJSON(rc, "result", rec)
}
