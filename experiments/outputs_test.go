package experiments

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"strings"
	"testing"

	"repro/artifacts"
	"repro/core"
	"repro/pipeline"
	"repro/stages"
)

var update = flag.Bool("update", false, "rewrite testdata/outputs-*.txt")

// fakeResultParams name the cell a fake result stands for.
type fakeResultParams struct {
	ID     string `toml:"id"`
	Seed   int64  `toml:"seed"`
	Energy bool   `toml:"energy"`
}

// fakeResult writes, for a train or energy cell, a result record whose
// every field a metric reads is set, from a hash of the cell's ID: the
// tables' cells can then be aggregated and rendered without training.
// fakeFigure stands for a figure cell: a sidecar without points.
var fakeFigure = &pipeline.Stage{Name: "figure", Version: 1, NewParams: func() any { return &fakeResultParams{} },
	Run: func(_ context.Context, rc *pipeline.RunContext) error {
		rc.Put("ids", []byte(`{"figure": "`+rc.Params.(*fakeResultParams).ID+`", "points": []}`))
		return nil
	}}

func fakeResult(name string) *pipeline.Stage {
	return &pipeline.Stage{Name: name, Version: 1, NewParams: func() any { return &fakeResultParams{} },
		Run: func(_ context.Context, rc *pipeline.RunContext) error {
			p := rc.Params.(*fakeResultParams)
			h := fnv.New64a()
			h.Write([]byte(p.ID))
			x := h.Sum64()
			next := func() float64 { // in [0, 1)
				x = x*6364136223846793005 + 1442695040888963407
				return float64(x>>11) / (1 << 53)
			}
			var rec any
			if p.Energy {
				e := &stages.EnergyRecord{Seed: p.Seed, RateAcc: next(), DenseNJ: 100 * next(), EventNJ: 50 * next()}
				for _, steps := range []int{1, 2, 4, 8, 16, 32, 64, 128, 256} {
					e.Spike = append(e.Spike, stages.EnergySpike{Steps: steps, Acc: next(), NJ: 10 * next(), VsDense: 5 * next()})
				}
				rec = e
			} else {
				layers := func() []float64 { return []float64{next(), next(), next(), next()} }
				r := &core.Result{FinalAcc: next(), Forgetting: next() / 4, WakingBatches: int(1000 * next()), ReplayUpdates: int(500 * next()), ReplaySamples: int(5000 * next()),
					Rho: layers(), AsleepFrac: layers(), Overlap: layers(), PR: layers(), SynOps: 1e5 * next(), DenseMACs: 1e5, SynOpsFrac: next(), GateDuty: next(),
					MaskChannels: layers()[:3], KPLambda: layers(), Drift: &core.Drift{CodeChange: next(), PredChange: next(), MarginViolated: layers(), MaxLogitMean: next(), MaxLogitP99: next()}}
				for range 10 {
					r.Acc = append(r.Acc, []float64{next(), next(), next(), next(), next(), next(), next(), next(), next(), next()})
				}
				rec = &stages.TrainRecord{Learner: "local", Protocol: "sequential", Seed: p.Seed, Result: r}
			}
			b, err := json.Marshal(rec)
			if err != nil {
				return err
			}
			rc.Put("result", b)
			return nil
		}}
}

// seedOf is the training seed of a train cell, or of the train cell an
// energy cell's network comes from.
func seedOf(c *pipeline.Cell) int64 {
	if tp, ok := c.Params.(*stages.TrainParams); ok {
		return tp.Seed
	}
	for _, in := range c.Inputs {
		if s := seedOf(in.Cell); s >= 0 {
			return s
		}
	}
	return -1
}

