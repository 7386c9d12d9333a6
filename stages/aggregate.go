package stages

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"

	"repro/core"
	"repro/experiments/cellid"
	"repro/pipeline"
)

// AggregateParams lay out one table for the aggregate stage. Per-cell
// slices are row-major (len(Rows) x len(Protocols)).
type AggregateParams struct {
	Table     string   `toml:"table"`
	Rows      []string `toml:"rows"`      // experiment name of each row
	Protocols []string `toml:"protocols"` // protocol of each column
	// DefaultSeeds is the profile's number of seeds (a row may use fewer).
	DefaultSeeds int `toml:"default_seeds"`
	// Status is "run", "n/a" (rendered ---), "empty" (blank by layout) or
	// "not run: <why>" (blank).
	Status []string `toml:"status"`
	// Seeds are the cell's expected seeds, space-separated; its input
	// "rXXcYsZ" is seed index Z of row XX, column Y.
	Seeds []string `toml:"seeds"`
	// Cells are the train cell ID prefixes (…/seed<s> appended).
	Cells []string `toml:"cells"`
	// Metrics is each cell's metric (stages/metrics.go); absent (every
	// table declared before metrics existed), every cell's is the final
	// accuracy.
	Metrics []string `toml:"metrics,omitzero"`
	// RelativeTo gives, per cell, the index (row-major) of the cell whose
	// mean it is divided by, or -1: a metric as a fraction of a reference
	// row's (syn-ops relative to the dense MLP's). Absent, none is.
	RelativeTo []int `toml:"relative_to,omitzero"`

	CompareIDs      []string `toml:"compare_ids"`
	CompareA        []string `toml:"compare_a"`
	CompareB        []string `toml:"compare_b"`
	CompareProtocol []string `toml:"compare_protocol"`
	Resamples       int      `toml:"resamples"`
	BootstrapSeed   int64    `toml:"bootstrap_seed"`
}

// Stat is a mean and sample standard deviation (ddof 1; 0 when N < 2).
type Stat struct {
	Mean float64 `json:"mean"`
	SD   float64 `json:"sd"`
}

// AggCell is one number of a table: the seeds behind it and their summary.
type AggCell struct {
	ID         string `json:"id"` // <table>/<experiment>/<protocol>
	Experiment string `json:"experiment"`
	Protocol   string `json:"protocol"`
	// Status is "ok", "n/a", "not run: <why>", or "missing: <why>" when no
	// expected seed has a result.
	Status   string  `json:"status"`
	N        int     `json:"n"`
	Expected int     `json:"expected"`
	Seeds    []int64 `json:"seeds,omitempty"`
	Missing  []int64 `json:"missing,omitempty"`
	// Acc is the final accuracy x100; Forgetting x100; Replay the replay
	// micro-batches applied.
	Acc        Stat `json:"acc"`
	Forgetting Stat `json:"forgetting"`
	Replay     Stat `json:"replay_updates"`
	// SynOps is the fraction of the dense MLP's synaptic operations per
	// forward pass, over the seeds whose result records it (nil when none
	// does, so aggregates of older records keep their bytes).
	SynOps *Stat `json:"synops_frac,omitempty"`
	// Metric is what Acc and Values hold when it is not the final accuracy
	// (stages/metrics.go).
	Metric     string    `json:"metric,omitempty"`
	Values     []float64 `json:"values,omitempty"` // per seed, final accuracy x100
	TrainCells []string  `json:"train_cells,omitempty"`
	Results    []string  `json:"result_digests,omitempty"` // sha256 of each seed's result
}

// Comparison is a seed-paired difference a - b of final accuracy x100.
type Comparison struct {
	ID       string  `json:"id"` // <table>/compare/<id>
	A        string  `json:"a"`
	B        string  `json:"b"`
	Protocol string  `json:"protocol"`
	N        int     `json:"n"` // seeds both have
	Seeds    []int64 `json:"seeds,omitempty"`
	Diff     float64 `json:"diff"`
	Lo       float64 `json:"lo"`
	Hi       float64 `json:"hi"`
	Status   string  `json:"status"` // "ok" or why not computed
}

// AggregateRecord is the "aggregate" output of an aggregate cell.
type AggregateRecord struct {
	Table        string       `json:"table"`
	DefaultSeeds int          `json:"default_seeds"`
	Protocols    []string     `json:"protocols"`
	Rows         [][]AggCell  `json:"rows"`
	Comparisons  []Comparison `json:"comparisons"`
	Resamples    int          `json:"resamples"`
}

// Aggregate summarises one table's train cells (inputs "rXXcYsZ", see
// AggregateParams) into "aggregate", canonical JSON (AggregateRecord).
//
// Version history:
//
//   - 1: mean, s.d. and seed-paired bootstrap intervals per table cell.
var Aggregate = &pipeline.Stage{
	Name:    "aggregate",
	Version: 1,
	NewParams: func() any {
		return &AggregateParams{Resamples: BootstrapResamples, BootstrapSeed: BootstrapSeed}
	},
	Run: runAggregate,
}

