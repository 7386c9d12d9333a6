package backprop

import (
	"fmt"
	"math"

	"repro/core"
)

// evalChunk is the number of evaluation rows forwarded at once; it only
// bounds memory (rows are independent).
const evalChunk = 1000

// Train runs one learner (cfg) with seed on the class-incremental stream
// made of tasks over train, evaluating on eval after every task. The static
// axis is a single task holding every class. The network is initialised
// from core.NewRNG(seed, core.StreamInit); epoch permutations, reservoir
// writes and buffer draws share core.NewRNG(seed, core.StreamRun), as the
// reference's one torch generator does.
//
// Train returns an error naming the field for an invalid cfg, for
// mismatched data, and core.ErrStopped (wrapped) if hooks.Stop asked to
// stop. The Result fills Acc, FinalAcc, Forgetting, WakingBatches,
// ReplayUpdates, ReplaySamples, SynOps (the dense MACs) with DenseMACs and
// SynOpsFrac and, for the local schedule, Rho and AsleepFrac.
func Train(cfg Config, train, eval *core.Dataset, tasks []core.Task, seed int64, hooks core.Hooks) (*core.Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("backprop: config: %w", err)
	}
	if err := checkData(train, eval, tasks); err != nil {
		return nil, fmt.Errorf("backprop: %w", err)
	}
	r := newRunner(cfg, train, eval, tasks, seed, hooks)
	if err := r.run(); err != nil {
		return nil, err
	}
	return r.res, nil
}

// newRunner builds a run's network, optimiser, buffer and generators; cfg
// and the data must be valid.
func newRunner(cfg Config, train, eval *core.Dataset, tasks []core.Task, seed int64, hooks core.Hooks) *runner {
	sizes := append(append([]int{train.D}, cfg.Hidden...), train.Classes)
	r := &runner{
		cfg: cfg, train: train, eval: eval, tasks: tasks, hooks: hooks,
		net: NewNet(sizes, cfg.KWTA, core.NewRNG(seed, core.StreamInit)),
		rng: core.NewRNG(seed, core.StreamRun),
		res: &core.Result{},
	}
	if cfg.Conn > 0 {
		// The same propensity length scale as the local learner's wiring.
		lambda := core.DefaultLocalConfig().ConnLambda
		r.net.SetConn(core.ConnMasks(sizes, train.Height, train.Width, cfg.Conn, lambda, core.NewRNG(seed, core.StreamConn)))
	}
	// The input layer's path (dense, or offset plus sparse deviation) is
	// fixed for the run by the training data alone.
	if off, _ := UseInputOffset(train); off != nil {
		r.net.SetInputOffset(off)
	}
	r.adam = NewAdam(len(r.net.Params), cfg.LR, cfg.WeightDecay)
	r.grad = make([]float32, len(r.net.Params)) // zero between steps: Adam's steps clear it
	logits := 0
	if cfg.Method == MethodDERPP {
		logits = train.Classes
	}
	r.buf = core.NewReservoir(cfg.K, train.D, logits)
	return r
}

func checkData(train, eval *core.Dataset, tasks []core.Task) error {
	switch {
	case train == nil || eval == nil:
		return fmt.Errorf("nil dataset")
	case train.D != eval.D || train.Classes != eval.Classes:
		return fmt.Errorf("train (D=%d, %d classes) and eval (D=%d, %d classes) differ", train.D, train.Classes, eval.D, eval.Classes)
	case len(train.X) != train.N*train.D || len(train.Y) != train.N || len(eval.X) != eval.N*eval.D || len(eval.Y) != eval.N:
		return fmt.Errorf("dataset arrays do not match N and D")
	case len(tasks) == 0:
		return fmt.Errorf("no tasks")
	}
	for t, task := range tasks {
		if len(task) == 0 {
			return fmt.Errorf("task %d has no classes", t)
		}
		for _, c := range task {
			if c < 0 || c >= train.Classes {
				return fmt.Errorf("task %d: class %d outside [0, %d)", t, c, train.Classes)
			}
		}
	}
	return nil
}

