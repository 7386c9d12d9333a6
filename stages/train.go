package stages

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"

	"repro/artifacts"
	"repro/core"
	"repro/core/backprop"
	"repro/pipeline"
)

// TrainParams are the params of one training run: one learner config, one
// protocol, one seed. Exactly one of Local and BP is set.
type TrainParams struct {
	Learner  LearnerKind `toml:"learner"`  // a registered kind (learners)
	Protocol string      `toml:"protocol"` // "sequential", "static" or "single_pass"
	Seed     int64       `toml:"seed"`
	// StreamStride keeps every n-th training sample of the stream and
	// EvalStride every n-th evaluation sample (1 = all). Only scaled-down
	// profiles (smoke) set them; they are part of the key like any param.
	StreamStride int `toml:"stream_stride"`
	EvalStride   int `toml:"eval_stride"`

	// KeepNetwork stores the trained network (network.go) beside the
	// result. The DAG builder sets it on exactly the train cells a later
	// stage reads the network of (spike conversion); omitted while false,
	// so the key of every other cell is what it was before the option.
	KeepNetwork bool `toml:"keep_network,omitzero"`
	// AllowDiverged keeps a run whose metrics became non-finite (its
	// weights diverged) as a result, its record saying so; without it such
	// a run fails its cell, so that a bad setting is never cached as a
	// number. Experiments the paper reports with collapsed seeds set it;
	// omitted while false, so no other key changes.
	AllowDiverged bool `toml:"allow_diverged,omitzero"`

	Local *core.LocalConfig `toml:"local"`
	BP    *backprop.Config  `toml:"bp"`
}

// TrainRecord is the "result" output of a train cell: the learner's metrics
// plus what identifies the run. It is canonical JSON (fixed field order, Go's
// shortest float formatting), so equal runs give equal bytes.
type TrainRecord struct {
	Learner  LearnerKind  `json:"learner"`
	Protocol string       `json:"protocol"`
	Seed     int64        `json:"seed"`
	Stream   int          `json:"stream_samples"`
	Eval     int          `json:"eval_samples"`
	Result   *core.Result `json:"result"`
	// Diverged says which metrics became non-finite (written as null) in
	// a run kept with allow_diverged.
	Diverged string `json:"diverged,omitempty"`
}

// Validate checks what the train stage itself needs of its params and the
// learner config's own Validate; errors name the field (core.FieldError).
func (p *TrainParams) Validate() error {
	bad := func(field string, v any, why string) error {
		return &core.FieldError{Field: field, Msg: fmt.Sprintf("%s = %v: %s", field, v, why)}
	}
	switch {
	case p.StreamStride < 1:
		return bad("stream_stride", p.StreamStride, "must be >= 1")
	case p.EvalStride < 1:
		return bad("eval_stride", p.EvalStride, "must be >= 1")
	case p.Seed < 0:
		return bad("seed", p.Seed, "must be >= 0")
	}
	l, ok := LearnerOf(p.Learner)
	switch {
	case p.KeepNetwork && !l.KeepsNetwork:
		return bad("keep_network", p.KeepNetwork, "only the local learner's network can be kept")
	case !ok:
		return bad("learner", p.Learner, "want "+LearnerKinds())
	}
	cfg := l.Config(p)
	if cfg == nil {
		return bad(string(l.Kind), nil, "missing for the "+string(l.Kind)+" learner")
	}
	return l.Validate(cfg)
}

// Train runs one learner on one stream (inputs "data": a prepare or v1 cell;
// "stream": a streams cell) and writes "result" (TrainRecord JSON), and with
// keep_network the trained local network (network.go).
//
// Version history: 1, the initial learners, then trainHistory (a cell's
// version is the newest entry that applies to it).
var Train = &pipeline.Stage{
	Name:    "train",
	Version: 1,
	History: trainHistory,
	NewParams: func() any {
		return &TrainParams{Learner: LearnerLocal, Protocol: "sequential", StreamStride: 1, EvalStride: 1}
	},
	Run:  runTrain,
	Cost: trainCost,
}

