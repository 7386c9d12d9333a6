package stages

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"repro/cellid"
	"repro/core"
	"repro/numbers"
	"repro/pipeline"
)

func TestPairedBootstrap(t *testing.T) {
	t.Parallel()
	// The resampled mean of n draws takes few values for tiny n, so the
	// percentile interval is known exactly:
	//   {0, 1}: means 0, 1/2, 1 with probabilities 1/4, 1/2, 1/4: [0, 1].
	//   {0, 0, 0, 3}: mean 3k/4, k ~ Bin(4, 1/4); P(k=0) = 0.316 > 0.025 so
	//     lo = 0; P(k=4) = 0.0039 < 0.025 <= P(k>=3) = 0.0508 so hi = 9/4.
	cases := []struct {
		name         string
		d            []float64
		mean, lo, hi float64
	}{
		{"one seed", []float64{0.7}, 0.7, 0.7, 0.7},
		{"all equal", []float64{-1, -1, -1}, -1, -1, -1},
		{"two", []float64{0, 1}, 0.5, 0, 1},
		{"skewed", []float64{0, 0, 0, 3}, 0.75, 0, 2.25},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			m, lo, hi := PairedBootstrap(c.d, 10000, core.NewRNG(1, core.StreamBootstrap))
			if math.Abs(m-c.mean) > 1e-12 || math.Abs(lo-c.lo) > 1e-12 || math.Abs(hi-c.hi) > 1e-12 {
				t.Errorf("PairedBootstrap(%v) = %v [%v, %v], want %v [%v, %v]", c.d, m, lo, hi, c.mean, c.lo, c.hi)
			}
		})
	}
	// Normal differences: the interval brackets the mean, is about
	// 2 x 1.96 sd/sqrt(n) wide, and is the same for the same seed.
	rng := core.NewRNG(5, core.StreamInit)
	d := make([]float64, 50)
	for i := range d {
		d[i] = 0.5 + rng.NormFloat64()
	}
	m, lo, hi := PairedBootstrap(d, 10000, core.NewRNG(3, core.StreamBootstrap))
	sd := numbers.MeanSD(d).SD
	width, want := hi-lo, 2*1.96*sd/math.Sqrt(50)
	if lo >= m || hi <= m || math.Abs(width-want) > 0.15*want {
		t.Errorf("normal: %v [%v, %v], width %v, want about %v", m, lo, hi, width, want)
	}
	_, lo2, hi2 := PairedBootstrap(d, 10000, core.NewRNG(3, core.StreamBootstrap))
	if lo2 != lo || hi2 != hi {
		t.Errorf("same seed, different interval: [%v, %v] then [%v, %v]", lo, hi, lo2, hi2)
	}
}

// tinyRecord is a train result with the given accuracy and forgetting.
func tinyRecord(seed int64, acc, fgt float64, replay int) []byte {
	b, _ := json.Marshal(&TrainRecord{Learner: "local", Protocol: "sequential", Seed: seed,
		Result: &core.Result{FinalAcc: acc, Forgetting: fgt, ReplayUpdates: replay, Acc: [][]float64{{acc}}}})
	return b
}