func runAggregate(ctx context.Context, rc *pipeline.RunContext) error {
	p := rc.Params.(*AggregateParams)
	nc := len(p.Protocols)
	if len(p.Status) != len(p.Rows)*nc || len(p.Seeds) != len(p.Status) || len(p.Cells) != len(p.Status) || p.Metrics != nil && len(p.Metrics) != len(p.Status) {
		return fmt.Errorf("aggregate.status, seeds, cells, metrics: want %d entries each", len(p.Rows)*nc)
	}
	rec := &AggregateRecord{Table: p.Table, DefaultSeeds: p.DefaultSeeds, Protocols: p.Protocols, Resamples: p.Resamples}
	for r, exp := range p.Rows {
		var row []AggCell
		for c, protocol := range p.Protocols {
			i := r*nc + c
			cell := AggCell{ID: p.Table + "/" + exp + "/" + protocol, Experiment: exp, Protocol: protocol, Status: p.Status[i]}
			if p.Metrics != nil && p.Metrics[i] != "acc" {
				cell.Metric = p.Metrics[i]
			}
			if cell.Status == "run" {
				if err := fillCell(ctx, rc, &cell, func(s int) string { return cellid.Input{Row: r, Col: c, Seed: s}.String() }, p.Seeds[i], p.Cells[i]); err != nil {
					return fmt.Errorf("%s: %w", cell.ID, err)
				}
			}
			row = append(row, cell)
		}
		rec.Rows = append(rec.Rows, row)
	}
	if err := relativeCells(rec, p.RelativeTo); err != nil {
		return err
	}
	rng := core.NewRNG(p.BootstrapSeed, core.StreamBootstrap)
	for i, id := range p.CompareIDs {
		cmp := Comparison{ID: p.Table + "/compare/" + id, A: p.CompareA[i], B: p.CompareB[i], Protocol: p.CompareProtocol[i]}
		a, b := rec.find(cmp.A, cmp.Protocol), rec.find(cmp.B, cmp.Protocol)
		switch {
		case a == nil || b == nil:
			cmp.Status = "no such cell"
		case a.N == 0 || b.N == 0:
			cmp.Status = "not computed: a cell has no seeds"
		default:
			diffs, seeds := pairedDiffs(a, b)
			cmp.Seeds, cmp.N = seeds, len(seeds)
			if cmp.N == 0 {
				cmp.Status = "not computed: no common seed"
				break
			}
			cmp.Diff, cmp.Lo, cmp.Hi = PairedBootstrap(diffs, p.Resamples, rng)
			cmp.Status = "ok"
		}
		rec.Comparisons = append(rec.Comparisons, cmp)
	}
	b, err := json.MarshalIndent(rec, "", " ")
	if err != nil {
		return err
	}
	rc.Put("aggregate", append(b, '\n'))
	return nil
}

// relativeCells divides each cell with a reference (rel[i] >= 0) by the
// reference cell's mean: every seed's value, then the mean and s.d. of the
// ratios (the reference's own spread is not propagated). The reference's
// means are taken before any division, so a reference may be relative to
// itself (its mean becomes 1). A cell whose reference has no result
// becomes missing, with the reason.
func relativeCells(rec *AggregateRecord, rel []int) error {
	if rel == nil {
		return nil
	}
	nc := len(rec.Protocols)
	if len(rel) != len(rec.Rows)*nc {
		return fmt.Errorf("aggregate.relative_to: %d entries, want %d", len(rel), len(rec.Rows)*nc)
	}
	means := make([]float64, len(rel))
	for i := range rel {
		means[i] = rec.Rows[i/nc][i%nc].Acc.Mean
	}
	for i, j := range rel {
		if j < 0 {
			continue
		}
		if j >= len(rel) {
			return fmt.Errorf("aggregate.relative_to[%d]: %d is not a cell", i, j)
		}
		cell, ref := &rec.Rows[i/nc][i%nc], &rec.Rows[j/nc][j%nc]
		cell.Metric = cmp.Or(cell.Metric, "acc") + " / " + ref.ID
		if cell.Status != "ok" {
			continue
		}
		if ref.Status != "ok" || means[j] == 0 {
			cell.Status = "missing: the reference " + ref.ID + " has no result"
			continue
		}
		for k := range cell.Values {
			cell.Values[k] /= means[j]
		}
		cell.Acc = MeanSD(cell.Values)
	}
	return nil
}

func (rec *AggregateRecord) find(exp, protocol string) *AggCell {
	for r := range rec.Rows {
		for c := range rec.Rows[r] {
			if x := &rec.Rows[r][c]; x.Experiment == exp && x.Protocol == protocol {
				return x
			}
		}
	}
	return nil
}

