package stages

import (
	"fmt"
	"testing"

	"repro/artifacts"
	"repro/internal/dataset"
)

func TestStreamsGolden(t *testing.T) {
	t.Parallel()
	for _, ds := range []string{"mnist", "cifar100"} {
		prep, _ := prepareTiny(t, ds)
		split, _ := runStage(t, Split, &SplitParams{Dataset: ds, Seed: dataset.SplitSeed1, Frac: 0.1}, map[string]outputs{"prepare": prep}, nil)
		for _, protocol := range []string{dataset.Sequential, dataset.Static} {
			for _, eval := range []string{"heldout", "test"} {
				name := fmt.Sprintf("%s-%s-%s", ds, protocol, eval)
				t.Run(name, func(t *testing.T) {
					in := map[string]outputs{"prepare": prep}
					if eval == "heldout" {
						in["split"] = split
					}
					out, order := runStage(t, Streams, &StreamsParams{Dataset: ds, Protocol: protocol, Eval: eval}, in, nil)
					classes, shape, _ := artifacts.Int32s(out["task_classes"])
					off, _, _ := artifacts.Int32s(out["task_offsets"])
					idx, _, _ := artifacts.Int32s(out["task_idx"])
					y, _, _ := artifacts.Int32s(prep["train_y"])
					T, C := shape[0], shape[1]
					if len(off) != T+1 || int(off[T]) != len(idx) {
						t.Fatalf("offsets %v for %d tasks and %d samples", off, T, len(idx))
					}
					// Every task sample has one of its task's classes.
					for tk := range T {
						for _, i := range idx[off[tk]:off[tk+1]] {
							c := y[i]
							if c < classes[tk*C] || c > classes[tk*C+C-1] {
								t.Fatalf("task %d holds sample %d of class %d", tk, i, c)
							}
						}
					}
					es, _, _ := artifacts.Uint8s(out["eval_set"])
					ev, _, _ := artifacts.Int32s(out["eval_idx"])
					if want := map[string]uint8{"heldout": 0, "test": 1}[eval]; es[0] != want {
						t.Errorf("eval_set %d, want %d", es[0], want)
					}
					if eval == "heldout" && len(ev)+len(idx) != len(y) {
						t.Errorf("%d evaluation + %d stream samples, training set %d", len(ev), len(idx), len(y))
					}
					checkGolden(t, "streams-"+name, digestLines(out, order))
				})
			}
		}
	}
}

func TestStreamsErrors(t *testing.T) {
	t.Parallel()
	prep, _ := prepareTiny(t, "mnist")
	for _, p := range []*StreamsParams{
		{Dataset: "mnist", Protocol: dataset.Sequential, Eval: "heldout"}, // no split input
		{Dataset: "mnist", Protocol: "single", Eval: "test"},
		{Dataset: "mnist", Protocol: dataset.Static, Eval: "val"},
	} {
		if _, _, err := execStage(t, Streams, p, map[string]outputs{"prepare": prep}, nil); err == nil {
			t.Errorf("%+v: no error", *p)
		}
	}
}

// TestRealMNISTChain runs download → prepare → split → streams on the real
// MNIST from the mirror twice and checks the reference's sample counts and
// that every output's digest is the same both times and as pinned.
func TestRealMNISTChain(t *testing.T) {
	dir := mirrorDir(t)
	if testing.Short() {
		t.Skip("real MNIST chain skipped in -short mode")
	}
	settings := map[string]string{SettingDataMirror: dir}
	var runs []string
	for range 2 {
		chain := newDataChain("mnist", dataset.SplitSeed1, dataset.SplitSeed2)
		store, err := runCells(t, settings, chain.cells()...)
		if err != nil {
			t.Fatal(err)
		}
		all := digestLines(cellOutputs(t, store, chain.download))
		all += digestLines(cellOutputs(t, store, chain.prepare))
		for i, seed := range []int64{dataset.SplitSeed1, dataset.SplitSeed2} {
			split, order := cellOutputs(t, store, chain.split[i])
			all += digestLines(split, order)
			h, _, _ := artifacts.Int32s(split["heldout_idx"])
			if len(h) != 5999 {
				t.Errorf("seed %d: %d held out, want 5999", seed, len(h))
			}
			st, order := cellOutputs(t, store, chain.streams[i])
			all += digestLines(st, order)
			off, _, _ := artifacts.Int32s(st["task_offsets"])
			if seed == dataset.SplitSeed1 {
				// The reference's task sizes: 11399 10880 10137 10965 10620.
				if got := fmt.Sprint(off); got != "[0 11399 22279 32416 43381 54001]" {
					t.Errorf("task offsets %s", got)
				}
			}
		}
		runs = append(runs, all)
	}
	if runs[0] != runs[1] {
		t.Errorf("two runs gave different digests:\n%s", lineDiff(runs[0], runs[1]))
	}
	checkGolden(t, "mnist-real", runs[0])
}

// TestRealCIFAR10Chain runs download → prepare → split → streams on the
// real CIFAR-10 from the mirror: 5,000 images per class, a held-out tenth
// of 500 per class, five tasks of 9,000, digests pinned.
func TestRealCIFAR10Chain(t *testing.T) {
	dir := mirrorDir(t)
	if testing.Short() {
		t.Skip("real CIFAR-10 chain skipped in -short mode")
	}
	chain := newDataChain("cifar10", dataset.SplitSeed1)
	store, err := runCells(t, map[string]string{SettingDataMirror: dir}, chain.cells()...)
	if err != nil {
		t.Fatal(err)
	}
	all := digestLines(cellOutputs(t, store, chain.download))
	prep, order := cellOutputs(t, store, chain.prepare)
	all += digestLines(prep, order)
	split, order := cellOutputs(t, store, chain.split[0])
	all += digestLines(split, order)
	y, _, _ := artifacts.Int32s(prep["train_y"])
	h, _, _ := artifacts.Int32s(split["heldout_idx"])
	per := make([]int, 10)
	for _, i := range h {
		per[y[i]]++
	}
	if fmt.Sprint(per) != "[500 500 500 500 500 500 500 500 500 500]" {
		t.Errorf("held out per class %v, want 500 each", per)
	}
	st, order := cellOutputs(t, store, chain.streams[0])
	all += digestLines(st, order)
	off, _, _ := artifacts.Int32s(st["task_offsets"])
	if got := fmt.Sprint(off); got != "[0 9000 18000 27000 36000 45000]" {
		t.Errorf("task offsets %s", got)
	}
	checkGolden(t, "cifar10-real", all)
}