// trainCost is the scheduler's cost model of a train cell before any run of
// its experiment is in the store or the ledger: CPU seconds of one epoch
// over the full MNIST stream by learner kind (measured on a 2-core
// machine), scaled by the network's weights against the default system's
// and by the controller and the relaxation, times the epochs, over the
// stream stride, plus what the stride does not shrink (loading the data,
// the setup and the evaluations; an offline night's buffer batches). The
// scheduler's order needs it only roughly; once cells have run, their
// recorded CPU times replace it, and a record of another config of the
// same experiment is scaled by it (a smoke cell on 1/20 of the stream from
// the paper's record: measured, the smoke cells took 0.06-0.2 of their
// paper records, and the nights 0.4-0.56).
func trainCost(params any) float64 {
	p := params.(*TrainParams)
	perEpoch, epochs := 3.5, 5 // the default local system: 17.5 s for 5 epochs
	switch {
	case p.Learner == LearnerBP && p.BP != nil:
		epochs = p.BP.Epochs
		switch {
		case p.BP.Method == backprop.MethodLocal:
			perEpoch = 6.7
		case p.BP.Method == "derpp":
			perEpoch = 5.4
		case p.BP.Method == "agem":
			perEpoch = 3.4
		default:
			perEpoch = 1.5
		}
	case p.Local != nil:
		epochs = p.Local.Epochs
		switch {
		case len(p.Local.Anchor) > 0:
			perEpoch = 9
		case p.Local.Opt == "adam":
			perEpoch = 5
		case p.Local.Buffer == 0, p.Local.Schedule == "offline":
			perEpoch = 1 // no waking replay
		}
		// The update and the forward product scale with the weights:
		// deeper or wider nets (and skip synapses) cost more per sample,
		// and the adaptive controller stores its layers densely and sums
		// them in synapse order (about 1.17x on the default widths).
		perEpoch *= localWeights(p.Local) / localWeights(&defaultLocal)
		if p.Local.KPAdapt > 0 {
			perEpoch *= 1.17
		}
		// Relaxation settles every batch over T steps: a T = 5 cell of
		// the substrate ladder takes about 2.85x the CPU of its
		// single-pass sweep, and T = 20 more again, so the ladder's
		// longest cells (13-15 min) are not ranked with its shortest.
		if t := p.Local.RelaxT; t > 0 {
			perEpoch *= 1 + 0.37*float64(t)
		}
	}
	stride := max(p.StreamStride, 1)
	fixed := 0.5 // data, setup, evaluations
	if p.Local != nil && p.Local.Night {
		fixed += 0.6 * float64(max(epochs, 1)) // a night of buffer batches after every epoch
	}
	return perEpoch*float64(max(epochs, 1))/float64(stride) + fixed
}

// defaultLocal is the default system, the cost model's unit.
var defaultLocal = core.DefaultLocalConfig()

// localWeights is the cost model's size of a local learner's network: its
// dense weight count on MNIST's 784 inputs and 10 classes, with the skip
// synapses into hidden layers 3 and up.
func localWeights(c *core.LocalConfig) float64 {
	sizes := append(append([]int{784}, c.Hidden...), 10)
	n := 0
	for l := 1; l < len(sizes); l++ {
		n += sizes[l-1] * sizes[l]
		if c.Skip && l >= 3 && l < len(sizes)-1 {
			n += sizes[l-2] * sizes[l]
		}
	}
	return float64(max(n, 1))
}

