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

	"repro/cellid"
	"repro/core"
	"repro/numbers"
	"repro/pipeline"
)

// The paper's tables are three stages on top of the train cells:
//
// aggregate/<table> (Aggregate): inputs "rXXcYsZ", the train cell of seed
// index Z in row XX, column Y; output "aggregate", canonical JSON
// (numbers.AggregateRecord): per table cell the seeds, their final
// accuracy x100, mean and sample s.d., forgetting and replay counts, the
// missing seeds and the result digests; and the seed-paired bootstrap
// intervals of the differences the paper states.
//
// render/<table> (Render): input "aggregate"; outputs "tex" (the booktabs
// table, one comment per row naming its number IDs) and "ids" (JSON
// numbers.Sidecar: every number with its row, column and provenance).
// `repro run` copies them to paper/tables/<table>.tex and .ids.json.
//
// reproduction (Reproduction): one input per table, named by the table;
// outputs "tex" (paper/reproduction.tex) and "report" (JSON judge.Report):
// every number against the paper's published value (paper/published.toml).
//
// Which cells a table reads, and how they are named, is decided by package
// experiments (the [[table]] declarations of pipeline.toml).

// Bootstrap settings of every comparison: the 10,000 resamples and a
// fixed seed, so the intervals are reproducible bit for bit.
const (
	BootstrapResamples = 10000
	BootstrapSeed      = 20260101
)

// AggregateParams lay out one table for the aggregate stage.
type AggregateParams struct {
	Table     string   `toml:"table"`
	Rows      []string `toml:"rows"`      // ID of each row (its experiment, by default)
	Protocols []string `toml:"protocols"` // ID of each column (its protocol, by default)
	// DefaultSeeds is the profile's number of seeds (a row may use fewer).
	DefaultSeeds int `toml:"default_seeds"`
	// Cells are the table's cells, row-major (len(Rows) x len(Protocols)).
	Cells []TableCell `toml:"cells"`
	// Compares are the seed-paired differences the paper states.
	Compares      []Compare `toml:"compares,omitzero"`
	Resamples     int       `toml:"resamples"`
	BootstrapSeed int64     `toml:"bootstrap_seed"`
}

// TableCell is one cell of a table as the aggregate stage reads it.
type TableCell struct {
	// Status is StatusRun, StatusNA (rendered ---), StatusEmpty (blank by
	// layout) or StatusNotRun (blank); its text enters the cell's key.
	Status numbers.Status `toml:"status"`
	// Seeds are the cell's expected seeds, space-separated; its input
	// "rXXcYsZ" is seed index Z of row XX, column Y.
	Seeds string `toml:"seeds,omitzero"`
	// Cell is the train (or energy) cell ID prefix (…/seed<s> appended).
	Cell string `toml:"cell,omitzero"`
	// Metric is the cell's metric (stages/metrics.go); "" is the final
	// accuracy.
	Metric string `toml:"metric,omitzero"`
	// RelativeTo names the row whose mean in this column divides the
	// cell's: a metric as a fraction of a reference row's (syn-ops
	// relative to the dense MLP's). "": none.
	RelativeTo string `toml:"relative_to,omitzero"`
}

// Compare names a seed-paired difference a - b of two rows' cells in one
// column.
type Compare struct {
	ID       string `toml:"id"`
	A        string `toml:"a"`
	B        string `toml:"b"`
	Protocol string `toml:"protocol"`
}

// Aggregate summarises one table's train cells (inputs "rXXcYsZ", see
// AggregateParams) into "aggregate", canonical JSON (AggregateRecord).
//
// Version history:
//
//   - 1: mean, s.d. and seed-paired bootstrap intervals per table cell.
//   - 2: params are lists of records (cells, compares) instead of parallel
//     slices; the outputs are byte-identical.
var Aggregate = &pipeline.Stage{
	Name:    "aggregate",
	Version: 2,
	NewParams: func() any {
		return &AggregateParams{Resamples: BootstrapResamples, BootstrapSeed: BootstrapSeed}
	},
	Run: runAggregate,
}

