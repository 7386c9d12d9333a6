package stages

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"repro/pipeline"
)

// EnergyParams are the params of an energy cell: the arithmetic-energy
// proxy's prices (Horowitz 2014, 45 nm, FP32).
type EnergyParams struct {
	// ACPJ is the energy of one synaptic event of spiking inference (one
	// FP32 accumulate), 0.9 pJ.
	ACPJ float64 `toml:"ac_pj"`
	// MACPJ is the energy of one multiply-accumulate of rate inference,
	// 4.6 pJ (3.7 pJ FP32 multiply + 0.9 pJ FP32 add).
	MACPJ float64 `toml:"mac_pj"`
}

// EnergyRecord is the "result" output of an energy cell (canonical JSON):
// one network's rate references and its spiking conversions, accuracies
// as fractions, energies in nJ per sample.
type EnergyRecord struct {
	Seed       int64   `json:"seed"` // the network's training seed
	RateAcc    float64 `json:"rate_acc"`
	RateSynOps float64 `json:"rate_synops"` // the rate network's synaptic operations per sample
	DenseMACs  int     `json:"dense_macs"`
	// DenseNJ prices every MAC of a dense rate inference; EventNJ only
	// the synaptic operations of non-zero presynaptic rates.
	DenseNJ float64       `json:"dense_nj"`
	EventNJ float64       `json:"event_nj"`
	Spike   []EnergySpike `json:"spike"`
}

// EnergySpike is one time budget's spiking inference and its ratios to the
// two rate references.
type EnergySpike struct {
	Steps   int     `json:"steps"`
	Acc     float64 `json:"acc"`
	Events  float64 `json:"events"`
	NJ      float64 `json:"nj"`
	VsDense float64 `json:"vs_dense"` // DenseNJ / NJ (0 without events)
	VsEvent float64 `json:"vs_event"` // EventNJ / NJ (0 without events)
}

// EnergyInput names the energy cell's input of the spike cell at T_s.
func EnergyInput(steps int) string { return "spike_t" + strconv.Itoa(steps) }

// Energy prices one trained network's inference (input "rate": its train
// cell; inputs "spike_t<T>": its spike cells, one per time budget) and
// writes "result" (EnergyRecord):
//
//   - spiking: synaptic events per sample x ac_pj;
//   - dense rate inference: the MACs of the dense layer sizes x mac_pj
//     (784x512 + 512x256 + 256x10 = 535,040 MACs, 2,461 nJ, whatever the
//     connectivity, as the reference counts them);
//   - event-driven rate inference: the rate network's synaptic operations
//     (the train record's SynOps: non-zero presynaptic values times the
//     mean fan-out, on the first 3,000 evaluation samples) x mac_pj.
//
// Version history:
//
//   - 1: the reference's val_spike proxy.
//   - 2: the record carries the network's training seed, which a table
//     checks against the seed it expects.
var Energy = &pipeline.Stage{
	Name:      "energy",
	Version:   2,
	NewParams: func() any { return &EnergyParams{ACPJ: 0.9, MACPJ: 4.6} },
	Run:       runEnergy,
}

func runEnergy(ctx context.Context, rc *pipeline.RunContext) error {
	p := rc.Params.(*EnergyParams)
	if !(p.ACPJ > 0) || !(p.MACPJ > 0) || math.IsInf(p.ACPJ, 0) || math.IsInf(p.MACPJ, 0) {
		return fmt.Errorf("energy.ac_pj = %g and energy.mac_pj = %g: want positive prices", p.ACPJ, p.MACPJ)
	}
	rate := rc.Input("rate")
	b, err := rate.Read(ctx, "result")
	if err != nil {
		return fmt.Errorf("input %s: result: %w", rate.CellID, err)
	}
	var tr TrainRecord
	if err := json.Unmarshal(b, &tr); err != nil || tr.Result == nil {
		return fmt.Errorf("input %s: result: not a train record (%v)", rate.CellID, err)
	}
	rec := &EnergyRecord{Seed: tr.Seed, RateAcc: tr.Result.FinalAcc, RateSynOps: tr.Result.SynOps}
	for _, name := range rc.InputNames() {
		if !strings.HasPrefix(name, "spike_t") {
			continue
		}
		in := rc.Input(name)
		b, err := in.Read(ctx, "result")
		if err != nil {
			return fmt.Errorf("input %s: result: %w", in.CellID, err)
		}
		var sr SpikeRecord
		if err := json.Unmarshal(b, &sr); err != nil {
			return fmt.Errorf("input %s: result: %w", in.CellID, err)
		}
		if name != EnergyInput(sr.Steps) {
			return fmt.Errorf("input %s: a spike record of T_s = %d bound as %s", in.CellID, sr.Steps, name)
		}
		if rec.DenseMACs != 0 && sr.DenseMACs != rec.DenseMACs {
			return fmt.Errorf("input %s: %d dense MACs, another spike input has %d: not the same network", in.CellID, sr.DenseMACs, rec.DenseMACs)
		}
		rec.DenseMACs = sr.DenseMACs
		rec.Spike = append(rec.Spike, EnergySpike{Steps: sr.Steps, Acc: sr.Acc, Events: sr.Events, NJ: sr.Events * p.ACPJ / 1e3})
	}
	if len(rec.Spike) == 0 {
		return fmt.Errorf("no spike_t<T> input to price")
	}
	slices.SortFunc(rec.Spike, func(a, b EnergySpike) int { return a.Steps - b.Steps })
	rec.DenseNJ = float64(rec.DenseMACs) * p.MACPJ / 1e3
	rec.EventNJ = rec.RateSynOps * p.MACPJ / 1e3
	for i := range rec.Spike {
		s := &rec.Spike[i]
		if s.NJ > 0 { // no event at all leaves the ratios 0
			s.VsDense, s.VsEvent = rec.DenseNJ/s.NJ, rec.EventNJ/s.NJ
		}
		fmt.Fprintf(rc.Log, "T_s = %d: %.2f%%, %.1f nJ (%.1fx less than dense rate inference, %.1fx less than event-driven)\n",
			s.Steps, 100*s.Acc, s.NJ, s.VsDense, s.VsEvent)
	}
	fmt.Fprintf(rc.Log, "rate network: %.2f%%, dense %.0f nJ (%d MACs), event-driven %.0f nJ (%.0f synaptic operations)\n",
		100*rec.RateAcc, rec.DenseNJ, rec.DenseMACs, rec.EventNJ, rec.RateSynOps)
	return putJSON(rc, "result", rec)
}

