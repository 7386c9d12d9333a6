package stages

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"repro/artifacts"
	"repro/internal/dataset"
)

func TestSplitGolden(t *testing.T) {
	t.Parallel()
	for _, ds := range []string{"mnist", "cifar100"} {
		prep, _ := prepareTiny(t, ds)
		for _, seed := range []int64{dataset.SplitSeed1, dataset.SplitSeed2} {
			name := fmt.Sprintf("%s-%d", ds, seed)
			t.Run(name, func(t *testing.T) {
				out, order := runStage(t, Split, &SplitParams{Dataset: ds, Seed: seed, Frac: 0.1}, map[string]outputs{"prepare": prep}, nil)
				y, _, _ := artifacts.Int32s(prep["train_y"])
				h, _, err := artifacts.Int32s(out["heldout_idx"])
				if err != nil {
					t.Fatal(err)
				}
				s, _, _ := artifacts.Int32s(out["stream_idx"])
				checkPartition(t, y, h, s)
				checkGolden(t, "split-"+name, digestLines(out, order))
			})
		}
	}
}

// TestSplitHoldsOut: a tenth of the tiny sets' few samples per class
// rounds to none, so the goldens hold nothing out; half of them does.
func TestSplitHoldsOut(t *testing.T) {
	t.Parallel()
	prep, _ := prepareTiny(t, "mnist")
	out, _ := runStage(t, Split, &SplitParams{Dataset: "mnist", Seed: dataset.SplitSeed1, Frac: 0.5}, map[string]outputs{"prepare": prep}, nil)
	y, _, _ := artifacts.Int32s(prep["train_y"])
	h, _, _ := artifacts.Int32s(out["heldout_idx"])
	s, _, _ := artifacts.Int32s(out["stream_idx"])
	if len(h) == 0 || len(s) == 0 {
		t.Fatalf("frac 0.5: %d held-out and %d stream samples", len(h), len(s))
	}
	checkPartition(t, y, h, s)
}

// checkPartition fails t unless the held-out and stream indices h and s
// together are every training sample (of labels y) once.
func checkPartition(t *testing.T, y, h, s []int32) {
	t.Helper()
	all := append(slices.Clone(h), s...)
	slices.Sort(all)
	if len(all) != len(y) {
		t.Fatalf("%d held-out and %d stream samples of %d training samples", len(h), len(s), len(y))
	}
	for i, v := range all {
		if int(v) != i {
			t.Fatalf("held-out ∪ stream is not a partition of the %d training samples", len(y))
		}
	}
}

func TestSplitBadFrac(t *testing.T) {
	t.Parallel()
	prep, _ := prepareTiny(t, "mnist")
	_, _, err := execStage(t, Split, &SplitParams{Dataset: "mnist", Seed: 1, Frac: 1.5}, map[string]outputs{"prepare": prep}, nil)
	if err == nil || !strings.Contains(err.Error(), "frac") {
		t.Errorf("frac 1.5: err = %v", err)
	}
}
