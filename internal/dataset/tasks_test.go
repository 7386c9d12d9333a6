package dataset

import (
	"fmt"
	"slices"
	"testing"
)

func TestTasks(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		classes  int
		protocol string
		want     string
	}{
		{10, Sequential, "[[0 1] [2 3] [4 5] [6 7] [8 9]]"},
		{10, Static, "[[0 1 2 3 4 5 6 7 8 9]]"},
		{100, Sequential, "10 tasks, first [0 1 2 3 4 5 6 7 8 9], last [90 91 92 93 94 95 96 97 98 99]"},
		{7, Sequential, "error"},
		{10, "single", "error"},
	} {
		ts, err := Tasks(c.classes, c.protocol)
		got := fmt.Sprint(ts)
		if err != nil {
			got = "error"
		} else if len(ts) == 10 {
			got = fmt.Sprintf("10 tasks, first %v, last %v", ts[0], ts[9])
		}
		if got != c.want {
			t.Errorf("Tasks(%d, %s) = %s, want %s", c.classes, c.protocol, got, c.want)
		}
	}
}

func TestTaskIndices(t *testing.T) {
	t.Parallel()
	labels := []int32{3, 0, 1, 2, 3, 0, 9}
	ts, _ := Tasks(10, Sequential)
	got := TaskIndices(labels, []int{6, 5, 4, 2, 1, 0}, ts) // index 3 not in the pool
	want := [][]int{{1, 2, 5}, {0, 4}, nil, nil, {6}}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("task %d: %v, want %v", i, got[i], want[i])
		}
	}
}

func TestTaskSizesMNIST(t *testing.T) {
	train, _ := loadMNIST(t)
	_, rest := StratifiedHoldout(train.Labels, HeldoutFrac, SplitSeed1)
	ts, _ := Tasks(10, Sequential)
	var got []int
	for _, s := range TaskIndices(train.Labels, rest, ts) {
		got = append(got, len(s))
	}
	// The held-out protocol's task sizes.
	if want := []int{11399, 10880, 10137, 10965, 10620}; !slices.Equal(got, want) {
		t.Errorf("task sizes %v, want %v", got, want)
	}
}
