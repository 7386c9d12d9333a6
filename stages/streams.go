package stages

import (
	"context"
	"fmt"

	"repro/artifacts"
	"repro/core"
	"repro/internal/dataset"
	"repro/pipeline"
)

// StreamsParams are the params of a streams cell.
type StreamsParams struct {
	Dataset  string `toml:"dataset"`  // names the cell; labels and classes come from input "prepare"
	Protocol string `toml:"protocol"` // "sequential" (class-incremental tasks) or "static" (one task, every class)
	Eval     string `toml:"eval"`     // "heldout" (needs input "split") or "test" (official test set)
}

// Streams turns labels (input "prepare": train_y, test_y, info) and, for
// eval = "heldout", a split (input "split") into what one training run
// consumes (doc.go): the tasks' classes, each task's training samples
// (every stream sample of its classes, ascending) and the evaluation
// samples (the held-out tenth in the split's class-grouped order, or the
// whole test set). Single
// pass is a train param (epochs), not a stream.
//
// Version history:
//
//   - 1: held-out evaluation samples in ascending index order.
//   - 2: held-out evaluation samples in the split's class-grouped order, as
//     the reference takes them (the participation ratio and the synaptic
//     operations use the first 3,000).
var Streams = &pipeline.Stage{
	Name:    "streams",
	Version: 2,
	NewParams: func() any {
		return &StreamsParams{Dataset: "mnist", Protocol: dataset.Sequential, Eval: "heldout"}
	},
	Run: runStreams,
}

func runStreams(ctx context.Context, rc *pipeline.RunContext) error {
	p := rc.Params.(*StreamsParams)
	info, _, err := readInt32s(ctx, rc, "prepare", "info", 1)
	if err != nil {
		return err
	}
	if len(info) != 3 {
		return fmt.Errorf("input prepare info: %d values, want 3", len(info))
	}
	tasks, err := dataset.Tasks(int(info[2]), p.Protocol)
	if err != nil {
		return err
	}
	y, _, err := readInt32s(ctx, rc, "prepare", "train_y", 1)
	if err != nil {
		return err
	}
	var pool, eval []int
	var evalSet uint8
	switch p.Eval {
	case "heldout":
		if pool, eval, err = heldoutIndices(ctx, rc, len(y)); err != nil {
			return err
		}
	case "test":
		ty, _, err := readInt32s(ctx, rc, "prepare", "test_y", 1)
		if err != nil {
			return err
		}
		pool = make([]int, len(y))
		for i := range pool {
			pool[i] = i
		}
		eval = make([]int, len(ty))
		for i := range eval {
			eval[i] = i
		}
		evalSet = 1
	default:
		return fmt.Errorf("streams: unknown eval %q (want heldout or test)", p.Eval)
	}
	per := flattenTasks(y, pool, tasks)
	T, C := len(tasks), len(tasks[0])
	classes := make([]int32, 0, T*C)
	for _, t := range tasks {
		for _, c := range t {
			classes = append(classes, int32(c))
		}
	}
	rc.Put("task_classes", artifacts.EncodeInt32(classes, T, C))
	rc.Put("task_offsets", artifacts.EncodeInt32(per.offsets, T+1))
	rc.Put("task_idx", artifacts.EncodeInt32(per.idx, len(per.idx)))
	rc.Put("eval_idx", artifacts.EncodeInt32(toInt32(eval), len(eval)))
	rc.Put("eval_set", artifacts.EncodeUint8([]uint8{evalSet}, 1))
	sizes := make([]int32, T)
	for t := range T {
		sizes[t] = per.offsets[t+1] - per.offsets[t]
	}
	fmt.Fprintf(rc.Log, "%s %s/%s: %d tasks of sizes %v, %d evaluation samples\n", p.Dataset, p.Protocol, p.Eval, T, sizes, len(eval))
	return nil
}

// heldoutIndices reads input "split" for a training set of n samples: the
// stream pool and the held-out tenth, each index checked. The held-out tenth
// stays in the split's order, grouped by class ascending and shuffled within
// a class, as the reference's _val_split concatenates it: the participation
// ratio and synops are measured on the first 3,000 evaluation samples, so
// the order is part of the result (v2; v1 sorted the indices).
func heldoutIndices(ctx context.Context, rc *pipeline.RunContext, n int) (pool, eval []int, err error) {
	if !rc.HasInput("split") {
		return nil, nil, fmt.Errorf("streams: eval = heldout needs an input named split")
	}
	h, _, err := readInt32s(ctx, rc, "split", "heldout_idx", 1)
	if err != nil {
		return nil, nil, err
	}
	s, _, err := readInt32s(ctx, rc, "split", "stream_idx", 1)
	if err != nil {
		return nil, nil, err
	}
	if len(h)+len(s) != n {
		return nil, nil, fmt.Errorf("streams: split covers %d + %d samples, training set has %d", len(h), len(s), n)
	}
	for _, i := range s {
		if i < 0 || int(i) >= n {
			return nil, nil, fmt.Errorf("streams: stream index %d out of range", i)
		}
		pool = append(pool, int(i))
	}
	for _, i := range h {
		if i < 0 || int(i) >= n {
			return nil, nil, fmt.Errorf("streams: held-out index %d out of range", i)
		}
		eval = append(eval, int(i))
	}
	return pool, eval, nil
}

// flatTasks is the CSR form of per-task index lists.
type flatTasks struct {
	offsets []int32
	idx     []int32
}

// flattenTasks is dataset.TaskIndices in the streams artifact's CSR form.
func flattenTasks(labels []int32, pool []int, tasks []core.Task) flatTasks {
	per := dataset.TaskIndices(labels, pool, tasks)
	f := flatTasks{offsets: []int32{0}}
	for _, s := range per {
		f.idx = append(f.idx, toInt32(s)...)
		f.offsets = append(f.offsets, int32(len(f.idx)))
	}
	return f
}