// trainHistory is the train stage's version history after 1: each change
// of a learner's outputs for unchanged params, the configurations it
// touched, and why. A cell's version is the largest Version whose entry
// applies (pipeline.Stage.CellVersion), so the entries' order is free;
// an entry is never removed or narrowed.
var trainHistory = []pipeline.Bump{
	{Version: 2, Applies: local(func(c *core.LocalConfig) bool { return c.LeakMoments || len(c.Anchor) == 2 }),
		Why: "local configurations whose W^1 updates took the general update path, the two-timescale " +
			"anchor and leaking Adam moments: it computed c = W^1 o (the input offset's share of the " +
			"layer-1 drive) from the weights before the update, so the next forward pass saw W^1 one " +
			"update late in that share. Fixed; other configurations never took that path and keep version 1."},
	{Version: 3, Applies: local(func(c *core.LocalConfig) bool { return c.Mask == "mirror" }),
		Why: "mirror isolation: its masked waking update counts as a replay call for the burst baseline, " +
			"as the reference's local_update decides by the mask's presence (it had run the waking bookkeeping)."},
	{Version: 4, Applies: local(func(c *core.LocalConfig) bool { return c.Opt == "adam" }),
		Why: "every local configuration on Adam (masked Adam rows, mirror, soft rotation, the offline " +
			"nights and no replay): the first moment is set to 0 below 1e-30, as the heavy-ball velocity " +
			"is. Without input it had decayed into float32's subnormal range, where each operation costs " +
			"about a hundred times more; the flushed steps are below 1e-29."},
	{Version: 5, Applies: local(func(c *core.LocalConfig) bool { return c.Mask == "mirror" }),
		Why: "mirror isolation again runs the waking bookkeeping (burst baseline, controller EMA) on its " +
			"masked waking update, undoing 3: the reference's caller passes replay=False with the " +
			"mirror's mask, which overrides the mask-presence default that 3 had followed."},
	{Version: 6, Applies: local(func(c *core.LocalConfig) bool { return c.KPAdapt > 0 }),
		Why: "every local configuration under the adaptive decay controller (kp_adapt > 0): its sums of " +
			"|Delta W|, |G| and |W| over a layer are each four float64 partial sums (synapse j of a row " +
			"into partial j mod 4, core's ctrlSums) instead of one running sum in synapse order, which " +
			"let the vector kernel add four synapses at once. The sums round differently in their last " +
			"bits; lambda, taken to float32, almost never moves."},
	{Version: 7, Applies: local((*core.LocalConfig).GatedRotation),
		Why: "every local configuration whose rotation is gated (the refr_nov, refr_prog and refr_block " +
			"gates, the refr_press and refr_frac masks; core.LocalConfig.GatedRotation), whatever it was " +
			"before: its result records GateDuty, the share of waking batches with rotation on, which " +
			"cf0d2d84 added without a version bump, so records from before it lacked the field under " +
			"the same keys (found by the whole-ledger recompute of issue 37: 14 records). Accuracies " +
			"and every other field are unchanged."},
	{Version: 2, Applies: func(params any) bool { return params.(*TrainParams).Learner == LearnerBP },
		Why: "every backprop learner: on training data with a per-pixel background (standardised MNIST: " +
			"at most a third of the entries differ from their column's majority value) the input layer " +
			"computes W^T x as W^T o + W^T (x - o) and its weight gradient as o (sum of the rows' " +
			"gradients) + the sparse rows (core/backprop, offset.go): the same mathematics, summed in " +
			"another order, so the results differ in float32 rounding. Data without such a background " +
			"(CIFAR's luminance and V1 features) keep the dense path and the same bits; they share the " +
			"version because a cell's version cannot see its data."},
	{Version: 3, Applies: func(params any) bool {
		p := params.(*TrainParams)
		return p.Learner == LearnerBP && p.BP != nil && p.BP.Method == backprop.MethodLocal && p.BP.Rotate && p.Protocol != "static"
	},
		Why: "the backprop k-WTA learner on the local schedule with rotation over more than one task " +
			"(protocols other than static): its suppression is kept across task boundaries, as the " +
			"reference's run_bp_local sets it once before its task loop (run_seq.py:1493) and only its " +
			"waking steps rewrite it (1512-1513). It had been cleared at every task, so the first waking " +
			"batch of each task ran unsuppressed. A static run has one task and keeps version 2."},
}

// local turns a predicate over the local learner's config into one over
// train params, false for other learners.
func local(f func(*core.LocalConfig) bool) func(params any) bool {
	return func(params any) bool {
		p := params.(*TrainParams)
		return p.Learner == LearnerLocal && p.Local != nil && f(p.Local)
	}
}

