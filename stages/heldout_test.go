package stages

import (
	"context"
	"slices"
	"testing"

	"repro/internal/dataset"
)

// TestHeldoutSetsMNIST: the in-process held-out sets have the split's sizes,
// the stream is the tasks' samples task after task and the evaluation set
// is the held-out tenth grouped by class ascending, as the streams stage
// orders them.
func TestHeldoutSetsMNIST(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes and standardises all of MNIST")
	}
	dir := mirrorDir(t)
	stream, eval, tasks, err := HeldoutSets(context.Background(), dir, "mnist", dataset.SplitSeed1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if stream.N != 54001 || eval.N != 5999 || stream.D != 784 || stream.Height != 28 || eval.Classes != 10 {
		t.Fatalf("stream %d, eval %d samples, D %d, height %d, %d classes", stream.N, eval.N, stream.D, stream.Height, eval.Classes)
	}
	if len(tasks) != 5 {
		t.Fatalf("%d tasks, want 5", len(tasks))
	}
	taskOf := map[int32]int{}
	for ti, task := range tasks {
		for _, c := range task {
			taskOf[int32(c)] = ti
		}
	}
	if !slices.IsSortedFunc(stream.Y, func(a, b int32) int { return taskOf[a] - taskOf[b] }) {
		t.Error("stream is not grouped task after task")
	}
	if !slices.IsSorted(eval.Y) {
		t.Error("evaluation set is not grouped by class ascending")
	}
	if _, _, _, err := HeldoutSets(context.Background(), dir, "svhn", dataset.SplitSeed1, 1); err == nil {
		t.Error("unknown data set: no error")
	}
}
