package backprop

import (
	"errors"
	"strings"
	"testing"

	"repro/core"
)

// TestTrainHooks checks progress reporting (every waking batch, against the
// announced total) and stopping between epochs.
func TestTrainHooks(t *testing.T) {
	t.Parallel()
	train, eval := blobs(200, 8, 4, 1), blobs(40, 8, 4, 2)
	cfg := DefaultConfig()
	cfg.Hidden, cfg.K, cfg.Epochs, cfg.Batch, cfg.ReplayBatch = []int{6}, 20, 2, 32, 32
	var calls, last, total int
	res, err := Train(cfg, train, eval, pairTasks(4), 0, core.Hooks{Progress: func(d, tot int) {
		calls++
		last, total = d, tot
	}})
	if err != nil {
		t.Fatal(err)
	}
	// 100 samples per task, batches of 32: 4 per epoch, 2 epochs, 2 tasks.
	if calls != 16 || last != 16 || total != 16 || res.WakingBatches != 16 {
		t.Errorf("progress: %d calls, last %d of %d, %d waking batches; want 16, 16 of 16, 16", calls, last, total, res.WakingBatches)
	}
	if len(res.Acc) != 2 || len(res.Acc[0]) != 1 || len(res.Acc[1]) != 2 {
		t.Errorf("accuracy matrix shape %v, want rows of 1 and 2", res.Acc)
	}
	polls := 0
	_, err = Train(cfg, train, eval, pairTasks(4), 0, core.Hooks{Stop: func() bool { polls++; return polls == 3 }})
	if !errors.Is(err, core.ErrStopped) || polls != 3 {
		t.Errorf("Train with Stop at the third poll: err %v after %d polls, want ErrStopped after 3", err, polls)
	}
}

// TestTrainRejectsBadInput checks that data errors name the problem.
func TestTrainRejectsBadInput(t *testing.T) {
	t.Parallel()
	train, eval := blobs(40, 8, 4, 1), blobs(40, 6, 4, 2)
	cfg := DefaultConfig()
	cases := []struct {
		name  string
		eval  *core.Dataset
		tasks []core.Task
		cfg   func(*Config)
		want  string
	}{
		{"dims", eval, pairTasks(4), nil, "differ"},
		{"class", train, []core.Task{{0, 7}}, nil, "class 7"},
		{"no tasks", train, nil, nil, "no tasks"},
		{"config", train, pairTasks(4), func(c *Config) { c.LR = -1 }, "lr"},
	}
	for _, tc := range cases {
		c := cfg
		if tc.cfg != nil {
			tc.cfg(&c)
		}
		_, err := Train(c, train, tc.eval, tc.tasks, 0, core.Hooks{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Train error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
}

// TestRotationCarriesAcrossTasks checks the local schedule's rotation: a
// unit awake on one waking batch is benched on the next, so no unit is
// awake on two consecutive waking batches, including the last batch of a
// task and the first of the next (the reference's run_bp_local keeps its
// suppression across tasks). It also checks that the test looks at a
// boundary and at awake units at all.
func TestRotationCarriesAcrossTasks(t *testing.T) {
	t.Parallel()
	train, eval := blobs(240, 12, 4, 21), blobs(80, 12, 4, 22)
	cfg := DefaultConfig()
	cfg.Method, cfg.KWTA, cfg.Batch, cfg.ReplayBatch, cfg.Rotate = MethodLocal, 0.1, 16, 16, true
	cfg.Hidden, cfg.K, cfg.Epochs = []int{40, 20}, 50, 1
	var r *runner
	var prev [][]bool
	boundary := 0 // waking batches of the first task
	checked, awakeSeen := 0, 0
	hooks := core.Hooks{Progress: func(done, total int) {
		// After step done, r.supp holds the awake sets of that step.
		for l := 1; l < len(r.supp)-1; l++ {
			for i, a := range r.supp[l] {
				if !a {
					continue
				}
				awakeSeen++
				if prev != nil && prev[l][i] {
					t.Errorf("layer %d unit %d awake on waking batches %d and %d (first task: %d batches)", l, i, done-1, done, boundary)
				}
			}
		}
		if prev != nil {
			checked++
		}
		prev = make([][]bool, len(r.supp))
		for l := range r.supp {
			prev[l] = append([]bool(nil), r.supp[l]...)
		}
	}}
	tasks := pairTasks(4)
	r = newRunner(cfg, train, eval, tasks, 3, hooks)
	for _, y := range train.Y {
		if c := int(y); c == tasks[0][0] || c == tasks[0][1] {
			boundary++
		}
	}
	boundary = ceilDiv(boundary, cfg.Batch)
	if err := r.run(); err != nil {
		t.Fatal(err)
	}
	if checked <= boundary || awakeSeen == 0 {
		t.Fatalf("checked %d pairs of batches (first task %d batches), %d awake units: the test saw no task boundary", checked, boundary, awakeSeen)
	}
}