// tinyAggregate is a 3-row x 2-column table: row "a" complete, row "b" with
// seed 1 missing (a failed train cell in a degraded aggregate) and its
// static cell not applicable, row "c" not configured.
func tinyAggregate() (*AggregateParams, map[string]outputs) {
	p := Aggregate.NewParams().(*AggregateParams)
	p.Table, p.DefaultSeeds = "tiny", 3
	p.Rows = []string{"a", "b", "c"}
	p.Protocols = []string{"sequential", "static"}
	p.Cells = []TableCell{
		{Status: numbers.Status{Kind: numbers.StatusRun}, Seeds: "0 1 2", Cell: "train/a/sequential/split1"},
		{Status: numbers.Status{Kind: numbers.StatusRun}, Seeds: "0 1 2", Cell: "train/a/static/split1"},
		{Status: numbers.Status{Kind: numbers.StatusRun}, Seeds: "0 1 2", Cell: "train/b/sequential/split1"},
		{Status: numbers.Status{Kind: numbers.StatusNA}},
		{Status: numbers.NotRun(`no experiment "c" in pipeline.toml`)},
		{Status: numbers.NotRun("x")},
	}
	p.Compares = []Compare{{ID: "a-b", A: "a", B: "b", Protocol: "sequential"}, {ID: "a-c", A: "a", B: "c", Protocol: "sequential"}}
	in := map[string]outputs{}
	accA := []float64{0.916, 0.913, 0.919}
	accB := []float64{0.880, 0, 0.874}
	for s := 0; s < 3; s++ {
		in[cellid.Input{Row: 0, Col: 0, Seed: s}.String()] = outputs{"result": tinyRecord(int64(s), accA[s], 0.06, 100)}
		in[cellid.Input{Row: 0, Col: 1, Seed: s}.String()] = outputs{"result": tinyRecord(int64(s), 0.941, 0, 100+s)}
		if s != 1 {
			in[cellid.Input{Row: 1, Col: 0, Seed: s}.String()] = outputs{"result": tinyRecord(int64(s), accB[s], 0.1, 50)}
		}
	}
	return p, in
}

func TestAggregate(t *testing.T) {
	t.Parallel()
	p, in := tinyAggregate()
	out, order := runStage(t, Aggregate, p, in, nil)
	var rec numbers.AggregateRecord
	if err := json.Unmarshal(out["aggregate"], &rec); err != nil {
		t.Fatal(err)
	}
	a := rec.Cell("tiny/a/sequential")
	if a.N != 3 || math.Abs(a.Acc.Mean-91.6) > 1e-9 || math.Abs(a.Acc.SD-0.3) > 1e-9 || math.Abs(a.Forgetting.Mean-6) > 1e-9 {
		t.Errorf("row a: %+v, want n 3, 91.6 ± 0.3, forgetting 6", a)
	}
	b := rec.Cell("tiny/b/sequential")
	if b.N != 2 || b.Expected != 3 || len(b.Missing) != 1 || b.Missing[0] != 1 || math.Abs(b.Acc.Mean-87.7) > 1e-9 {
		t.Errorf("row b: %+v, want n 2 of 3, seed 1 missing, mean 87.7", b)
	}
	if b.TrainCells[1] != "train/b/sequential/split1/seed2" {
		t.Errorf("row b train cells %v", b.TrainCells)
	}
	if s := rec.Cell("tiny/b/static").Status; s.Kind != numbers.StatusNA {
		t.Errorf("b static: status %q", s)
	}
	if s := rec.Cell("tiny/c/sequential").Status; s.Kind != numbers.StatusNotRun {
		t.Errorf("c sequential: status %q", s)
	}
	// a - b paired over seeds 0 and 2: (91.6 - 88.0) and (91.9 - 87.4).
	ab := rec.Comparisons[0]
	if ab.N != 2 || math.Abs(ab.Diff-(3.6+4.5)/2) > 1e-9 || ab.Lo > ab.Diff || ab.Hi < ab.Diff {
		t.Errorf("a - b: %+v, want n 2, diff 4.05", ab)
	}
	if ac := rec.Comparisons[1]; ac.Status == "ok" {
		t.Errorf("a - c computed against a row that was not run: %+v", ac)
	}
	checkGolden(t, "aggregate-tiny", digestLines(out, order))
}

// TestAggregateSynOps: a cell's synops fraction is the mean over the seeds
// whose records carry one, and absent (not zero) when none does.
func TestAggregateSynOps(t *testing.T) {
	t.Parallel()
	p, in := tinyAggregate()
	for s, f := range []float64{0.24, 0.25, 0.26} {
		b, _ := json.Marshal(&TrainRecord{Learner: "local", Protocol: "sequential", Seed: int64(s),
			Result: &core.Result{FinalAcc: 0.9, Acc: [][]float64{{0.9}}, SynOpsFrac: f}})
		in[cellid.Input{Row: 0, Col: 0, Seed: s}.String()] = outputs{"result": b}
	}
	out, _ := runStage(t, Aggregate, p, in, nil)
	var rec numbers.AggregateRecord
	if err := json.Unmarshal(out["aggregate"], &rec); err != nil {
		t.Fatal(err)
	}
	if s := rec.Cell("tiny/a/sequential").SynOps; s == nil || math.Abs(s.Mean-0.25) > 1e-12 {
		t.Errorf("row a synops %+v, want mean 0.25", s)
	}
	if s := rec.Cell("tiny/b/sequential").SynOps; s != nil {
		t.Errorf("row b synops %+v, want none", s)
	}
}