// runner is one training run's state.
type runner struct {
	cfg         Config
	train, eval *core.Dataset
	tasks       []core.Task
	hooks       core.Hooks
	net         *Net
	adam        *Adam
	grad        []float32
	buf         *core.Reservoir
	rng         *core.RNG
	res         *core.Result

	done, total int
	step        func(idx []int)
	supp        [][]bool // local schedule: per hidden layer, the units benched on the next waking batch (kept across tasks)
}

func (r *runner) run() error {
	// Samples of each task, in dataset order.
	taskIdx := make([][]int, len(r.tasks))
	for t, task := range r.tasks {
		in := make([]bool, r.train.Classes)
		for _, c := range task {
			in[c] = true
		}
		for i, y := range r.train.Y {
			if in[y] {
				taskIdx[t] = append(taskIdx[t], i)
			}
		}
		r.total += r.cfg.Epochs * ceilDiv(len(taskIdx[t]), r.cfg.Batch)
	}
	if r.cfg.Method == MethodLocal {
		r.step = r.newLocal()
	} else {
		r.step = r.newBatch()
	}
	idx := make([]int, 0, r.cfg.Batch)
	// The local schedule's rotation state (r.supp) carries across task
	// boundaries: the reference's run_bp_local sets suppress once before its
	// task loop (run_seq.py:1493) and only its waking steps rewrite it
	// (run_seq.py:1512-1513), so the first waking batch of a task is
	// suppressed by the last one of the task before.
	for t := range r.tasks {
		n := len(taskIdx[t])
		for range r.cfg.Epochs {
			if r.hooks.Stop != nil && r.hooks.Stop() {
				return fmt.Errorf("backprop: task %d: %w", t, core.ErrStopped)
			}
			perm := r.rng.Perm(n)
			for b := 0; b < n; b += r.cfg.Batch {
				idx = idx[:0]
				for _, p := range perm[b:min(b+r.cfg.Batch, n)] {
					idx = append(idx, taskIdx[t][p])
				}
				r.step(idx)
				r.done++
				r.res.WakingBatches++
				if r.hooks.Progress != nil {
					r.hooks.Progress(r.done, r.total)
				}
			}
		}
		r.evaluate(t)
	}
	r.res.Forgetting = core.Forgetting(r.res.Acc)
	// A backprop network computes every multiply-accumulate of its dense
	// layers whatever the activity (k-WTA zeros included), so its synaptic
	// operations per forward pass are the dense MACs: the reference's
	// convention for its autograd MLP (synops fraction 1).
	dense := core.DenseMACs(r.net.Sizes)
	r.res.SetSynOps(dense, dense)
	return nil
}

// evaluate appends the accuracy row after task t and sets FinalAcc.
func (r *runner) evaluate(t int) {
	ev := r.eval
	p := NewPass(r.net, min(evalChunk, max(ev.N, 1)))
	pred := make([]int32, ev.N)
	for s := 0; s < ev.N; s += evalChunk {
		e := min(s+evalChunk, ev.N)
		p.SetRows(e - s)
		copy(p.A[0], ev.X[s*ev.D:e*ev.D])
		r.net.Forward(p)
		r.net.Predict(p, pred[s:e])
	}
	taskOf := make([]int, ev.Classes)
	for c := range taskOf {
		taskOf[c] = -1
	}
	for j, task := range r.tasks {
		for _, c := range task {
			taskOf[c] = j
		}
	}
	hit, cnt := make([]int, t+1), make([]int, t+1)
	allHit := 0
	for i, y := range ev.Y {
		ok := pred[i] == y
		if ok {
			allHit++
		}
		if j := taskOf[y]; j >= 0 && j <= t {
			cnt[j]++
			if ok {
				hit[j]++
			}
		}
	}
	row := make([]float64, t+1)
	for j := range row {
		row[j] = math.NaN()
		if cnt[j] > 0 {
			row[j] = float64(hit[j]) / float64(cnt[j])
		}
	}
	r.res.Acc = append(r.res.Acc, row)
	if ev.N > 0 {
		r.res.FinalAcc = float64(allHit) / float64(ev.N)
	}
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
