package stages

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"repro/artifacts"
)

// spikeInputs trains the tiny kept network and returns the inputs of a
// spike cell.
func spikeInputs(t *testing.T) (train outputs, in map[string]outputs) {
	t.Helper()
	prep, _ := prepareTiny(t, "mnist")
	split, _ := runStage(t, Split, &SplitParams{Dataset: "mnist", Seed: 1234, Frac: 0.25}, map[string]outputs{"prepare": prep}, nil)
	stream, _ := runStage(t, Streams, &StreamsParams{Dataset: "mnist", Protocol: "static", Eval: "heldout"}, map[string]outputs{"prepare": prep, "split": split}, nil)
	train, _ = runStage(t, Train, keptNetworkParams(), map[string]outputs{"data": prep, "stream": stream}, nil)
	return train, map[string]outputs{"network": train, "data": prep, "split": split}
}

// TestSpikeEnergyGolden converts the tiny network at two budgets, prices
// it, and pins both stages' output digests; the same inputs give the same
// bytes.
func TestSpikeEnergyGolden(t *testing.T) {
	train, in := spikeInputs(t)
	energyIn := map[string]outputs{"rate": train}
	var golden strings.Builder
	for _, steps := range []int{4, 8} {
		p := &SpikeParams{Steps: steps, Calibration: 10, Percentile: 0.999, Seed: 3, EvalStride: 1}
		out, order := runStage(t, Spike, p, in, nil)
		again, _ := runStage(t, Spike, p, in, nil)
		if string(again["result"]) != string(out["result"]) {
			t.Fatal("spike is not deterministic")
		}
		var rec SpikeRecord
		if err := json.Unmarshal(out["result"], &rec); err != nil {
			t.Fatal(err)
		}
		// 40 tiny training images, a quarter held out; 784-16-8-10.
		if rec.Steps != steps || rec.Samples != 10 || rec.DenseMACs != 784*16+16*8+8*10 || len(rec.Thresholds) != 2 ||
			rec.InputSpikes <= 0 || rec.Events <= 0 || rec.Acc < 0 || rec.Acc > 1 || rec.FanOut[2] != 10 {
			t.Errorf("T_s = %d: record %+v", steps, rec)
		}
		golden.WriteString(digestLines(out, order))
		energyIn[EnergyInput(steps)] = out
	}
	out, order := runStage(t, Energy, Energy.NewParams(), energyIn, nil)
	var rec EnergyRecord
	if err := json.Unmarshal(out["result"], &rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.Spike) != 2 || rec.Spike[0].Steps != 4 || rec.Spike[1].Steps != 8 {
		t.Fatalf("energy record %+v", rec)
	}
	// 0.9 pJ per event, 4.6 pJ per MAC, in nJ; exact up to rounding.
	s := rec.Spike[1]
	if math.Abs(s.NJ-s.Events*0.9e-3) > 1e-12*s.NJ || math.Abs(rec.DenseNJ-float64(rec.DenseMACs)*4.6e-3) > 1e-9 ||
		math.Abs(s.VsDense*s.NJ-rec.DenseNJ) > 1e-9*rec.DenseNJ || math.Abs(rec.EventNJ-rec.RateSynOps*4.6e-3) > 1e-9 {
		t.Errorf("energy record %+v", rec)
	}
	golden.WriteString(digestLines(out, order))
	checkGolden(t, "spike-energy-tiny", golden.String())
}

// TestStandardiseRaw: the calibration images standardised from their raw
// intensities are prepare's train_x bit for bit.
func TestStandardiseRaw(t *testing.T) {
	prep, _ := prepareTiny(t, "mnist")
	raw, _, _ := artifacts.Uint8s(prep["train_raw"])
	mean, _, _ := artifacts.Float32s(prep["mean"])
	std, _, _ := artifacts.Float32s(prep["std"])
	want, _, _ := artifacts.Float32s(prep["train_x"])
	got := standardiseRaw(raw, mean, std)
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("value %d: %g, prepare wrote %g", i, got[i], want[i])
		}
	}
}

// TestSpikeErrors: bad params and a network artifact of the wrong shape
// are errors that say what is wrong and name the input cell.
func TestSpikeErrors(t *testing.T) {
	train, in := spikeInputs(t)
	good := func() *SpikeParams {
		return &SpikeParams{Steps: 8, Calibration: 10, Percentile: 0.999, EvalStride: 1}
	}
	wrongShape := outputs{}
	for k, v := range train {
		wrongShape[k] = v
	}
	wrongShape["network_w1"] = artifacts.EncodeFloat32(make([]float32, 16*783), 16, 783)
	tests := []struct {
		name   string
		p      func(p *SpikeParams)
		inputs map[string]outputs
		want   string
	}{
		{"T_s zero", func(p *SpikeParams) { p.Steps = 0 }, in, "spike.steps = 0: the time budget T_s must be >= 1"},
		{"calibration too large", func(p *SpikeParams) { p.Calibration = 31 }, in, "input split: 30 training-stream samples, fewer than spike.calibration = 31"},
		{"percentile", func(p *SpikeParams) { p.Percentile = 1.5 }, in, "spike.percentile = 1.5"},
		{"wrong shape", func(*SpikeParams) {}, map[string]outputs{"network": wrongShape, "data": in["data"], "split": in["split"]},
			"input network: network_w1: shape [16 783], want [16 784]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := good()
			tc.p(p)
			_, _, err := runStageErr(t, Spike, p, tc.inputs)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	// The energy stage refuses a spike record bound under another budget.
	out, _ := runStage(t, Spike, good(), in, nil)
	_, _, err := runStageErr(t, Energy, Energy.NewParams(), map[string]outputs{"rate": train, EnergyInput(4): out})
	if err == nil || !strings.Contains(err.Error(), "a spike record of T_s = 8 bound as spike_t4") {
		t.Errorf("energy error %v", err)
	}
}

// TestEnergyMetric reads every quantity of a hand record and rejects
// malformed names.
func TestEnergyMetric(t *testing.T) {
	t.Parallel()
	rec := &EnergyRecord{Seed: 2, RateAcc: 0.94, DenseNJ: 2461.184, EventNJ: 526,
		Spike: []EnergySpike{{Steps: 8, Acc: 0.927, NJ: 117, VsDense: 21, VsEvent: 4.5}}}
	for _, tc := range []struct {
		metric string
		want   float64
	}{
		{"energy.acc@spike8", 92.7}, {"energy.nj@spike8", 117}, {"energy.vs_dense@spike8", 21}, {"energy.vs_event@spike8", 4.5},
		{"energy.acc@dense", 94}, {"energy.nj@dense", 2461.184}, {"energy.acc@event", 94}, {"energy.nj@event", 526},
	} {
		// acc is x100 of a fraction: exact to a few ulps.
		if got, err := EnergyMetric(rec, tc.metric); err != nil || math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("EnergyMetric(%s) = %g, %v; want %g", tc.metric, got, err, tc.want)
		}
	}
	for _, bad := range []string{"energy.acc@spike16", "energy.vs_dense@dense", "energy.acc", "energy.joules@spike8", "energy.acc@spike08", "energy.acc@spike0", "acc@spike8"} {
		if _, err := EnergyMetric(rec, bad); err == nil {
			t.Errorf("EnergyMetric(%s) accepted", bad)
		}
	}
	if ValidEnergyQuantity("energy.nj") != nil || ValidEnergyQuantity("energy.watts") == nil || ValidInference("spike32") != nil || ValidInference("rate") == nil {
		t.Error("ValidEnergyQuantity / ValidInference disagree with EnergyMetric")
	}
}
