package stages

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"repro/core"
	"repro/core/backprop"
	"repro/internal/dataset"
	"repro/pipeline"
)

// tinyTrainInputs chains the tiny MNIST release through prepare, split and
// streams, giving a train cell's inputs.
func tinyTrainInputs(t *testing.T, protocol string) map[string]outputs {
	t.Helper()
	prep, _ := prepareTiny(t, "mnist")
	split, _ := runStage(t, Split, &SplitParams{Dataset: "mnist", Seed: dataset.SplitSeed1, Frac: 0.25}, map[string]outputs{"prepare": prep}, nil)
	stream, _ := runStage(t, Streams, &StreamsParams{Dataset: "mnist", Protocol: protocol, Eval: "heldout"}, map[string]outputs{"prepare": prep, "split": split}, nil)
	return map[string]outputs{"data": prep, "stream": stream}
}

func TestTrainGolden(t *testing.T) {
	t.Parallel()
	local := core.DefaultLocalConfig()
	local.Hidden, local.Epochs, local.Buffer, local.PRSamples = []int{16, 8}, 2, 8, 4
	bp := backprop.DefaultConfig()
	bp.Hidden, bp.Epochs, bp.Batch, bp.ReplayBatch, bp.K = []int{16, 8}, 2, 4, 4, 8
	cases := []struct {
		name string
		p    *TrainParams
	}{
		{"local-sequential", &TrainParams{Learner: "local", Protocol: "sequential", Seed: 3, StreamStride: 1, EvalStride: 1, Local: &local}},
		{"local-static", &TrainParams{Learner: "local", Protocol: "static", Seed: 3, StreamStride: 2, EvalStride: 1, Local: &local}},
		{"bp-sequential", &TrainParams{Learner: "bp", Protocol: "sequential", Seed: 3, StreamStride: 1, EvalStride: 1, BP: &bp}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			protocol := tc.p.Protocol
			streamProtocol := "sequential"
			if protocol == "static" {
				streamProtocol = "static"
			}
			in := tinyTrainInputs(t, streamProtocol)
			out, order := runStage(t, Train, tc.p, in, nil)
			var rec TrainRecord
			if err := json.Unmarshal(out["result"], &rec); err != nil {
				t.Fatal(err)
			}
			if rec.Result == nil || rec.Eval != 10 || rec.Seed != 3 {
				t.Fatalf("record = %+v", rec)
			}
			wantTasks := 5
			if protocol == "static" {
				wantTasks = 1
			}
			if len(rec.Result.Acc) != wantTasks {
				t.Fatalf("%d rows in the accuracy matrix, want %d", len(rec.Result.Acc), wantTasks)
			}
			// Same inputs, same bytes.
			again, _ := runStage(t, Train, tc.p, in, nil)
			if string(again["result"]) != string(out["result"]) {
				t.Fatal("train is not deterministic")
			}
			checkGolden(t, "train-"+tc.name, digestLines(out, order))
		})
	}
}

func TestTrainErrors(t *testing.T) {
	t.Parallel()
	in := tinyTrainInputs(t, "sequential")
	for _, p := range []*TrainParams{
		{Learner: "local", Protocol: "sequential", StreamStride: 0, EvalStride: 1, Local: &core.LocalConfig{}},
		{Learner: "local", Protocol: "sequential", StreamStride: 1, EvalStride: 1},
		{Learner: "nope", Protocol: "sequential", StreamStride: 1, EvalStride: 1},
		{Learner: "bp", Protocol: "sequential", StreamStride: 1, EvalStride: 1000, BP: &backprop.Config{}},
	} {
		if _, _, err := runStageErr(t, Train, p, in); err == nil {
			t.Errorf("params %+v: no error", p)
		}
	}
}

func runStageErr(t *testing.T, st *pipeline.Stage, params any, inputs map[string]outputs) (outputs, []string, error) {
	t.Helper()
	return execStage(t, st, params, inputs, nil)
}

