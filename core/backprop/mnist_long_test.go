package backprop_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"repro/core"
	"repro/core/backprop"
	"repro/stages"
)

// TestMNISTHeldout runs paper cells on the held-out split 1 of MNIST. It is
// skipped unless REPRO_DATA names the data directory (the one holding
// mnist/). REPRO_CELLS selects presets (comma-separated, default
// bp_er_1000), REPRO_SEEDS the seeds (default 0), REPRO_AXIS one of
// "seq" (default), "static", "single". Example:
//
//	REPRO_DATA=$PWD/../shared/data REPRO_CELLS=bp_er_1000 REPRO_SEEDS=0,1,2 \
//	  go test -run MNISTHeldout -v -timeout 0 ./core/backprop
func TestMNISTHeldout(t *testing.T) {
	dir := os.Getenv("REPRO_DATA")
	if dir == "" {
		t.Skip("REPRO_DATA not set")
	}
	stream, eval, seqTasks, err := stages.HeldoutSets(context.Background(), dir, "mnist", 1234, 1)
	if err != nil {
		t.Fatal(err)
	}
	if stream.N != 54001 || eval.N != 5999 {
		t.Fatalf("held-out split: stream %d, eval %d samples, want 54001, 5999", stream.N, eval.N)
	}
	cells := strings.Split(envOr("REPRO_CELLS", "bp_er_1000"), ",")
	axis := envOr("REPRO_AXIS", "seq")
	var seeds []int64
	for _, s := range strings.Split(envOr("REPRO_SEEDS", "0"), ",") {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, v)
	}
	tasks := seqTasks
	if axis == "static" {
		tasks = []core.Task{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}}
	}
	for _, name := range cells {
		cfg, ok := backprop.Preset(name)
		if !ok {
			t.Fatalf("unknown preset %q", name)
		}
		if axis == "single" {
			cfg.Epochs = 1
		}
		var accs []float64
		for _, seed := range seeds {
			start := time.Now()
			res, err := backprop.Train(cfg, stream, eval, tasks, seed, core.Hooks{})
			if err != nil {
				t.Fatal(err)
			}
			el := time.Since(start)
			accs = append(accs, 100*res.FinalAcc)
			fmt.Printf("RESULT cell=%s axis=%s seed=%d acc=%.2f forget=%.2f wall=%.1fs waking=%d replay=%d asleep=%v rho=%v\n",
				name, axis, seed, 100*res.FinalAcc, 100*res.Forgetting, el.Seconds(), res.WakingBatches, res.ReplayUpdates, res.AsleepFrac, res.Rho)
		}
		m, sd := meanSD(accs)
		fmt.Printf("SUMMARY cell=%s axis=%s n=%d acc=%.1f +- %.1f\n", name, axis, len(accs), m, sd)
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// meanSD returns the mean and the sample standard deviation (ddof 1, 0 for
// one value), as the paper's tables.
func meanSD(xs []float64) (m, sd float64) {
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	if len(xs) < 2 {
		return m, 0
	}
	for _, x := range xs {
		sd += (x - m) * (x - m)
	}
	return m, math.Sqrt(sd / float64(len(xs)-1))
}
