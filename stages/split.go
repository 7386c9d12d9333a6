package stages

import (
	"context"
	"fmt"
	"math"

	"repro/artifacts"
	"repro/internal/dataset"
	"repro/pipeline"
)

// SplitParams are the params of a split cell.
type SplitParams struct {
	Dataset string  `toml:"dataset"` // names the cell; the labels come from input "prepare"
	Seed    int64   `toml:"seed"`    // 1234 (split 1) or 4321 (split 2)
	Frac    float64 `toml:"frac"`    // held-out fraction per class, rounded half to even
}

// Split draws the stratified held-out tenth of the official training set
// (dataset.StratifiedHoldout) from input "prepare"'s train_y and writes
// heldout_idx and stream_idx (doc.go). Its log reports the per-class
// held-out counts and the overlap with the other paper split's held-out set.
//
// Version history:
//
//   - 1: a tenth of the same sizes drawn from core/rng.go's generator.
//   - 2: the reference's own tenth (numpy's MT19937 and shuffle).
var Split = &pipeline.Stage{
	Name:      "split",
	Version:   2,
	NewParams: func() any { return &SplitParams{Dataset: "mnist", Seed: dataset.SplitSeed1, Frac: dataset.HeldoutFrac} },
	Run:       runSplit,
}

func runSplit(ctx context.Context, rc *pipeline.RunContext) error {
	p := rc.Params.(*SplitParams)
	if p.Frac <= 0 || p.Frac >= 1 {
		return fmt.Errorf("split.frac: %g is not in (0, 1)", p.Frac)
	}
	if p.Seed < 0 || p.Seed > math.MaxUint32 {
		return fmt.Errorf("split.seed: %d is outside [0, 2^32), the seeds numpy's RandomState takes", p.Seed)
	}
	y, _, err := readInt32s(ctx, rc, "prepare", "train_y", 1)
	if err != nil {
		return err
	}
	held, rest := dataset.StratifiedHoldout(y, p.Frac, p.Seed)
	rc.Put("heldout_idx", artifacts.EncodeInt32(toInt32(held), len(held)))
	rc.Put("stream_idx", artifacts.EncodeInt32(toInt32(rest), len(rest)))

	per := map[int32]int{}
	for _, i := range held {
		per[y[i]]++
	}
	classes := 0
	for _, c := range y {
		classes = max(classes, int(c)+1)
	}
	counts := make([]int, classes)
	for c, n := range per {
		counts[c] = n
	}
	fmt.Fprintf(rc.Log, "split seed %d: %d held out, %d in the stream; per class %v\n", p.Seed, len(held), len(rest), counts)
	other := int64(dataset.SplitSeed2)
	if p.Seed == dataset.SplitSeed2 {
		other = dataset.SplitSeed1
	}
	oh, _ := dataset.StratifiedHoldout(y, p.Frac, other)
	ov := dataset.Overlap(held, oh)
	fmt.Fprintf(rc.Log, "overlap with split seed %d: %d of %d held-out samples (%.2f%%)\n", other, ov, len(held), 100*float64(ov)/float64(max(1, len(held))))
	return nil
}

func toInt32(v []int) []int32 {
	out := make([]int32, len(v))
	for i, x := range v {
		out[i] = int32(x)
	}
	return out
}