// TestNonFiniteAsNull: a diverged run's record encodes, non-finite metrics
// as null, finite ones as they are, under the fields' JSON names.
func TestNonFiniteAsNull(t *testing.T) {
	res := &core.Result{Acc: [][]float64{{0.5}}, FinalAcc: 0.0987, PR: []float64{math.NaN(), 2}, SynOps: math.Inf(1)}
	rec := &TrainRecord{Learner: "local", Protocol: "static", Seed: 4, Result: res}
	if _, err := json.Marshal(rec); err == nil {
		t.Fatal("json encoded NaN; the fallback is untested")
	}
	b, err := json.Marshal(nonFiniteAsNull(reflect.ValueOf(rec)))
	if err != nil {
		t.Fatal(err)
	}
	var back TrainRecord
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Seed != 4 || back.Result.FinalAcc != 0.0987 || back.Result.PR[1] != 2 || back.Result.Acc[0][0] != 0.5 {
		t.Errorf("round trip = %+v %+v", back, back.Result)
	}
	for _, want := range []string{`"PR":[null,2]`, `"SynOps":null`, `"learner":"local"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
}

// TestTrainDiverged: a run whose metrics become non-finite (a learning
// rate of 1e30 blows the weights up) fails its cell, unless its params
// allow divergence: then the record says it diverged and keeps the
// accuracies.
func TestTrainDiverged(t *testing.T) {
	t.Parallel()
	in := tinyTrainInputs(t, "sequential")
	local := core.DefaultLocalConfig()
	local.Hidden, local.Epochs, local.Buffer, local.PRSamples, local.Eta = []int{16, 8}, 1, 8, 4, 1e30
	p := &TrainParams{Learner: "local", Protocol: "sequential", StreamStride: 1, EvalStride: 1, Local: &local}
	_, _, err := runStageErr(t, Train, p, in)
	if err == nil || !strings.Contains(err.Error(), "diverged: non-finite metrics") || !strings.Contains(err.Error(), "allow_diverged") {
		t.Fatalf("diverged run: err %v, want it to fail naming allow_diverged", err)
	}
	allowed := *p
	allowed.AllowDiverged = true
	out, _, err := runStageErr(t, Train, &allowed, in)
	if err != nil {
		t.Fatal(err)
	}
	var rec TrainRecord
	if err := json.Unmarshal(out["result"], &rec); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rec.Diverged, "non-finite") || len(rec.Result.Acc) != 5 {
		t.Errorf("kept diverged record: diverged %q, %d accuracy rows", rec.Diverged, len(rec.Result.Acc))
	}
}

func TestTrainParamsValidate(t *testing.T) {
	t.Parallel()
	local := core.DefaultLocalConfig()
	ok := &TrainParams{Learner: "local", Protocol: "sequential", StreamStride: 1, EvalStride: 1, Local: &local}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for field, edit := range map[string]func(p *TrainParams){
		"stream_stride": func(p *TrainParams) { p.StreamStride = 0 },
		"eval_stride":   func(p *TrainParams) { p.EvalStride = -1 },
		"seed":          func(p *TrainParams) { p.Seed = -1 },
		"eta":           func(p *TrainParams) { l := *p.Local; l.Eta = math.Inf(1); p.Local = &l },
		"mask":          func(p *TrainParams) { l := *p.Local; l.Mask = "mirorr"; p.Local = &l },
		"lr": func(p *TrainParams) {
			b := backprop.DefaultConfig()
			b.LR = math.NaN()
			p.Learner, p.Local, p.BP = "bp", nil, &b
		},
	} {
		p := *ok
		edit(&p)
		var fe *core.FieldError
		if err := p.Validate(); !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%s: Validate() = %v, want a FieldError naming it", field, err)
		}
	}
}

func TestTrainCostOrdersLearnerKinds(t *testing.T) {
	t.Parallel()
	local := func(edit func(*core.LocalConfig)) *TrainParams {
		c := core.DefaultLocalConfig()
		edit(&c)
		return &TrainParams{Learner: "local", StreamStride: 1, Local: &c}
	}
	bp := func(method string) *TrainParams {
		c := backprop.DefaultConfig()
		c.Method = method
		return &TrainParams{Learner: "bp", StreamStride: 1, BP: &c}
	}
	full := local(func(*core.LocalConfig) {})
	smoke := local(func(*core.LocalConfig) {})
	smoke.StreamStride = 20
	order := []struct {
		name string
		p    *TrainParams
	}{
		{"relaxation T = 20", local(func(c *core.LocalConfig) { c.RelaxT = 20 })},
		{"relaxation T = 5", local(func(c *core.LocalConfig) { c.RelaxT = 5 })},
		{"anchor", local(func(c *core.LocalConfig) { c.Anchor = []float64{0.1} })},
		{"bp k-WTA", bp(backprop.MethodLocal)},
		{"DER++", bp("derpp")},
		{"deep net with skips, controller", local(func(c *core.LocalConfig) {
			c.Hidden, c.Skip, c.KPAdapt = []int{512, 256, 128, 128}, true, 0.25
		})},
		{"masked Adam", local(func(c *core.LocalConfig) { c.Opt = "adam" })},
		{"full", full},
		{"A-GEM", bp("agem")},
		{"BP+ER", bp("er")},
		{"no replay", local(func(c *core.LocalConfig) { c.Buffer = 0 })},
		{"full single pass", local(func(c *core.LocalConfig) { c.Epochs = 1 })},
		{"full at stride 20", smoke},
	}
	for i := 1; i < len(order); i++ {
		a, b := order[i-1], order[i]
		if trainCost(a.p) <= trainCost(b.p) {
			t.Errorf("cost of %s (%g) should exceed %s's (%g)", a.name, trainCost(a.p), b.name, trainCost(b.p))
		}
	}
}

// TestTrainVersionBackpropRotation: only the backprop k-WTA learner's
// local schedule with rotation over several tasks takes train version 3
// (its suppression now carries across task boundaries); a static run has
// one task and other backprop learners are unchanged.
func TestTrainVersionBackpropRotation(t *testing.T) {
	t.Parallel()
	bp := func(protocol string, f func(*backprop.Config)) *TrainParams {
		c := backprop.DefaultConfig()
		f(&c)
		return &TrainParams{Learner: "bp", Protocol: protocol, BP: &c}
	}
	rot := func(c *backprop.Config) { c.Method, c.KWTA, c.Rotate = backprop.MethodLocal, 0.1, true }
	for _, tc := range []struct {
		name string
		p    *TrainParams
		want int
	}{
		{"rotation sequential", bp("sequential", rot), 3},
		{"rotation single pass", bp("single_pass", rot), 3},
		{"rotation static", bp("static", rot), 2},
		{"local without rotation", bp("sequential", func(c *backprop.Config) { c.Method, c.KWTA = backprop.MethodLocal, 0.1 }), 2},
		{"er", bp("sequential", func(*backprop.Config) {}), 2},
	} {
		if got := Train.CellVersion(tc.p); got != tc.want {
			t.Errorf("%s: train version %d, want %d", tc.name, got, tc.want)
		}
	}
}

// Train version 7: every local configuration whose rotation is gated,
// whatever version it had, since its result gained GateDuty; the rest keep
// theirs.
func TestTrainVersionGated(t *testing.T) {
	t.Parallel()
	local := func(f func(*core.LocalConfig)) *TrainParams {
		c := core.DefaultLocalConfig()
		f(&c)
		return &TrainParams{Learner: "local", Protocol: "sequential", Local: &c}
	}
	for _, tc := range []struct {
		name string
		p    *TrainParams
		want int
	}{
		{"bouts", local(func(c *core.LocalConfig) { c.Gate = "refr_block" }), 7},
		{"novelty", local(func(c *core.LocalConfig) { c.Gate = "refr_nov" }), 7},
		{"novelty under the controller", local(func(c *core.LocalConfig) { c.Gate, c.KPAdapt = "refr_nov", 0.25 }), 7},
		{"pressure mask", local(func(c *core.LocalConfig) { c.Mask = "refr_press" }), 7},
		{"replay pressure gate (not a rotation gate)", local(func(c *core.LocalConfig) { c.Gate = "pressure" }), 1},
		{"controller", local(func(c *core.LocalConfig) { c.KPAdapt = 0.25 }), 6},
		{"default", local(func(*core.LocalConfig) {}), 1},
	} {
		if got := Train.CellVersion(tc.p); got != tc.want {
			t.Errorf("%s: train version %d, want %d", tc.name, got, tc.want)
		}
	}
}