// TestAggregateRelative: a column relative to row a divides each seed by
// a's mean in that column; a itself becomes 1; a cell whose reference has
// no result is missing, with the reason.
func TestAggregateRelative(t *testing.T) {
	t.Parallel()
	p, in := tinyAggregate()
	// Column sequential relative to row a; row c's not-run cell too;
	// column static relative to row b's static, which has no result.
	for i, ref := range []string{"a", "b", "a", "b", "a", ""} {
		p.Cells[i].RelativeTo = ref
	}
	p.Cells[3] = TableCell{Status: numbers.Status{Kind: numbers.StatusRun}, Seeds: "0", Cell: "train/b/static/split1", RelativeTo: "b"}
	out, _ := runStage(t, Aggregate, p, in, nil)
	var rec numbers.AggregateRecord
	if err := json.Unmarshal(out["aggregate"], &rec); err != nil {
		t.Fatal(err)
	}
	a, b := rec.Cell("tiny/a/sequential"), rec.Cell("tiny/b/sequential")
	// Ratios of numbers near 90: 1e-12 leaves room for rounding only.
	if math.Abs(a.Acc.Mean-1) > 1e-12 || math.Abs(b.Acc.Mean-87.7/91.6) > 1e-12 || math.Abs(b.Values[0]-88.0/91.6) > 1e-12 {
		t.Errorf("a %+v, b %+v: want 1 and 87.7/91.6", a.Acc, b.Acc)
	}
	if b.Metric != "acc / tiny/a/sequential" {
		t.Errorf("metric %q", b.Metric)
	}
	if s := rec.Cell("tiny/a/static").Status; s != numbers.Missing("the reference tiny/b/static has no result") {
		t.Errorf("a/static status %q", s)
	}
	if s := rec.Cell("tiny/c/sequential").Status; s.Kind != numbers.StatusNotRun {
		t.Errorf("c/sequential status %q", s)
	}
}

// TestStatusKeepsBytes: a table cell's status enters params (and so the
// aggregate's key) and the aggregate's JSON output as the same string as
// before it was typed.
func TestStatusKeepsBytes(t *testing.T) {
	t.Parallel()
	p := &AggregateParams{Table: "t", Rows: []string{"a"}, Protocols: []string{"s", "x", "y"}, Cells: []TableCell{
		{Status: numbers.Status{Kind: numbers.StatusRun}, Seeds: "0", Cell: "train/a/s"},
		{Status: numbers.Status{Kind: numbers.StatusNA}},
		{Status: numbers.NotRun(`no "c"`)},
	}}
	ps, err := pipeline.EncodeParams("aggregate", p)
	if err != nil {
		t.Fatal(err)
	}
	const want = `aggregate.cells [{cell = "train/a/s", seeds = "0", status = "run"}, {status = "n/a"}, {status = "not run: no \"c\""}]`
	if got := pipeline.ParamsText(ps); !slices.Contains(strings.Split(got, "\n"), want) {
		t.Errorf("params:\n%s\nwant the line\n%s", got, want)
	}
	var back AggregateParams
	if err := pipeline.DecodeParams("aggregate", ps, &back); err != nil || back.Cells[2] != p.Cells[2] || back.Cells[0] != p.Cells[0] {
		t.Errorf("DecodeParams = %+v, %v", back.Cells, err)
	}
	b, err := json.Marshal(numbers.AggCell{ID: "t/a/s", Status: numbers.Missing("no seed has a result")})
	if err != nil || !json.Valid(b) || !strings.Contains(string(b), `"status":"missing: no seed has a result"`) {
		t.Errorf("AggCell JSON = %s, %v", b, err)
	}
	var c numbers.AggCell
	if err := json.Unmarshal([]byte(`{"status": "reworded"}`), &c); err == nil {
		t.Error("an AggCell with an unknown status decoded")
	}
}