func runTrain(ctx context.Context, rc *pipeline.RunContext) error {
	p := rc.Params.(*TrainParams)
	// The matrix validated these params when it built the cell; a cell
	// built another way (a test, a hand-made plan) is checked here, by the
	// same function, once.
	if err := p.Validate(); err != nil {
		return fmt.Errorf("train params: %w", err)
	}
	l, _ := LearnerOf(p.Learner) // Validate checked the kind and its config
	train, eval, tasks, err := loadStream(ctx, rc, p)
	if err != nil {
		return err
	}
	if train.N == 0 || eval.N == 0 {
		return fmt.Errorf("%d stream and %d evaluation samples: both must be > 0", train.N, eval.N)
	}
	fmt.Fprintf(rc.Log, "%s learner, %s protocol, seed %d: %d stream samples, %d evaluation samples, %d tasks\n",
		p.Learner, p.Protocol, p.Seed, train.N, eval.N, len(tasks))
	hooks := core.Hooks{
		Progress: func(done, total int) { rc.Progress(int64(done), int64(total)) },
		Stop:     func() bool { return ctx.Err() != nil },
	}
	res, nw, err := l.train(l.Config(p), trainInput{train: train, eval: eval, tasks: tasks, seed: p.Seed, hooks: hooks}, p.KeepNetwork)
	if err != nil {
		return err
	}
	fmt.Fprintf(rc.Log, "final accuracy %.4f, forgetting %.4f, %d waking batches, %d replay updates\n",
		res.FinalAcc, res.Forgetting, res.WakingBatches, res.ReplayUpdates)
	for i, row := range res.Acc {
		fmt.Fprintf(rc.Log, "after task %d: %.4f\n", i, row)
	}
	rec := &TrainRecord{Learner: p.Learner, Protocol: p.Protocol, Seed: p.Seed, Stream: train.N, Eval: eval.N, Result: res}
	b, err := json.MarshalIndent(rec, "", " ")
	if ue := (*json.UnsupportedValueError)(nil); errors.As(err, &ue) {
		// A diverged run (non-finite weights) leaves NaN or Inf in metrics
		// that JSON cannot hold. Unless the experiment expects divergence,
		// that fails the cell: a setting that blows up is not a result.
		// Otherwise the accuracies stay (a network whose outputs are NaN
		// predicts class 0, as torch's argmax does), the non-finite values
		// are written as null, and the record says it diverged.
		if !p.AllowDiverged {
			return fmt.Errorf("diverged: non-finite metrics (%s) after training; not cached (an experiment whose runs may diverge sets allow_diverged = true to keep them as results)", ue.Str)
		}
		fmt.Fprintf(rc.Log, "diverged: non-finite metrics (%s) written as null\n", ue.Str)
		rec.Diverged = "non-finite metrics (" + ue.Str + ") written as null"
		b, err = json.MarshalIndent(nonFiniteAsNull(reflect.ValueOf(rec)), "", " ")
	}
	if err != nil {
		return err
	}
	rc.Put("result", append(b, '\n'))
	if nw != nil {
		putNetwork(rc, nw)
	}
	return nil
}

