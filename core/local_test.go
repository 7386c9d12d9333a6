package core

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"repro/internal/kernelpath/kernelpathtest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// TestBatchCounts runs the schedule on data with the held-out protocol's
// task sizes and checks 16,885 waking batches and as many replay updates,
// and 3,376 x 5 = 16,880 for the static protocol.
func TestBatchCounts(t *testing.T) {
	t.Parallel()
	sizes := []int{11399, 10880, 10137, 10965, 10620}
	n := 0
	for _, s := range sizes {
		n += s
	}
	train := &Dataset{X: make([]float32, n), Y: make([]int32, n), N: n, D: 1, Classes: 10, Height: 1, Width: 1}
	i := 0
	for ti, s := range sizes {
		for k := range s {
			train.Y[i] = int32(2*ti + k%2)
			train.X[i] = float32(k%7) - 3
			i++
		}
	}
	eval := train.Subset([]int{0, 1, 20000, 30000, 50000})
	tests := []struct {
		name   string
		static bool
		want   int
	}{
		{"sequential", false, 16885},
		{"static", true, 16880},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := DefaultLocalConfig()
			cfg.Hidden = []int{4, 4}
			cfg.Static = tc.static
			cfg.PRSamples = 0
			done, total := 0, 0
			res, err := TrainLocal(cfg, train, eval, pairTasks(10), 1, Hooks{Progress: func(d, tot int) { done, total = d, tot }})
			if err != nil {
				t.Fatal(err)
			}
			if res.WakingBatches != tc.want || res.ReplayUpdates != tc.want || done != tc.want || total != tc.want {
				t.Errorf("waking %d, replay %d, progress %d/%d; want %d each", res.WakingBatches, res.ReplayUpdates, done, total, tc.want)
			}
			if res.ReplaySamples != 16*tc.want {
				t.Errorf("replay samples %d, want %d", res.ReplaySamples, 16*tc.want)
			}
		})
	}
}