func runAggregate(ctx context.Context, rc *pipeline.RunContext) error {
	p := rc.Params.(*AggregateParams)
	if len(p.Cells) != len(p.Rows)*len(p.Protocols) {
		return fmt.Errorf("aggregate.cells: %d cells, want %d rows x %d columns", len(p.Cells), len(p.Rows), len(p.Protocols))
	}
	rec := &numbers.AggregateRecord{Table: p.Table, DefaultSeeds: p.DefaultSeeds, Protocols: p.Protocols, Resamples: p.Resamples}
	for r, exp := range p.Rows {
		var row []numbers.AggCell
		for c, protocol := range p.Protocols {
			tc := p.Cells[r*len(p.Protocols)+c]
			cell := numbers.AggCell{ID: p.Table + "/" + exp + "/" + protocol, Experiment: exp, Protocol: protocol, Status: tc.Status}
			if tc.Metric != "acc" {
				cell.Metric = tc.Metric
			}
			if cell.Status.Kind == numbers.StatusRun {
				if err := fillCell(ctx, rc, &cell, func(s int) string { return cellid.Input{Row: r, Col: c, Seed: s}.String() }, tc.Seeds, tc.Cell); err != nil {
					return fmt.Errorf("%s: %w", cell.ID, err)
				}
			}
			row = append(row, cell)
		}
		rec.Rows = append(rec.Rows, row)
	}
	if err := relativeCells(rec, p); err != nil {
		return err
	}
	rng := core.NewRNG(p.BootstrapSeed, core.StreamBootstrap)
	for _, c := range p.Compares {
		rec.Comparisons = append(rec.Comparisons, compare(rec, p.Table, c, p.Resamples, rng))
	}
	b, err := json.MarshalIndent(rec, "", " ")
	if err != nil {
		return err
	}
	rc.Put("aggregate", append(b, '\n'))
	return nil
}

// compare computes the seed-paired difference c of rec's cells, its
// bootstrap interval from resamples draws of rng, or why it is not
// computed.
func compare(rec *numbers.AggregateRecord, table string, c Compare, resamples int, rng *core.RNG) numbers.Comparison {
	out := numbers.Comparison{ID: table + "/compare/" + c.ID, A: c.A, B: c.B, Protocol: c.Protocol}
	a, b := rec.Find(out.A, out.Protocol), rec.Find(out.B, out.Protocol)
	switch {
	case a == nil || b == nil:
		out.Status = "no such cell"
	case a.N == 0 || b.N == 0:
		out.Status = "not computed: a cell has no seeds"
	default:
		diffs, seeds := numbers.PairedDiffs(a, b)
		out.Seeds, out.N = seeds, len(seeds)
		if out.N == 0 {
			out.Status = "not computed: no common seed"
			break
		}
		out.Diff, out.Lo, out.Hi = PairedBootstrap(diffs, resamples, rng)
		out.Status = numbers.CompareOK
	}
	return out
}

// relativeCells divides each cell with a reference row (RelativeTo) by
// the mean of that row's cell in the same column: every seed's value, then
// the mean and s.d. of the ratios (the reference's own spread is not
// propagated). The reference's means are taken before any division, so a
// reference may be relative to itself (its mean becomes 1). A cell whose
// reference has no result becomes missing, with the reason.
func relativeCells(rec *numbers.AggregateRecord, p *AggregateParams) error {
	nc := len(rec.Protocols)
	means := make([]float64, len(p.Cells))
	for i := range p.Cells {
		means[i] = rec.Rows[i/nc][i%nc].Acc.Mean
	}
	for i, tc := range p.Cells {
		if tc.RelativeTo == "" {
			continue
		}
		r := slices.Index(p.Rows, tc.RelativeTo)
		if r < 0 {
			return fmt.Errorf("aggregate.cells[%d].relative_to: %q is not a row", i, tc.RelativeTo)
		}
		j := r*nc + i%nc
		cell, ref := &rec.Rows[i/nc][i%nc], &rec.Rows[j/nc][j%nc]
		cell.Metric = cmp.Or(cell.Metric, "acc") + " / " + ref.ID
		if cell.Status.Kind != numbers.StatusOK {
			continue
		}
		if ref.Status.Kind != numbers.StatusOK || means[j] == 0 {
			cell.Status = numbers.Missing("the reference " + ref.ID + " has no result")
			continue
		}
		for k := range cell.Values {
			cell.Values[k] /= means[j]
		}
		cell.Acc = numbers.MeanSD(cell.Values)
	}
	return nil
}

// fillCell reads the seeds of one table (or figure) cell, seed index s
// from input inputOf(s). A seed the cell has no input
// for (a failed or missing train cell, in a degraded aggregate) is listed in
// Missing, never dropped silently.
func fillCell(ctx context.Context, rc *pipeline.RunContext, cell *numbers.AggCell, inputOf func(seedIndex int) string, seedList, prefix string) error {
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
	cell.Acc, cell.Forgetting, cell.Replay = numbers.MeanSD(acc), numbers.MeanSD(fgt), numbers.MeanSD(rep)
	if len(syn) > 0 {
		s := numbers.MeanSD(syn)
		cell.SynOps = &s
	}
	cell.Status = numbers.Status{Kind: numbers.StatusOK}
	if cell.N == 0 {
		cell.Status = numbers.Missing("no seed has a result")
	}
	return nil
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
