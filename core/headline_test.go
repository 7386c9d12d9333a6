package core_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"repro/core"
	"repro/internal/dataset"
	"repro/stages"
)

// TestHeadline runs the default system on held-out split 1 of MNIST. It is
// skipped unless REPRO_DATA names the data directory (holding mnist/).
// REPRO_SEEDS (default "0"), REPRO_PROTOCOL (sequential, static or single;
// default sequential), REPRO_PRESET (a LocalPreset name; default the default
// system) and REPRO_MASK select the runs. It logs one JSON line
// per seed and the mean and s.d. of the final accuracy.
//
//	REPRO_DATA=$PWD/../shared/data REPRO_SEEDS=0,1,2,3,4,5 go test -run TestHeadline -v -timeout 2h ./core/
func TestHeadline(t *testing.T) {
	dir := os.Getenv("REPRO_DATA")
	if dir == "" {
		t.Skip("REPRO_DATA not set")
	}
	stream, eval, _, err := stages.HeldoutSets(context.Background(), dir, "mnist", 1234, 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg := core.DefaultLocalConfig()
	if name := os.Getenv("REPRO_PRESET"); name != "" {
		if cfg, err = core.LocalPreset(name); err != nil {
			t.Fatal(err)
		}
	}
	switch p := os.Getenv("REPRO_PROTOCOL"); p {
	case "", "sequential":
	case "static":
		cfg.Static = true
	case "single":
		cfg.Epochs = 1
	default:
		t.Fatalf("REPRO_PROTOCOL=%q", p)
	}
	if m := os.Getenv("REPRO_MASK"); m != "" {
		cfg.Mask = m
	}
	tasks, err := dataset.Tasks(10, dataset.Sequential)
	if err != nil {
		t.Fatal(err)
	}
	seeds := os.Getenv("REPRO_SEEDS")
	if seeds == "" {
		seeds = "0"
	}
	var accs []float64
	for _, s := range strings.Split(seeds, ",") {
		seed, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		t0, c0 := time.Now(), cpuTime()
		res, err := core.TrainLocal(cfg, stream, eval, tasks, seed, core.Hooks{})
		if err != nil {
			t.Fatal(err)
		}
		js, _ := json.Marshal(res)
		t.Logf("seed %d: final %.2f%% F %.2f%% wake %d replay %d in %.1fs (cpu %.1fs)\n%s", seed,
			100*res.FinalAcc, 100*res.Forgetting, res.WakingBatches, res.ReplayUpdates, time.Since(t0).Seconds(), cpuTime()-c0, js)
		accs = append(accs, res.FinalAcc)
	}
	var m, v float64
	for _, a := range accs {
		m += a
	}
	m /= float64(len(accs))
	for _, a := range accs {
		v += (a - m) * (a - m)
	}
	if len(accs) > 1 {
		v /= float64(len(accs) - 1)
	}
	t.Logf("final accuracy %.2f +- %.2f (n=%d)", 100*m, 100*math.Sqrt(v), len(accs))
}

// cpuTime is the process's user+system CPU time in seconds.
func cpuTime() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
