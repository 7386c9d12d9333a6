package stages

// The long runs of the paper's learners on the real held-out streams,
// which a train cell sees (heldoutSets): skipped unless REPRO_DATA names
// the data directory (make test sets it).

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"repro/core"
	"repro/core/backprop"
	"repro/internal/dataset"
)

// heldoutMNIST is the held-out stream of MNIST's split 1 that a train cell
// sees (heldoutSets), from the data directory REPRO_DATA names; it skips t
// when REPRO_DATA is unset.
func heldoutMNIST(t *testing.T) (stream, eval *core.Dataset, tasks []core.Task) {
	t.Helper()
	dir := os.Getenv("REPRO_DATA")
	if dir == "" {
		t.Skip("REPRO_DATA not set")
	}
	stream, eval, tasks, err := heldoutSets(t, dir, "mnist", dataset.SplitSeed1, 1)
	if err != nil {
		t.Fatal(err)
	}
	return stream, eval, tasks
}

// TestHeadline runs the default system on held-out split 1 of MNIST. It is
// skipped unless REPRO_DATA names the data directory (holding mnist/).
// REPRO_SEEDS (default "0"), REPRO_PROTOCOL (sequential, static or single;
// default sequential), REPRO_PRESET (a local preset of presets.toml; default the default
// system) and REPRO_MASK select the runs. It logs one JSON line
// per seed and the mean and s.d. of the final accuracy.
//
//	REPRO_DATA=$PWD/../shared/data REPRO_SEEDS=0,1,2,3,4,5 go test -run TestHeadline -v -timeout 2h ./stages/
func TestHeadline(t *testing.T) {
	stream, eval, _ := heldoutMNIST(t)
	cfg := core.DefaultLocalConfig()
	var err error
	if name := os.Getenv("REPRO_PRESET"); name != "" {
		v, err := testPreset(LearnerLocal, name)
		if err != nil {
			t.Fatal(err)
		}
		cfg = *v.(*core.LocalConfig)
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

// TestMNISTHeldout runs paper cells on the held-out split 1 of MNIST. It is
// skipped unless REPRO_DATA names the data directory (the one holding
// mnist/). REPRO_CELLS selects presets (comma-separated, default
// bp_er_1000), REPRO_SEEDS the seeds (default 0), REPRO_AXIS one of
// "seq" (default), "static", "single". Example:
//
//	REPRO_DATA=$PWD/../shared/data REPRO_CELLS=bp_er_1000 REPRO_SEEDS=0,1,2 \
//	  go test -run MNISTHeldout -v -timeout 0 ./stages/
func TestMNISTHeldout(t *testing.T) {
	stream, eval, seqTasks := heldoutMNIST(t)
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
		v, err := testPreset(LearnerBP, name)
		if err != nil {
			t.Fatal(err)
		}
		cfg := *v.(*backprop.Config)
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

// BenchmarkLearnerCost times a short run of every learner kind of the
// paper on every 9th sample of the held-out stream (split 1234, about
// 6,000), five class-pair tasks of one epoch each, evaluation on every 6th
// held-out sample (about 1,000), and reports the CPU cost per stream sample (cpu-us/sample: the
// process's CPU time, so GC included) and its
// ratio to the default system's on MNIST measured in the same process
// (x-full; run the whole benchmark so "mnist/full" comes first). MNIST
// inputs are sparse; CIFAR raw luminance and the V1 features are dense
// 1,024-vectors. Needs REPRO_DATA (the release files):
//
//	REPRO_DATA=$PWD/../shared/data go test -run '^$' -bench LearnerCost -benchtime 1x ./stages/
func BenchmarkLearnerCost(b *testing.B) {
	dir := os.Getenv("REPRO_DATA")
	if dir == "" {
		b.Skip("REPRO_DATA is not set")
	}
	type kind struct {
		name  string
		local string // a core preset, or
		bp    string // a backprop preset
		data  string
	}
	kinds := []kind{
		{"full", "g16_sgd_refr_s10_w512", "", "mnist"},
		{"anchor", "g17_sgd_anchor_s10", "", "mnist"},
		{"masked-adam", "g17_adam_refr_s10", "", "mnist"},
		{"mirror", "g17_mirror_s10", "", "mnist"},
		{"soft-rotation", "g17_soft_s10", "", "mnist"},
		{"controller", "g19b_mnist", "", "mnist"},
		{"deep-skip", "g20b_d4_skip", "", "mnist"},
		{"bp-er", "", "bp_er_1000", "mnist"},
		{"bp-kwta", "", "bpk_iso_rot_lr1e4", "mnist"},
		{"derpp", "", "bp_derpp_a0.03_b1.0_w512_ce", "mnist"},
		{"er-ace", "", "bp_erace_1000", "mnist"},
		{"agem", "", "bp_agem_1000_w512", "mnist"},
		{"full", "g16_sgd_refr_s10_w512", "", "cifar10"},
		{"full", "g16_sgd_refr_s10_w512", "", "cifar10f"},
	}
	type data struct {
		train, eval *core.Dataset
		tasks       []core.Task
	}
	sets := map[string]data{}
	load := func(name string) data {
		if d, ok := sets[name]; ok {
			return d
		}
		stream, eval, tasks, err := heldoutSets(b, dir, name, dataset.SplitSeed1, 2)
		if err != nil {
			b.Fatal(err)
		}
		// Every 9th stream sample (about 6,000, every task represented,
		// as a train cell's stream_stride takes them) and every 6th
		// held-out sample (about 1,000, every class: the held-out tenth
		// is grouped by class).
		d := data{stream.Subset(stride(stream.N, 9)), eval.Subset(stride(eval.N, 6)), tasks}
		sets[name] = d
		return d
	}
	var fullPerSample float64
	for _, k := range kinds {
		b.Run(k.data+"/"+k.name, func(b *testing.B) {
			d := load(k.data)
			run := func() error {
				if k.local != "" {
					v, err := testPreset(LearnerLocal, k.local)
					if err != nil {
						return err
					}
					cfg := *v.(*core.LocalConfig)
					cfg.Epochs = 1
					_, err = core.TrainLocal(cfg, d.train, d.eval, d.tasks, 0, core.Hooks{})
					return err
				}
				v, err := testPreset(LearnerBP, k.bp)
				if err != nil {
					return err
				}
				cfg := *v.(*backprop.Config)
				cfg.Epochs = 1
				_, err = backprop.Train(cfg, d.train, d.eval, d.tasks, 0, core.Hooks{})
				return err
			}
			cpu0 := cpuTime()
			for b.Loop() {
				if err := run(); err != nil {
					b.Fatal(err)
				}
			}
			// CPU time, not wall: the machine may be shared.
			us := (cpuTime() - cpu0) * 1e6 / float64(b.N) / float64(d.train.N)
			b.ReportMetric(us, "cpu-us/sample")
			if k.data == "mnist" && k.name == "full" {
				fullPerSample = us
			}
			if fullPerSample > 0 {
				b.ReportMetric(us/fullPerSample, "x-full")
			}
		})
	}
}

// stride lists 0, k, 2k, ... below n.
func stride(n, k int) []int {
	var idx []int
	for i := 0; i < n; i += k {
		idx = append(idx, i)
	}
	return idx
}
