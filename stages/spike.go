package stages

import (
	"context"
	"encoding/json"
	"fmt"

	"repro/artifacts"
	"repro/core"
	"repro/core/spike"
	"repro/pipeline"
)

// SpikeParams are the params of one rate-to-spike conversion: one trained
// network at one time budget.
type SpikeParams struct {
	Steps int `toml:"steps"` // T_s, the time steps per sample
	// Calibration is how many images, from the start of the training
	// stream in the split's order, calibrate the thresholds (2,000).
	Calibration int     `toml:"calibration"`
	Percentile  float64 `toml:"percentile"` // of the positive rates, 0.999
	// Seed seeds the input spikes' generator (stream "conv"); the DAG
	// gives the converted network's training seed.
	Seed int64 `toml:"seed"`
	// EvalStride keeps every n-th held-out sample, as the converted train
	// cell's eval_stride did (1 = all).
	EvalStride int `toml:"eval_stride"`
}

// SpikeRecord is the "result" output of a spike cell (canonical JSON).
// Counts are per sample of the held-out tenth.
type SpikeRecord struct {
	Steps      int       `json:"steps"`
	Samples    int       `json:"samples"`
	Correct    int       `json:"correct"`
	Acc        float64   `json:"acc"`
	Thresholds []float64 `json:"thresholds"` // hidden layers 1..L-1
	// InputSpikes and Spikes (per hidden layer) are spikes per sample;
	// FanOut[l] the events charged per spike of layer l (0 = the input).
	InputSpikes float64   `json:"input_spikes"`
	Spikes      []float64 `json:"spikes"`
	FanOut      []float64 `json:"fan_out"`
	Events      float64   `json:"events"`     // synaptic events per sample
	DenseMACs   int       `json:"dense_macs"` // of one dense rate inference over the layer sizes
}

// Spike converts a trained local network (input "network": a train cell
// with keep_network) to spiking inference at T_s = steps (core/spike) and
// evaluates it on the held-out tenth: inputs "data" (the prepare cell:
// raw intensities, labels, standardisation statistics) and "split" (the
// held-out tenth and the training stream in the split's order). Output
// "result" (SpikeRecord).
//
// Thresholds come from the first calibration images of the training
// stream in the split's order, as the reference takes them. [CODE≠PAPER]
// The paper says the thresholds are calibrated on training images; the
// reference's 90% split is grouped by class, so its first 2,000 are all
// zeros on MNIST, and so are ours. The images are standardised from their
// raw intensities with the data cell's statistics, prepare's own formula
// ((v/255 - mean) / std in float32).
//
// The reference draws the input spikes from one generator seeded 0 for
// every network; each network here has its own stream (its training
// seed), so the seeds' conversions are independent draws.
//
// Version history:
//
//   - 1: the conversion of the reference's spike_eval.
var Spike = &pipeline.Stage{
	Name:    "spike",
	Version: 1,
	NewParams: func() any {
		return &SpikeParams{Steps: 8, Calibration: 2000, Percentile: 0.999, EvalStride: 1}
	},
	Run: runSpike,
}

// check rejects params no conversion can run with.
func (p *SpikeParams) check() error {
	switch {
	case p.Steps < 1:
		return fmt.Errorf("spike.steps = %d: the time budget T_s must be >= 1", p.Steps)
	case p.Calibration < 1:
		return fmt.Errorf("spike.calibration = %d: want >= 1 calibration images", p.Calibration)
	case !(p.Percentile > 0 && p.Percentile <= 1):
		return fmt.Errorf("spike.percentile = %g: want a fraction in (0, 1]", p.Percentile)
	case p.EvalStride < 1:
		return fmt.Errorf("spike.eval_stride = %d: want >= 1", p.EvalStride)
	}
	return nil
}

// newSpikeRecord summarises a run's counts k per sample.
func newSpikeRecord(p *SpikeParams, nw *core.Network, conv *spike.Converted, k *spike.Counts, thr []float32) *SpikeRecord {
	n := float64(k.N)
	rec := &SpikeRecord{Steps: p.Steps, Samples: k.N, Correct: k.Correct, Acc: float64(k.Correct) / n,
		InputSpikes: float64(k.InputSpikes) / n, Events: conv.Events(k), DenseMACs: nw.DenseMACs()}
	for l := 1; l < nw.L(); l++ {
		rec.Thresholds = append(rec.Thresholds, float64(thr[l]))
		rec.Spikes = append(rec.Spikes, float64(k.Spikes[l-1])/n)
	}
	for l := range nw.L() {
		rec.FanOut = append(rec.FanOut, conv.FanOut(l))
	}
	return rec
}

