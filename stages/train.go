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
		return bad("keep_network", p.KeepNetwork, "the "+string(p.Learner)+" learner's network cannot be kept")
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
// Version history: 1, the initial learners, then each learner's History
// (trainHistory; a cell's version is the newest entry that applies to it).
var Train = &pipeline.Stage{
	Name:    "train",
	Version: 1,
	History: trainHistory(),
	NewParams: func() any {
		return &TrainParams{Learner: DefaultLearner, Protocol: "sequential", StreamStride: 1, EvalStride: 1}
	},
	Run:  runTrain,
	Cost: trainCost,
}

// trainCost is the scheduler's cost model of a train cell before any run of
// its experiment is in the store or the ledger: the learner's CPU seconds of
// one epoch over the full MNIST stream (Learner.Cost; measured on a 2-core
// machine, scaled by its config), times the epochs, over the stream stride,
// plus what the stride does not shrink (loading the data, the setup and the
// evaluations; the learner's per-epoch extras). Params without a learner
// config cost the default system's 3.5 s per epoch for 5 epochs. The
// scheduler's order needs it only roughly; once cells have run, their
// recorded CPU times replace it, and a record of another config of the
// same experiment is scaled by it (a smoke cell on 1/20 of the stream from
// the paper's record: measured, the smoke cells took 0.06-0.2 of their
// paper records, and the nights 0.4-0.56).
func trainCost(params any) float64 {
	p := params.(*TrainParams)
	c := TrainCost{PerEpoch: 3.5, Epochs: 5}
	if l, ok := LearnerOf(p.Learner); ok {
		if cfg := l.Config(p); cfg != nil {
			c = l.Cost(cfg)
		}
	}
	epochs := float64(max(c.Epochs, 1))
	fixed := 0.5 + c.PerEpochFixed*epochs // data, setup, evaluations
	return c.PerEpoch*epochs/float64(max(p.StreamStride, 1)) + fixed
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