// A table cell reads an energy record through an energy metric,
// "energy.<quantity>@<inference>":
//
//	quantity   acc (accuracy x100), nj (nJ per sample), vs_dense and
//	           vs_event (how many times less than dense or event-driven
//	           rate inference; spiking only)
//	inference  spike<T> (spiking at T_s = T), dense or event (the rate
//	           network, priced densely or by its synaptic operations)
//
// A table declares the quantity as its metric and the inference as the
// row's or column's inference (experiments joins them).
const energyPrefix = "energy."

// IsEnergyMetric reports whether metric names a number of an energy record.
func IsEnergyMetric(metric string) bool { return strings.HasPrefix(metric, energyPrefix) }

// EnergyMetric returns metric (IsEnergyMetric) of an energy record.
func EnergyMetric(rec *EnergyRecord, metric string) (float64, error) {
	q, inf, err := parseEnergyMetric(metric)
	if err != nil {
		return 0, err
	}
	if inf == "dense" || inf == "event" {
		nj := rec.DenseNJ
		if inf == "event" {
			nj = rec.EventNJ
		}
		switch q {
		case "acc":
			return 100 * rec.RateAcc, nil
		case "nj":
			return nj, nil
		}
		return 0, fmt.Errorf("metric %q: %s is a ratio of spiking inference", metric, q)
	}
	steps, _ := strconv.Atoi(strings.TrimPrefix(inf, "spike"))
	for _, s := range rec.Spike {
		if s.Steps != steps {
			continue
		}
		switch q {
		case "acc":
			return 100 * s.Acc, nil
		case "nj":
			return s.NJ, nil
		case "vs_dense":
			return s.VsDense, nil
		}
		return s.VsEvent, nil
	}
	return 0, fmt.Errorf("metric %q: the record has no spiking inference at T_s = %d", metric, steps)
}

// ValidEnergyQuantity checks the quantity of an energy metric as a table
// declares it ("energy.nj", no inference).
func ValidEnergyQuantity(metric string) error {
	_, _, err := parseEnergyMetric(metric + "@dense")
	return err
}

// ValidInference checks an inference name (spike<T> with T >= 1, dense or
// event).
func ValidInference(inf string) error {
	_, _, err := parseEnergyMetric("energy.acc@" + inf)
	return err
}

func parseEnergyMetric(metric string) (quantity, inference string, err error) {
	rest, ok := strings.CutPrefix(metric, energyPrefix)
	q, inf, ok2 := strings.Cut(rest, "@")
	if !ok || !ok2 {
		return "", "", fmt.Errorf("metric %q: want energy.<quantity>@<inference>", metric)
	}
	switch q {
	case "acc", "nj", "vs_dense", "vs_event":
	default:
		return "", "", fmt.Errorf("metric %q: quantity %q: want acc, nj, vs_dense or vs_event", metric, q)
	}
	if inf != "dense" && inf != "event" {
		t, err := strconv.Atoi(strings.TrimPrefix(inf, "spike"))
		if !strings.HasPrefix(inf, "spike") || err != nil || t < 1 || "spike"+strconv.Itoa(t) != inf {
			return "", "", fmt.Errorf("metric %q: inference %q: want spike<T_s>, dense or event", metric, inf)
		}
	}
	return q, inf, nil
}