// TestTrainLocalGolden pins the digest of a tiny deterministic run's JSON
// result; -update rewrites it.
func TestTrainLocalGolden(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig()
	cfg.Epochs = 2
	cfg.DiagDrift = true
	train := tinyData(1, 30, 4, 4, 5)
	eval := tinyData(2, 10, 4, 4, 5)
	res, err := TrainLocal(cfg, train, eval, pairTasks(4), 7, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.MarshalIndent(res, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(js)
	got := hex.EncodeToString(sum[:]) + "\n"
	want := goldenFile(t, "local_tiny.golden", got)
	if got != want {
		t.Errorf("digest of the tiny run = %s, want %s; result:\n%s", strings.TrimSpace(got), strings.TrimSpace(want), js)
	}
	// Determinism: a second run gives the same bytes.
	res2, _ := TrainLocal(cfg, train, eval, pairTasks(4), 7, Hooks{})
	js2, _ := json.MarshalIndent(res2, "", " ")
	if string(js) != string(js2) {
		t.Error("two runs with the same seed differ")
	}
}

// TestTinyRunLearns is the scaled-down accuracy floor: a short run on
// separable synthetic classes beats chance by far and fills every metric.
func TestTinyRunLearns(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig()
	cfg.Static = true
	cfg.Epochs = 3
	train := tinyData(1, 60, 4, 4, 5)
	eval := tinyData(1, 20, 4, 4, 5) // same prototypes, fresh noise
	res, err := TrainLocal(cfg, train, eval, pairTasks(4), 3, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("final accuracy %.3f, rho %v, PR %v, synops %.1f", res.FinalAcc, res.Rho, res.PR, res.SynOps)
	if res.FinalAcc < 0.6 {
		t.Errorf("final accuracy %.3f, want >= 0.6 (chance 0.25)", res.FinalAcc)
	}
	if len(res.Rho) != 2 || len(res.PR) != 3 || res.SynOps <= 0 || res.Forgetting != 0 {
		t.Errorf("metrics not filled: %+v", res)
	}
}

func TestValidateNamesField(t *testing.T) {
	t.Parallel()
	tests := []struct {
		field string
		edit  func(*LocalConfig)
	}{
		{"hidden", func(c *LocalConfig) { c.Hidden = nil }},
		{"active_frac", func(c *LocalConfig) { c.ActiveFrac = 0 }},
		{"conn_mode", func(c *LocalConfig) { c.ConnMode = "grid" }},
		{"opt", func(c *LocalConfig) { c.Opt = "rmsprop" }},
		{"momentum", func(c *LocalConfig) { c.Momentum = 1 }},
		{"eta", func(c *LocalConfig) { c.Eta = -1 }},
		{"epochs", func(c *LocalConfig) { c.Epochs = 0 }},
		{"batch_wake", func(c *LocalConfig) { c.BatchWake = 0 }},
		{"cadence", func(c *LocalConfig) { c.Cadence = 0 }},
		{"buffer", func(c *LocalConfig) { c.Buffer = -1 }},
		{"mask", func(c *LocalConfig) { c.Mask = "refr" }},
		{"readout", func(c *LocalConfig) { c.Readout = "fixed" }},
		{"gate", func(c *LocalConfig) { c.Gate = "clock" }},
		{"anchor", func(c *LocalConfig) { c.Anchor = []float64{1e-3} }},
		{"kp_adapt_mode", func(c *LocalConfig) { c.KPAdaptMode = "x" }},
		// Substrate switches.
		{"active_fracs", func(c *LocalConfig) { c.ActiveFracs = []float64{0.1} }},
		{"active_fracs[1]", func(c *LocalConfig) { c.ActiveFracs = []float64{0.1, 0} }},
		{"active_fracs", func(c *LocalConfig) { c.ActiveFracs, c.NoKWTA = []float64{0.1, 0.1}, true }},
		{"relax_t", func(c *LocalConfig) { c.RelaxT = -1 }},
		{"relax_gamma", func(c *LocalConfig) { c.RelaxT = 5 }},
		{"relax_gamma", func(c *LocalConfig) { c.RelaxT, c.RelaxGamma = 5, 1.5 }},
		{"relax_gamma", func(c *LocalConfig) { c.RelaxGamma = 0.4 }},
		{"mirror", func(c *LocalConfig) { c.Mirror = -1 }},
		{"mirror", func(c *LocalConfig) { c.Mirror, c.Transport = 20, true }},
		{"spike_train", func(c *LocalConfig) { c.SpikeTrain = -8 }},
		{"no_burst_gate", func(c *LocalConfig) { c.BurstMult, c.NoBurstGate = true, true }},
		{"no_dale_fb", func(c *LocalConfig) { c.Transport, c.NoDaleFB = true, true }},
		{"kp_adapt", func(c *LocalConfig) { c.Transport, c.KPAdapt = true, 0.25 }},
		{"skip", func(c *LocalConfig) { c.Hidden, c.Skip, c.RelaxT, c.RelaxGamma = []int{8, 8, 8}, true, 5, 0.4 }},
		// Appendix variants.
		{"mask", func(c *LocalConfig) { c.Mask = "refr_ach" }},
		{"theta_r", func(c *LocalConfig) { c.ThetaR = -1 }},
		{"frac_r", func(c *LocalConfig) { c.FracR = 2 }},
		{"util_q", func(c *LocalConfig) { c.UtilQ = -0.1 }},
		{"replay_noise", func(c *LocalConfig) { c.ReplayNoise = -0.2 }},
		{"sp", func(c *LocalConfig) { c.SP = "clock" }},
		{"sp_rho", func(c *LocalConfig) { c.SP, c.SPRho = "epoch", 1 }},
		{"sp_every", func(c *LocalConfig) { c.SP, c.SPEvery = "local", -1 }},
		{"sp", func(c *LocalConfig) { c.SP, c.ConnDensity = "epoch", 1 }},
		{"sp", func(c *LocalConfig) { c.SP = "night" }},
		{"sp", func(c *LocalConfig) { c.SP, c.KPAdapt = "epoch", 0.25 }},
	}
	for _, tc := range tests {
		cfg := DefaultLocalConfig()
		tc.edit(&cfg)
		err := cfg.Validate()
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.field+" =") {
			t.Errorf("%s: Validate() = %v, want an ErrConfig naming the field", tc.field, err)
		}
		if _, err := TrainLocal(cfg, tinyData(1, 2, 2, 2, 2), tinyData(1, 2, 2, 2, 2), []Task{{0, 1}}, 0, Hooks{}); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: TrainLocal accepted a bad config: %v", tc.field, err)
		}
	}
	def := DefaultLocalConfig()
	if err := def.Validate(); err != nil {
		t.Errorf("default config invalid: %v", err)
	}
}

// TestConfigTOML checks that every field has a snake_case TOML key and that
// a pipeline.toml-style table decodes onto the defaults.
func TestConfigTOML(t *testing.T) {
	t.Parallel()
	snake := regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	typ := reflect.TypeOf(LocalConfig{})
	seen := map[string]bool{}
	for i := range typ.NumField() {
		tag, opt, _ := strings.Cut(typ.Field(i).Tag.Get("toml"), ",")
		if !snake.MatchString(tag) || seen[tag] || (opt != "" && opt != "omitzero") {
			t.Errorf("field %s: toml tag %q not a unique snake_case key", typ.Field(i).Name, tag)
		}
		seen[tag] = true
	}
	cfg := DefaultLocalConfig()
	src := "mask = \"silent\"\nhidden = [256, 128]\nanchor = [3e-4, 3e-4]\nepochs = 1\n"
	if _, err := toml.Decode(src, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Mask != "silent" || len(cfg.Hidden) != 2 || cfg.Hidden[0] != 256 || cfg.Epochs != 1 || cfg.Eta != 0.02 || len(cfg.Anchor) != 2 {
		t.Errorf("decoded %+v", cfg)
	}
}

// TestStopHook: a Stop hook that fires ends the run with ErrStopped, polled
// between epochs.
func TestStopHook(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig()
	cfg.Epochs = 3
	calls := 0
	_, err := TrainLocal(cfg, tinyData(1, 10, 4, 4, 5), tinyData(2, 5, 4, 4, 5), pairTasks(4), 0,
		Hooks{Stop: func() bool { calls++; return calls == 2 }})
	if !errors.Is(err, ErrStopped) || calls != 2 {
		t.Errorf("err = %v after %d polls, want ErrStopped after 2", err, calls)
	}
}

// TestGoldensOnEveryKernelPath runs the goldens again with the vector
// kernels capped (REPRO_KERNELS=portable, and avx2 on an AVX-512 host):
// every path must give the goldens' bits.
func TestGoldensOnEveryKernelPath(t *testing.T) {
	kernelpathtest.RerunOnEveryPath(t, "^(TestTrainLocalGolden|TestAppendixGolden|TestSubstrateGolden)$")
}