func runSpike(ctx context.Context, rc *pipeline.RunContext) error {
	p := rc.Params.(*SpikeParams)
	if err := p.check(); err != nil {
		return err
	}
	nw, err := readNetwork(ctx, rc.Input("network"))
	if err != nil {
		return err
	}
	in, err := readSpikeData(ctx, rc, p, nw)
	if err != nil {
		return err
	}
	data := rc.Input("data")
	thr, err := spike.Thresholds(nw, standardiseRaw(in.calRaw, in.mean, in.std), p.Calibration, p.Percentile)
	if err != nil {
		return err
	}
	conv, err := spike.Convert(nw, in.mean, in.std, thr)
	if err != nil {
		return fmt.Errorf("input %s: %w", data.CellID, err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	fmt.Fprintf(rc.Log, "thresholds %v from %d training images; %d held-out samples at T_s = %d\n", thr[1:nw.L()], p.Calibration, len(in.evalY), p.Steps)
	k := conv.Run(in.evalRaw, in.evalY, p.Steps, core.NewRNG(p.Seed, core.StreamConvert))
	rec := newSpikeRecord(p, nw, conv, k, thr)
	fmt.Fprintf(rc.Log, "accuracy %.4f, %.1f input and %v hidden spikes, %.0f synaptic events per sample\n", rec.Acc, rec.InputSpikes, rec.Spikes, rec.Events)
	return putJSON(rc, "result", rec)
}

// spikeData is what a spike cell reads of its data and split cells: the
// raw calibration images (the first images of the training stream), the
// held-out images and labels it is evaluated on, and the standardisation.
type spikeData struct {
	calRaw, evalRaw []uint8
	evalY           []int32
	mean, std       []float32
}

// readSpikeData reads and checks a spike cell's data and split inputs
// against the network nw.
func readSpikeData(ctx context.Context, rc *pipeline.RunContext, p *SpikeParams, nw *core.Network) (*spikeData, error) {
	data, split := rc.Input("data"), rc.Input("split")
	raw, rawShape, err := readTensor(ctx, data, "train_raw", artifacts.Uint8s)
	if err != nil {
		return nil, err
	}
	y, _, err := readTensor(ctx, data, "train_y", artifacts.Int32s)
	if err != nil {
		return nil, err
	}
	mean, _, err := readTensor(ctx, data, "mean", artifacts.Float32s)
	if err != nil {
		return nil, err
	}
	std, _, err := readTensor(ctx, data, "std", artifacts.Float32s)
	if err != nil {
		return nil, err
	}
	held, _, err := readTensor(ctx, split, "heldout_idx", artifacts.Int32s)
	if err != nil {
		return nil, err
	}
	stream, _, err := readTensor(ctx, split, "stream_idx", artifacts.Int32s)
	if err != nil {
		return nil, err
	}
	d := nw.Sizes[0]
	if len(rawShape) != 2 || rawShape[1] != d || rawShape[0] != len(y) || len(mean) != d || len(std) != d {
		return nil, fmt.Errorf("input %s: raw intensities %v, %d labels and %d/%d statistics do not fit a network of %d inputs (spike conversion needs one raw intensity per input)",
			data.CellID, rawShape, len(y), len(mean), len(std), d)
	}
	if len(stream) < p.Calibration {
		return nil, fmt.Errorf("input %s: %d training-stream samples, fewer than spike.calibration = %d", split.CellID, len(stream), p.Calibration)
	}
	rows := func(idx []int32, stride int) ([]uint8, []int32, error) {
		var px []uint8
		var ys []int32
		for t := 0; t < len(idx); t += stride {
			i := int(idx[t])
			if i < 0 || i >= len(y) {
				return nil, nil, fmt.Errorf("input %s: index %d outside [0, %d)", split.CellID, i, len(y))
			}
			px = append(px, raw[i*d:(i+1)*d]...)
			ys = append(ys, y[i])
		}
		return px, ys, nil
	}
	calRaw, _, err := rows(stream[:p.Calibration], 1)
	if err != nil {
		return nil, err
	}
	evalRaw, evalY, err := rows(held, p.EvalStride)
	if err != nil {
		return nil, err
	}
	if len(evalY) == 0 {
		return nil, fmt.Errorf("input %s: no held-out samples", split.CellID)
	}
	return &spikeData{calRaw: calRaw, evalRaw: evalRaw, evalY: evalY, mean: mean, std: std}, nil
}

// standardiseRaw returns the standardised inputs of raw MNIST pixels
// (row-major, d = len(mean) per row), prepare's formula in float32: (v/255
// - mean) / std, so the result is bit for bit the data cell's train_x.
func standardiseRaw(raw []uint8, mean, std []float32) []float32 {
	d := len(mean)
	x := make([]float32, len(raw))
	for i, v := range raw {
		j := i % d
		x[i] = (float32(v)/255 - mean[j]) / std[j]
	}
	return x
}

// readTensor reads and decodes one tensor output of an input, naming the
// input cell and output in errors.
func readTensor[T any](ctx context.Context, in *pipeline.InputRef, name string, decode func([]byte) ([]T, []int, error)) ([]T, []int, error) {
	b, err := in.Read(ctx, name)
	if err != nil {
		return nil, nil, fmt.Errorf("input %s: %s: %w", in.CellID, name, err)
	}
	v, shape, err := decode(b)
	if err != nil {
		return nil, nil, fmt.Errorf("input %s: %s: %w", in.CellID, name, err)
	}
	return v, shape, nil
}

// putJSON stores v as indented JSON with a final newline.
func putJSON(rc *pipeline.RunContext, name string, v any) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	rc.Put(name, append(b, '\n'))
	return nil
}
