package numbers

import (
	"slices"

	"gonum.org/v1/gonum/stat"
)

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
	// Status is StatusOK, StatusNA, StatusEmpty, StatusNotRun, or
	// StatusMissing when no expected seed has a result.
	Status   Status  `json:"status"`
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
	ID       string        `json:"id"` // <table>/compare/<id>
	A        string        `json:"a"`
	B        string        `json:"b"`
	Protocol string        `json:"protocol"`
	N        int           `json:"n"` // seeds both have
	Seeds    []int64       `json:"seeds,omitempty"`
	Diff     float64       `json:"diff"`
	Lo       float64       `json:"lo"`
	Hi       float64       `json:"hi"`
	Status   CompareStatus `json:"status"` // CompareOK or why not computed
}

// CompareStatus is a comparison's status: CompareOK, or the sentence that
// says why it was not computed.
type CompareStatus string

// CompareOK is the status of a comparison computed over its common seeds.
const CompareOK CompareStatus = "ok"

// OK says whether the comparison was computed.
func (s CompareStatus) OK() bool { return s == CompareOK }

// AggregateRecord is the "aggregate" output of an aggregate cell.
type AggregateRecord struct {
	Table        string       `json:"table"`
	DefaultSeeds int          `json:"default_seeds"`
	Protocols    []string     `json:"protocols"`
	Rows         [][]AggCell  `json:"rows"`
	Comparisons  []Comparison `json:"comparisons"`
	Resamples    int          `json:"resamples"`
}

// Find returns the cell of experiment exp in column protocol, or nil.
func (rec *AggregateRecord) Find(exp, protocol string) *AggCell {
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

// PairedDiffs returns a.Values - b.Values over the seeds both cells have,
// in a's seed order.
func PairedDiffs(a, b *AggCell) ([]float64, []int64) {
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
