package experiments

import (
	"math/rand/v2"
	"testing"

	"repro/core"
	"repro/core/backprop"
	"repro/pipeline"
	"repro/stages"
)

// TestPipelineTOMLResolves loads the project's own pipeline.toml, builds
// the paper and smoke graphs, and runs every distinct learner configuration
// of the paper profile for a few batches on a tiny random data set: every
// row the tables need resolves from the file to a config the learners
// accept and run.
func TestPipelineTOMLResolves(t *testing.T) {
	t.Parallel()
	cfg, err := pipeline.LoadConfig("../pipeline.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, profile := range []string{"smoke", "paper"} {
		g, err := build(cfg, profile)
		if err != nil {
			t.Fatalf("profile %s: %v", profile, err)
		}
		if len(g.Cells) == 0 {
			t.Fatalf("profile %s has no cells", profile)
		}
	}
	// Re-load: Load consumes the config's deferred tables.
	cfg, _ = pipeline.LoadConfig("../pipeline.toml")
	g, err := build(cfg, "paper")
	if err != nil {
		t.Fatal(err)
	}
	train, eval := tinyData(400, 100)
	tasks := []core.Task{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}}
	seen := map[string]bool{}
	for _, c := range g.Cells {
		p, ok := c.Params.(*stages.TrainParams)
		if !ok || p.Seed != 0 {
			continue
		}
		ps, _ := pipeline.EncodeParams("train", p)
		key := pipeline.ParamsText(ps)
		if seen[key] {
			continue
		}
		seen[key] = true
		t.Run(c.ID, func(t *testing.T) {
			t.Parallel()
			tk := tasks
			if p.Protocol == "static" {
				tk = []core.Task{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}}
			}
			var res *core.Result
			var err error
			switch p.Learner {
			case "local":
				lc := *p.Local
				lc.Epochs, lc.PRSamples = 1, 50
				res, err = core.TrainLocal(lc, train, eval, tk, 0, core.Hooks{})
			case "bp":
				bc := *p.BP
				bc.Epochs = 1
				res, err = backprop.Train(bc, train, eval, tk, 0, core.Hooks{})
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Acc) != len(tk) || res.WakingBatches == 0 {
				t.Fatalf("result: %d accuracy rows, %d waking batches", len(res.Acc), res.WakingBatches)
			}
		})
	}
	if len(seen) < 40 {
		t.Errorf("only %d distinct learner configs in the paper profile", len(seen))
	}
}

// tinyData is a random 10-class MNIST-shaped data set.
func tinyData(n, m int) (train, eval *core.Dataset) {
	r := rand.New(rand.NewPCG(7, 7))
	mk := func(n int) *core.Dataset {
		d := &core.Dataset{X: make([]float32, n*784), Y: make([]int32, n), N: n, D: 784, Classes: 10, Height: 28, Width: 28}
		for i := range d.Y {
			d.Y[i] = int32(i % 10)
			for j := 0; j < 784; j++ {
				d.X[i*784+j] = float32(r.NormFloat64()) + 0.5*float32(d.Y[i]%3)
			}
		}
		return d
	}
	return mk(n), mk(m)
}