// Cell returns the cell with the given number ID, or nil.
func (rec *AggregateRecord) Cell(id string) *AggCell {
	for r := range rec.Rows {
		for c := range rec.Rows[r] {
			if rec.Rows[r][c].ID == id {
				return &rec.Rows[r][c]
			}
		}
	}
	return nil
}

// fillCell reads the seeds of one table (or figure) cell, seed index s
// from input inputOf(s). A seed the cell has no input
// for (a failed or missing train cell, in a degraded aggregate) is listed in
// Missing, never dropped silently.
func fillCell(ctx context.Context, rc *pipeline.RunContext, cell *AggCell, inputOf func(seedIndex int) string, seedList, prefix string) error {
	var acc, fgt, rep, syn []float64
	for s, f := range strings.Fields(seedList) {
		seed, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return fmt.Errorf("seed %q: %w", f, err)
		}
		cell.Expected++
		name := inputOf(s)
		if !rc.HasInput(name) {
			cell.Missing = append(cell.Missing, seed)
			continue
		}
		in := rc.Input(name)
		b, err := in.Read(ctx, "result")
		if err != nil {
			return fmt.Errorf("input %s: %w", name, err)
		}
		metric := cmp.Or(cell.Metric, "acc")
		// A train cell's record, or for an energy metric an energy cell's
		// (no forgetting or replay to report).
		energy := IsEnergyMetric(metric)
		var tr TrainRecord
		var er EnergyRecord
		var recSeed int64
		var v float64
		if energy {
			if err := json.Unmarshal(b, &er); err != nil || len(er.Spike) == 0 {
				return fmt.Errorf("input %s: result: not an energy record (%v)", name, err)
			}
			recSeed = er.Seed
		} else {
			if err := json.Unmarshal(b, &tr); err != nil || tr.Result == nil {
				return fmt.Errorf("input %s: result: not a train record (%v)", name, err)
			}
			recSeed = tr.Seed
		}
		if recSeed != seed {
			return fmt.Errorf("input %s: result of seed %d, want seed %d", name, recSeed, seed)
		}
		sum := sha256.Sum256(b)
		cell.Seeds = append(cell.Seeds, seed)
		cell.TrainCells = append(cell.TrainCells, cellid.WithSeed(prefix, seed))
		cell.Results = append(cell.Results, hex.EncodeToString(sum[:]))
		if energy {
			v, err = EnergyMetric(&er, metric)
		} else {
			v, err = MetricValue(tr.Result, metric)
		}
		if err != nil {
			return fmt.Errorf("input %s: %w", name, err)
		}
		acc = append(acc, v)
		if energy {
			continue
		}
		fgt = append(fgt, 100*tr.Result.Forgetting)
		rep = append(rep, float64(tr.Result.ReplayUpdates))
		if f := tr.Result.SynOpsFrac; f > 0 {
			syn = append(syn, f)
		}
	}
	cell.N = len(acc)
	cell.Values = acc
	cell.Acc, cell.Forgetting, cell.Replay = MeanSD(acc), MeanSD(fgt), MeanSD(rep)
	if len(syn) > 0 {
		s := MeanSD(syn)
		cell.SynOps = &s
	}
	cell.Status = "ok"
	if cell.N == 0 {
		cell.Status = "missing: no seed has a result"
	}
	return nil
}

// MeanSD returns the mean and the sample standard deviation (ddof 1) of x;
// SD is 0 when len(x) < 2 and both are 0 for an empty x.
func MeanSD(x []float64) Stat {
	switch len(x) {
	case 0:
		return Stat{}
	case 1:
		return Stat{Mean: x[0]}
	}
	m, s := stat.MeanStdDev(x, nil)
	return Stat{Mean: m, SD: s}
}

// pairedDiffs returns a.Values - b.Values over the seeds both cells have,
// in a's seed order.
func pairedDiffs(a, b *AggCell) ([]float64, []int64) {
	var d []float64
	var seeds []int64
	for i, s := range a.Seeds {
		if j := slices.Index(b.Seeds, s); j >= 0 {
			d = append(d, a.Values[i]-b.Values[j])
			seeds = append(seeds, s)
		}
	}
	return d, seeds
}

// PairedBootstrap returns the mean of the paired differences d and the
// percentile 95% interval of the mean over resamples bootstrap resamples of
// d (with replacement, len(d) draws each) from rng. It panics if d is empty.
func PairedBootstrap(d []float64, resamples int, rng *core.RNG) (mean, lo, hi float64) {
	if len(d) == 0 {
		panic("stages: PairedBootstrap of no differences")
	}
	mean = stat.Mean(d, nil)
	if resamples < 1 {
		return mean, math.NaN(), math.NaN()
	}
	means := make([]float64, resamples)
	for i := range means {
		s := 0.0
		for range d {
			s += d[rng.IntN(len(d))]
		}
		means[i] = s / float64(len(d))
	}
	slices.Sort(means)
	lo = stat.Quantile(0.025, stat.Empirical, means, nil)
	hi = stat.Quantile(0.975, stat.Empirical, means, nil)
	return mean, lo, hi
}