// loadStream builds the training and evaluation sets and the tasks from the
// "data" and "stream" inputs (contracts in doc.go).
func loadStream(ctx context.Context, rc *pipeline.RunContext, p *TrainParams) (train, eval *core.Dataset, tasks []core.Task, err error) {
	data, stream := rc.Input("data"), rc.Input("stream")
	read := func(in *pipeline.InputRef, name string) ([]byte, error) {
		b, err := in.Read(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("input %s: %s: %w", in.CellID, name, err)
		}
		return b, nil
	}
	i32 := func(in *pipeline.InputRef, name string) ([]int32, []int, error) {
		b, err := read(in, name)
		if err != nil {
			return nil, nil, err
		}
		return artifacts.Int32s(b)
	}
	info, _, err := i32(data, "info")
	if err != nil {
		return nil, nil, nil, err
	}
	if len(info) != 3 {
		return nil, nil, nil, fmt.Errorf("input %s: info has %d values, want 3", data.CellID, len(info))
	}
	classes, _, taskIdx, evalIdx, evalSet, err := readStream(read, i32, stream)
	if err != nil {
		return nil, nil, nil, err
	}
	full := func(x, y string) (*core.Dataset, error) {
		xb, err := read(data, x)
		if err != nil {
			return nil, err
		}
		xs, shape, err := artifacts.Float32s(xb)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", x, err)
		}
		ys, _, err := i32(data, y)
		if err != nil {
			return nil, err
		}
		if len(shape) != 2 || shape[0] != len(ys) {
			return nil, fmt.Errorf("%s: shape %v does not match %d labels", x, shape, len(ys))
		}
		return &core.Dataset{X: xs, Y: ys, N: shape[0], D: shape[1], Classes: int(info[2]), Height: int(info[0]), Width: int(info[1])}, nil
	}
	trainAll, err := full("train_x", "train_y")
	if err != nil {
		return nil, nil, nil, err
	}
	idx, err := strided(taskIdx, p.StreamStride, trainAll.N, "stream")
	if err != nil {
		return nil, nil, nil, err
	}
	train = trainAll.Subset(idx)
	evalAll := trainAll
	if evalSet == 1 {
		if evalAll, err = full("test_x", "test_y"); err != nil {
			return nil, nil, nil, err
		}
	}
	if idx, err = strided(evalIdx, p.EvalStride, evalAll.N, "evaluation"); err != nil {
		return nil, nil, nil, err
	}
	eval = evalAll.Subset(idx)
	for t := range classes {
		task := make(core.Task, len(classes[t]))
		for i, c := range classes[t] {
			task[i] = int(c)
		}
		tasks = append(tasks, task)
	}
	return train, eval, tasks, nil
}

// strided takes every stride-th of idx, each checked to lie in [0, n);
// what names the indices in the error.
func strided(idx []int32, stride, n int, what string) ([]int, error) {
	var out []int
	for i := 0; i < len(idx); i += stride {
		j := int(idx[i])
		if j < 0 || j >= n {
			return nil, fmt.Errorf("%s index %d outside [0, %d)", what, j, n)
		}
		out = append(out, j)
	}
	return out, nil
}

// readStream decodes a streams cell's outputs.
func readStream(read func(*pipeline.InputRef, string) ([]byte, error), i32 func(*pipeline.InputRef, string) ([]int32, []int, error), in *pipeline.InputRef) (classes [][]int32, offsets, taskIdx, evalIdx []int32, evalSet uint8, err error) {
	tc, shape, err := i32(in, "task_classes")
	if err != nil {
		return
	}
	if len(shape) != 2 {
		err = fmt.Errorf("task_classes: shape %v, want [T, C]", shape)
		return
	}
	for t := 0; t < shape[0]; t++ {
		classes = append(classes, tc[t*shape[1]:(t+1)*shape[1]])
	}
	if offsets, _, err = i32(in, "task_offsets"); err != nil {
		return
	}
	if len(offsets) != len(classes)+1 {
		err = fmt.Errorf("task_offsets: %d values for %d tasks", len(offsets), len(classes))
		return
	}
	if taskIdx, _, err = i32(in, "task_idx"); err != nil {
		return
	}
	if evalIdx, _, err = i32(in, "eval_idx"); err != nil {
		return
	}
	b, err := read(in, "eval_set")
	if err != nil {
		return
	}
	es, _, err := artifacts.Uint8s(b)
	if err != nil || len(es) != 1 {
		err = fmt.Errorf("eval_set: want one uint8 (%v)", err)
		return
	}
	evalSet = es[0]
	return
}

// nonFiniteAsNull converts v to plain JSON values (maps with the fields'
// JSON names, slices, numbers, strings), with NaN and infinite floats as
// nil, for a record that json cannot encode as it is.
func nonFiniteAsNull(v reflect.Value) any {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return nonFiniteAsNull(v.Elem())
	case reflect.Struct:
		m := map[string]any{}
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			m[name] = nonFiniteAsNull(v.Field(i))
		}
		return m
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return nil
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = nonFiniteAsNull(v.Index(i))
		}
		return out
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); !math.IsNaN(f) && !math.IsInf(f, 0) {
			return f
		}
		return nil
	}
	return v.Interface()
}