// TestTableOutputsPinned: the aggregate, render and reproduction cells of
// the smoke and paper profiles, run on fake results of every train and
// energy cell they read, write the bytes pinned in
// testdata/outputs-<profile>.txt (SHA-256 of each output). A change to how
// the tables are wired or their params encoded that leaves the tables as
// they were must keep these bytes; go test -update rewrites them when a
// table is meant to change.
func TestTableOutputsPinned(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs every table of two profiles")
	}
	for _, profile := range []string{"smoke", "paper"} {
		g := paperGraph(t, profile)
		fakes := map[string]*pipeline.Stage{}
		isTable := func(c *pipeline.Cell) bool {
			return c.Stage == stages.Aggregate || c.Stage == stages.Render || c.Stage == stages.Reproduction
		}
		_, p, tables := runOnFakes(t, g, profile, isTable, func(c *pipeline.Cell) *pipeline.Cell {
			if c.Stage == stages.Figure {
				// The reproduction reads the figures' points: a figure
				// with none (the figure tests pin the drawings).
				return &pipeline.Cell{ID: c.ID, Stage: fakeFigure, Params: &fakeResultParams{ID: c.ID}}
			}
			if fakes[c.Stage.Name] == nil {
				fakes[c.Stage.Name] = fakeResult(c.Stage.Name)
			}
			return &pipeline.Cell{ID: c.ID, Stage: fakes[c.Stage.Name], Params: &fakeResultParams{ID: c.ID, Seed: seedOf(c), Energy: c.Stage == stages.Energy}}
		})
		var b strings.Builder
		for _, c := range tables {
			for _, o := range p.Cell(c.ID).Manifest.Outputs {
				fmt.Fprintf(&b, "%s %s %s\n", c.ID, o.Name, o.Digest)
			}
		}
		path := "testdata/outputs-" + profile + ".txt"
		if *update {
			if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := b.String(); got != string(want) {
			t.Errorf("profile %s: the tables' outputs changed (go test -update rewrites %s):\n%s", profile, path, lineDiff(string(want), got))
		}
	}
}

// runOnFakes runs the cells of g that keep selects as repro run does
// (pipeline.Run on a new store, the local executor), each copied with its
// inputs rewired: an input keep selects is such a copy, any other the cell
// fake makes in its place. It returns the store, its plan of the graph run
// (every cell cached, with its manifest) and the copies of the selected
// cells in g's order; a failed cell fails t.
func runOnFakes(t *testing.T, g *pipeline.Graph, profile string, keep func(*pipeline.Cell) bool, fake func(*pipeline.Cell) *pipeline.Cell) (*artifacts.Store, *pipeline.Plan, []*pipeline.Cell) {
	t.Helper()
	copies := map[*pipeline.Cell]*pipeline.Cell{}
	var cells []*pipeline.Cell
	var copyOf func(c *pipeline.Cell) *pipeline.Cell
	copyOf = func(c *pipeline.Cell) *pipeline.Cell {
		if cc, ok := copies[c]; ok {
			return cc
		}
		var cc *pipeline.Cell
		if keep(c) {
			x := *c
			x.Inputs = nil
			for _, in := range c.Inputs {
				x.Inputs = append(x.Inputs, pipeline.CellInput{Name: in.Name, Cell: copyOf(in.Cell)})
			}
			cc = &x
		} else {
			cc = fake(c)
		}
		copies[c] = cc
		cells = append(cells, cc)
		return cc
	}
	var kept []*pipeline.Cell
	for _, c := range g.Cells {
		if keep(c) {
			kept = append(kept, copyOf(c))
		}
	}
	fg, err := pipeline.NewGraph(cells)
	if err != nil {
		t.Fatal(err)
	}
	st, err := artifacts.Open(t.TempDir(), artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := pipeline.Run(context.Background(), st, fg, pipeline.RunOptions{Profile: profile, Jobs: 2, Executor: &pipeline.LocalExecutor{Store: st, Stages: fg.Stages}})
	if err == nil {
		err = rep.Err()
	}
	if err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.MakePlan(st, fg, profile)
	if err != nil {
		t.Fatal(err)
	}
	return st, p, kept
}

// lineDiff lists the lines only in want (-) and only in got (+).
func lineDiff(want, got string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	w, g := in(want), in(got)
	var out []string
	for _, l := range strings.Split(want, "\n") {
		if !g[l] {
			out = append(out, "- "+l)
		}
	}
	for _, l := range strings.Split(got, "\n") {
		if !w[l] {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}
