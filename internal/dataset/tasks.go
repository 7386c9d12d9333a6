package dataset

import (
	"fmt"
	"slices"

	"repro/internal/data"
)

// Protocols of a training stream.
const (
	// Sequential is the class-incremental protocol: split-MNIST and split
	// CIFAR-10 tasks (0,1) (2,3) (4,5) (6,7) (8,9); split CIFAR-100 ten
	// tasks of ten consecutive fine labels.
	Sequential = "sequential"
	// Static is the i.i.d. protocol: one task holding every class.
	Static = "static"
)

// Tasks returns the tasks of protocol for a data set with the given number
// of classes, in presentation order. Sequential needs 10 classes (five
// pairs) or 100 (ten tens).
func Tasks(classes int, protocol string) ([]data.Task, error) {
	if classes <= 0 {
		return nil, fmt.Errorf("tasks: %d classes", classes)
	}
	var size int
	switch protocol {
	case Static:
		size = classes
	case Sequential:
		switch classes {
		case 10:
			size = 2
		case 100:
			size = 10
		default:
			return nil, fmt.Errorf("tasks: no sequential split defined for %d classes", classes)
		}
	default:
		return nil, fmt.Errorf("tasks: unknown protocol %q (want %q or %q)", protocol, Sequential, Static)
	}
	var tasks []data.Task
	for first := 0; first < classes; first += size {
		t := make(data.Task, size)
		for i := range t {
			t[i] = first + i
		}
		tasks = append(tasks, t)
	}
	return tasks, nil
}

// TaskIndices returns, for each task, the members of pool whose label is
// one of the task's classes, in ascending index order (the learner draws a
// fresh permutation every epoch, so the order only fixes the artifact's
// bytes). A class in no task is dropped.
func TaskIndices(labels []int32, pool []int, tasks []data.Task) [][]int {
	taskOf := map[int32]int{}
	for t, cs := range tasks {
		for _, c := range cs {
			taskOf[int32(c)] = t
		}
	}
	out := make([][]int, len(tasks))
	for _, i := range pool {
		if t, ok := taskOf[labels[i]]; ok {
			out[t] = append(out[t], i)
		}
	}
	for _, s := range out {
		slices.Sort(s)
	}
	return out
}
