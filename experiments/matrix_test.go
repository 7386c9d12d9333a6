package experiments

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"repro/pipeline"
	"repro/stages"
)

// matrixConfig has the shape of pipeline.toml: two profiles, three
// experiments (the middle one at lines 21-26) and a table.
var matrixConfig = `[settings]
default_profile = "paper"
[profile.paper]
seeds = [0, 1, 2]
split_seeds = [1234]
[profile.smoke]
seeds = [0]
split_seeds = [1234]
[profile.smoke.train]
stream_stride = 20

` + TestExperiments(
	TestExperiment{Name: "full", Learner: "local", Preset: "g16_sgd_refr_s10_w512", Protocols: []string{"sequential", "static", "single_pass"}, Section: []string{"eta = 0.2"}},
	TestExperiment{Name: "middle", Learner: "local", Protocols: []string{"sequential", "static"}, Extra: []string{"max_seeds = 2"}},
	TestExperiment{Name: "bp-er", Preset: "bp_er_1000", Protocols: []string{"sequential"}, Section: []string{"lr = 1e-3"}},
) + TestTable{Head: `name = "t"; caption = "c"; header = "h"`,
	Columns: []string{`id = "sequential"; title = "S"`},
	Rows:    []string{`experiment = "full"; label = "F"`, `experiment = "bp-er"; label = "B"`}}.TOML()

func loadMatrix(src string) (*Matrix, error) {
	cfg, err := pipeline.ParseConfig("pipeline.toml", src)
	if err != nil {
		return nil, err
	}
	return Load(cfg)
}

// mustBuild loads the matrix of config text src and builds one profile's
// graph, failing t on an error.
func mustBuild(t *testing.T, src, profile string) *pipeline.Graph {
	t.Helper()
	m, err := loadMatrix(src)
	if err != nil {
		t.Fatal(err)
	}
	g, err := m.Build(profile)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// build does what a repro command does with a loaded config: load its
// matrix, then build one profile's graph.
func build(cfg *pipeline.Config, profile string) (*pipeline.Graph, error) {
	m, err := Load(cfg)
	if err != nil {
		return nil, err
	}
	return m.Build(profile)
}

// paperGraph is the graph of one profile of the module's pipeline.toml.
func paperGraph(t *testing.T, profile string) *pipeline.Graph {
	t.Helper()
	cfg, err := pipeline.LoadConfig("../pipeline.toml")
	if err != nil {
		t.Fatal(err)
	}
	g, err := build(cfg, profile)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestLoadGood(t *testing.T) {
	t.Parallel()
	g := mustBuild(t, matrixConfig, "smoke")
	if g.Cell("train/middle/static/split1234/seed0") == nil || g.Cell("render/t") == nil {
		t.Error("cells missing")
	}
}

// TestLoadRejects: every bad value is an error when the file is loaded,
// before any cell exists, naming the line and key that set it. Each case
// replaces one line of matrixConfig.
func TestLoadRejects(t *testing.T) {
	t.Parallel()
	cases := []struct {
		from, to string
		line     int
		want     string
	}{
		{"eta = 0.2", "eta = -1.0", 19, "experiment full.local.eta: invalid config: eta = -1: must be > 0"},
		{"eta = 0.2", "eta = nan", 19, "eta = NaN: must be finite"},
		{"eta = 0.2", "eta = inf", 19, "eta = +Inf: must be finite"},
		{"eta = 0.2", "hidden = [0, 256]", 19, "hidden = [0 256]: widths must be >= 1"},
		{"eta = 0.2", "hidden = []", 19, "need at least one hidden layer"},
		{"eta = 0.2", "active_frac = 2.0", 19, "active_frac = 2: must be in (0, 1]"},
		{"eta = 0.2", "epochs = 0", 19, "epochs = 0: must be >= 1 (protocol sequential"},
		{"eta = 0.2", "buffer = -10", 19, "buffer = -10: must be >= 0"},
		{"eta = 0.2", "batch_wake = 0", 19, "batch_wake = 0: must be >= 1"},
		{"eta = 0.2", `mask = "mirorr"`, 19, `experiment full.local.mask: invalid config: mask = mirorr`},
		{"lr = 1e-3", "lr = -1e-3", 35, "experiment bp-er.bp.lr: lr = -0.001, want > 0"},
		{"stream_stride = 20", "stream_stride = 0", 10, "profile.smoke.train.stream_stride: stream_stride = 0: must be >= 1"},
		{"split_seeds = [1234]\n[profile.smoke]", "split_seeds = [-5]\n[profile.smoke]", 5, "profile.paper.split_seeds: -5: a split seed must be > 0"},
		{"seeds = [0, 1, 2]", "seeds = [-1, 1]", 4, "profile.paper.seeds: -1: a run seed must be >= 0"},
		{"seeds = [0, 1, 2]", "seeds = [1, 1]", 4, "1 listed twice"},
		{"[profile.smoke]\n", "[profile.\"../../evilprof\"]\n", 6, `profile name "../../evilprof"`},
		// A type error in the middle experiment is reported at its line,
		// not at the last experiment's.
		{"max_seeds = 2", `max_seeds = "3"`, 26, "experiment[1].max_seeds: incompatible types"},
		{`name = "middle"`, `name = 7`, 22, "experiment[1].name: incompatible types"},
		{`protocols = ["sequential", "static"]`, `protocols = "sequential"`, 25, "experiment[1].protocols: incompatible types"},
		{"max_seeds = 2", "max_seeds = 2\npreset = 3", 27, "experiment[1].preset: incompatible types"},
		{"max_seeds = 2", "max_seeds = 2\ndataset = 3", 27, "already been defined"},
		{"max_seeds = 2", "max_seeds = 2\nmax_sedes = 3", 27, "experiment.max_sedes: unknown key"},
		{`dataset = "mnist"
protocols = ["sequential", "static"]`, `dataset = "mnsit"
protocols = ["sequential", "static"]`, 24, `experiment middle.dataset: "mnsit" is not one of`},
		{`experiment = "bp-er"`, `experiment = "bp-err"`, 48, `table t.row[1].experiment: no experiment "bp-err"`},
	}
	for _, c := range cases {
		t.Run(c.to, func(t *testing.T) {
			t.Parallel()
			if !strings.Contains(matrixConfig, c.from) {
				t.Fatalf("%q not in the config", c.from)
			}
			_, err := loadMatrix(strings.Replace(matrixConfig, c.from, c.to, 1))
			var ce *pipeline.ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("err %v (%T), want a *pipeline.ConfigError", err, err)
			}
			if ce.Line != c.line || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err %q (line %d), want line %d and %q", err, ce.Line, c.line, c.want)
			}
		})
	}
}

// FuzzLoad: loading any edit of a profile or experiment never panics, and
// an error always names the file and, for an error inside the file, a
// line; what loads builds a graph whose train cells all validate.
func FuzzLoad(f *testing.F) {
	f.Add("seeds = [0, 1, 2]", "eta = 0.2")
	f.Add("seeds = [-1]", "eta = inf")
	f.Add("split_seeds = [0]", `mask = "mirorr"`)
	f.Add("stamp = 3", "hidden = []")
	f.Add("seeds = [0, 0]", "max_seeds = -1")
	f.Add("[profile.x]\nseeds=[1]\nsplit_seeds=[2]", "epochs = 1e9")
	f.Fuzz(func(t *testing.T, profileLine, experimentLine string) {
		src := strings.Replace(matrixConfig, "seeds = [0, 1, 2]", profileLine, 1)
		src = strings.Replace(src, "eta = 0.2", experimentLine, 1)
		m, err := loadMatrix(src)
		if err != nil {
			var ce *pipeline.ConfigError
			if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), "pipeline.toml") {
				t.Fatalf("error %v (%T) does not name the file", err, err)
			}
			return
		}
		for name := range m.Profiles {
			g, err := m.Build(name)
			if err != nil {
				t.Fatalf("loaded, but profile %s does not build: %v", name, err)
			}
			for _, c := range g.Cells {
				if v, ok := c.Params.(interface{ Validate() error }); ok {
					if err := v.Validate(); err != nil {
						t.Fatalf("cell %s passed Load but not Validate: %v", c.ID, err)
					}
				}
			}
		}
	})
}

// TestLearnerTables: every registered learner kind has its table in an
// experiment and in a profile (a field named by the kind), which
// learnerTable finds.
func TestLearnerTables(t *testing.T) {
	t.Parallel()
	for _, l := range stages.Learners() {
		e, p := &Experiment{}, &Profile{}
		for _, entry := range []any{e, p} {
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("learner %s: %v", l.Kind, r)
					}
				}()
				learnerTable(entry, l.Kind)
			}()
		}
	}
	defer func() {
		if r := recover(); r == nil {
			t.Error("learnerTable found a table for an unregistered kind")
		}
	}()
	learnerTable(&Experiment{}, "other")
}

// probe is one bad (or valid) change to the project's pipeline.toml: the
// configuration probes of the reliability review, one row each.
type probe struct {
	name string
	edit func(string) string
	// want is a substring of the error (file:line: key: ...); "" = the
	// change is valid and must load.
	want string
}

// local adds a line to night-narrow-k200's [experiment.local].
func local(line string) func(string) string {
	return func(s string) string {
		return strings.Replace(s, "[experiment.local]\nbuffer = 200\n", "[experiment.local]\nbuffer = 200\n"+line+"\n", 1)
	}
}

// bp adds an [experiment.bp] with one line to bp-er-k200.
func bp(line string) func(string) string {
	return func(s string) string {
		return strings.Replace(s, "preset = \"bp_er_200\"\nprotocols = [\"sequential\"]\n", "preset = \"bp_er_200\"\nprotocols = [\"sequential\"]\n[experiment.bp]\n"+line+"\n", 1)
	}
}

// repl replaces the first old by new.
func repl(old, new string) func(string) string {
	return func(s string) string {
		if !strings.Contains(s, old) {
			panic("probe: pipeline.toml has no " + old)
		}
		return strings.Replace(s, old, new, 1)
	}
}

func appendText(t string) func(string) string {
	return func(s string) string { return s + "\n" + t + "\n" }
}

const nn = "experiment night-narrow-k200.local."

const bpe = "experiment bp-er-k200.bp."

var configProbes = []probe{
	// Local learner values.
	{"local eta negative", local("eta = -0.1"), nn + "eta: invalid config: eta = -0.1: must be > 0"},
	{"local eta zero", local("eta = 0.0"), nn + "eta: invalid config: eta = 0: must be > 0"},
	{"local eta nan", local("eta = nan"), nn + "eta: invalid config: eta = NaN: must be finite"},
	{"local eta inf", local("eta = inf"), nn + "eta: invalid config: eta = +Inf: must be finite"},
	{"local eta huge", local("eta = 1e308"), nn + "eta: eta = 1e+308: must be <= 10"},
	{"local epochs 0", local("epochs = 0"), nn + "epochs: invalid config: epochs = 0: must be >= 1"},
	{"local epochs -1", local("epochs = -1"), nn + "epochs: invalid config: epochs = -1"},
	{"local epochs huge", local("epochs = 1000000000"), nn + "epochs: epochs = 1000000000: must be <= 1000"},
	{"local hidden [0,128]", local("hidden = [0, 128]"), nn + "hidden: invalid config: hidden = [0 128]: widths must be >= 1"},
	{"local hidden [-5,128]", local("hidden = [-5, 128]"), nn + "hidden: invalid config: hidden = [-5 128]"},
	{"local hidden huge", local("hidden = [100000000, 128]"), nn + "hidden: hidden = [100000000 128]: must be <= 65536"},
	{"local hidden deep", local("hidden = [" + strings.Repeat("8, ", 40) + "8]"), nn + "hidden: hidden = [8 8"},
	{"local hidden []", local("hidden = []"), nn + "hidden: invalid config: hidden = []: need at least one hidden layer"},
	{"local active_frac 0", local("active_frac = 0.0"), nn + "active_frac: invalid config: active_frac = 0: must be in (0, 1]"},
	{"local active_frac 1.5", local("active_frac = 1.5"), nn + "active_frac: invalid config: active_frac = 1.5"},
	{"local active_frac -0.1", local("active_frac = -0.1"), nn + "active_frac: invalid config: active_frac = -0.1"},
	{"local active_frac nan", local("active_frac = nan"), nn + "active_frac: invalid config: active_frac = NaN: must be finite"},
	{"local batch_wake 0", local("batch_wake = 0"), nn + "batch_wake: invalid config: batch_wake = 0"},
	{"local batch_wake -16", local("batch_wake = -16"), nn + "batch_wake: invalid config: batch_wake = -16"},
	{"local batch_wake huge", local("batch_wake = 100000000"), nn + "batch_wake: batch_wake = 100000000: must be <= 65536"},
	{"local batch_replay 0", local("batch_replay = 0"), nn + "batch_replay: invalid config: batch_replay = 0"},
	{"local batch_replay huge", local("batch_replay = 100000000"), nn + "batch_replay: batch_replay = 100000000: must be <= 65536"},
	{"local buffer -1", repl("buffer = 200\n", "buffer = -1\n"), nn + "buffer: invalid config: buffer = -1: must be >= 0"},
	{"local buffer huge", repl("buffer = 200\n", "buffer = 1000000000000\n"), nn + "buffer: buffer = 1000000000000: must be <= 1000000"},
	{"local momentum nan", local("momentum = nan"), nn + "momentum: invalid config: momentum = NaN"},
	{"local momentum -inf", local("momentum = -inf"), nn + "momentum: invalid config: momentum = -Inf"},
	{"local cadence 0", local("cadence = 0"), nn + "cadence: invalid config: cadence = 0"},
	{"local cadence huge", local("cadence = 1000000000"), nn + "cadence: cadence = 1000000000: must be <= 65536"},
	{"local burst huge", local("burst = 1000000000"), nn + "burst: burst = 1000000000: must be <= 1024"},
	{"local night_batch huge", local("night_batch = 1000000000"), nn + "night_batch: night_batch = 1000000000"},
	{"local night_batches huge", local("night_batches = 1000000000"), nn + "night_batches: night_batches = 1000000000"},
	{"local mirror huge", local("mirror = 1000000000"), nn + "mirror: mirror = 1000000000"},
	{"local relax_t huge", local("relax_gamma = 0.5\nrelax_t = 1000000000"), nn + "relax_t: relax_t = 1000000000"},
	{"local spike_train huge", local("spike_train = 1000000000"), nn + "spike_train: spike_train = 1000000000"},
	{"local pr_samples huge", local("pr_samples = 1000000000"), nn + "pr_samples: pr_samples = 1000000000"},
	{"local nrem_gain huge", local("nrem_gain = 1e9"), nn + "nrem_gain: nrem_gain = 1e+09"},
	{"local int overflow epochs", local("epochs = 99999999999999999999"), "experiment.local.epochs: 99999999999999999999 is out of range for int64"},
	{"local relax_t negative", local("relax_t = -3"), nn + "relax_t: invalid config: relax_t = -3"},
	{"local mirror negative", local("mirror = -1"), nn + "mirror: invalid config: mirror = -1"},
	{"local active_fracs [2.0]", local("active_fracs = [2.0, 0.1]"), nn + "active_fracs: invalid config: active_fracs[0] = 2"},
	{"local anchor nan", local("anchor = [nan, 0.1]"), nn + "anchor: invalid config: anchor[0] = NaN"},
	{"local kp_decay negative", local("kp_decay = -0.5"), nn + "kp_decay: invalid config: kp_decay = -0.5"},
	{"local mask unknown", local(`mask = "refractroy"`), nn + "mask: invalid config: mask = refractroy"},
	{"local pr_samples negative", local("pr_samples = -1"), nn + "pr_samples: invalid config: pr_samples = -1"},
	{"local block 0", local("block = 0"), ""},
	{"local night_batches negative", local("night_batches = -2"), nn + "night_batches: invalid config: night_batches = -2"},
	{"local unknown key etta", local("etta = 0.1"), "experiment.local.etta: unknown key"},
	{"type eta string", local(`eta = "0.1"`), "local.eta: incompatible types"},
	{"type epochs float", local("epochs = 1.5"), "local.epochs: incompatible types"},
	{"type hidden scalar", local("hidden = 5"), "local.hidden: incompatible types"},
	// Backprop values.
	{"bp lr negative", bp("lr = -0.001"), bpe + "lr: lr = -0.001, want > 0"},
	{"bp lr nan", bp("lr = nan"), bpe + "lr: lr = NaN: must be finite"},
	{"bp lr inf", bp("lr = inf"), bpe + "lr: lr = +Inf: must be finite"},
	{"bp lr huge", bp("lr = 1e300"), bpe + "lr: lr = 1e+300: must be <= 10"},
	{"bp k -1", bp("k = -1"), bpe + "k: k = -1, want >= 0"},
	{"bp k huge", bp("k = 1000000000000"), bpe + "k: k = 1000000000000: must be <= 1000000"},
	{"bp kwta 2.0", bp("kwta = 2.0"), bpe + "kwta: kwta = 2, want in [0, 1]"},
	{"bp batch 0", bp("batch = 0"), bpe + "batch: batch = 0, want >= 1"},
	{"bp batch -1", bp("batch = -1"), bpe + "batch: batch = -1, want >= 1"},
	{"bp batch huge", bp("batch = 100000000"), bpe + "batch: batch = 100000000: must be <= 65536"},
	{"bp replay_batch huge", bp("replay_batch = 100000000"), bpe + "replay_batch: replay_batch = 100000000"},
	{"bp epochs 0", bp("epochs = 0"), bpe + "epochs: epochs = 0, want >= 1"},
	{"bp epochs huge", bp("epochs = 1000000000"), bpe + "epochs: epochs = 1000000000: must be <= 1000"},
	{"bp hidden [0]", bp("hidden = [0]"), bpe + "hidden: hidden = [0], want positive widths"},
	{"bp hidden huge", bp("hidden = [100000000]"), bpe + "hidden: hidden = [100000000]: must be <= 65536"},
	{"bp weight_decay nan", bp("weight_decay = nan"), bpe + "weight_decay: weight_decay = NaN"},
	{"bp unknown key lrr", bp("lrr = 0.1"), "experiment.bp.lrr: unknown key"},
	// Profiles, seeds, strides.
	{"seeds negative", repl("seeds = [0, 1]\n", "seeds = [-1, 1]\n"), "profile.smoke.seeds: -1: a run seed must be >= 0"},
	{"seeds empty", repl("seeds = [0, 1]\n", "seeds = []\n"), "profile.smoke.seeds: missing or empty"},
	{"seeds duplicate", repl("seeds = [0, 1]\n", "seeds = [0, 0]\n"), "profile.smoke.seeds: 0 listed twice"},
	{"seeds int64 max", repl("seeds = [0, 1]\n", "seeds = [0, 9223372036854775807]\n"), ""},
	{"seeds float", repl("seeds = [0, 1]\n", "seeds = [0.5, 1]\n"), "profile.smoke.seeds: incompatible types"},
	{"type seeds string", repl("seeds = [0, 1]\n", "seeds = \"0\"\n"), "profile.smoke.seeds: incompatible types"},
	{"split_seeds empty", repl("seeds = [0, 1]\nsplit_seeds = [1234]", "seeds = [0, 1]\nsplit_seeds = []"), "profile.smoke.split_seeds: missing or empty"},
	{"split_seeds 0", repl("seeds = [0, 1]\nsplit_seeds = [1234]", "seeds = [0, 1]\nsplit_seeds = [0]"), "profile.smoke.split_seeds: 0: a split seed must be > 0"},
	{"stream_stride 0", repl("stream_stride = 20", "stream_stride = 0"), "profile.smoke.train.stream_stride: stream_stride = 0: must be >= 1"},
	{"stream_stride -20", repl("stream_stride = 20", "stream_stride = -20"), "profile.smoke.train.stream_stride: stream_stride = -20"},
	{"stream_stride huge", repl("stream_stride = 20", "stream_stride = 1000000000"), "profile.smoke.train.stream_stride: stream_stride = 1000000000: must be <= 100"},
	{"eval_stride 0", repl("eval_stride = 5", "eval_stride = 0"), "profile.smoke.train.eval_stride: eval_stride = 0"},
	{"eval_stride huge", repl("eval_stride = 5", "eval_stride = 1000000000"), "profile.smoke.train.eval_stride: eval_stride = 1000000000: must be <= 100"},
	{"unknown profile key stream_strid", repl("stream_stride = 20", "stream_strid = 20"), "profile.smoke.train.stream_strid: unknown key"},
	{"profile name ..", repl("[profile.smoke]\n", "[profile.\"../../evil\"]\n"), `profile name "../../evil"`},
	{"profile name absolute", repl("[profile.smoke]\n", "[profile.\"/tmp/evilabs\"]\n"), `profile name "/tmp/evilabs"`},
	{"profile name odd chars", repl("[profile.smoke]\n", "[profile.\"sm;oke$(id)\"]\n"), `profile name "sm;oke$(id)"`},
	{"profile name unicode", func(s string) string { return strings.ReplaceAll(s, "[profile.smoke", "[profile.\"smöke\"") }, `profile name "smöke"`},
	{"profile name uppercase", repl("[profile.smoke]\n", "[profile.SMOKE]\n"), `profile name "SMOKE"`},
	{"profile name slash", repl("[profile.smoke]\n", "[profile.\"a/b\"]\n"), `profile name "a/b"`},
	{"profile name dot", repl("[profile.smoke]\n", "[profile.\".\"]\n"), `profile name "."`},
	{"default_profile missing", repl(`default_profile = "paper"`, `default_profile = "papr"`), `settings.default_profile: no profile "papr"`},
	// Experiments.
	{"type protocols string", repl(`protocols = ["sequential", "static", "single_pass"]`, `protocols = "sequential"`), "experiment[0].protocols: incompatible types"},
	{"type learner int", repl(`learner = "local"`, `learner = 5`), "experiment[0].learner: incompatible types"},
	{"type max_seeds string", repl("protocols = [\"sequential\", \"static\"]\nmax_seeds = 3", "protocols = [\"sequential\", \"static\"]\n"+`max_seeds = "3"`), "max_seeds: incompatible types"},
	{"max_seeds -1", repl("protocols = [\"sequential\", \"static\"]\nmax_seeds = 3", "protocols = [\"sequential\", \"static\"]\n"+"max_seeds = -1"), "experiment gate-bouts.max_seeds: must be >= 0"},
	{"max_seeds huge", repl("protocols = [\"sequential\", \"static\"]\nmax_seeds = 3", "protocols = [\"sequential\", \"static\"]\n"+"max_seeds = 1000"), ""},
	{"unknown experiment key protocol", repl("name = \"full\"\n", "name = \"full\"\nprotocol = \"static\"\n"), "experiment.protocol: unknown key"},
	{"duplicate experiment", appendText("[[experiment]]\nname = \"full\"\nlearner = \"local\"\ndataset = \"mnist\"\nprotocols = [\"static\"]"), "experiment full.name: duplicate name (first at line"},
	{"protocols empty", repl(`protocols = ["sequential", "static", "single_pass"]`, `protocols = []`), "experiment full.protocols: missing or empty"},
	{"protocols misspelled", repl(`protocols = ["sequential", "static", "single_pass"]`, `protocols = ["sequentail"]`), `experiment full.protocols: "sequentail": want sequential, static or single_pass`},
	{"dataset unknown", repl(`dataset = "mnist"`, `dataset = "mnist2"`), `experiment full.dataset: "mnist2" is not one of`},
	{"preset unknown", repl(`preset = "g16_sgd_refr_s10_w512"`, `preset = "no_such_preset"`), "experiment full.preset: unknown preset: no local preset \"no_such_preset\""},
	{"experiment name ..", repl(`name = "full"`, `name = "../../../evil"`), "experiment ../../../evil.name: must be lower-case"},
	{"experiment name slash", repl(`name = "night-narrow-k200"`, `name = "a/b"`), "experiment a/b.name: must be lower-case"},
	{"experiment name space", repl(`name = "night-narrow-k200"`, `name = "a b"`), "experiment a b.name: must be lower-case"},
	{"experiment name glob", repl(`name = "night-narrow-k200"`, `name = "nn*"`), "experiment nn*.name: must be lower-case"},
	{"experiment name empty", repl(`name = "night-narrow-k200"`, `name = ""`), ".name: missing"},
	{"experiment profiles missing profile", repl("name = \"full\"\n", "name = \"full\"\nprofiles = [\"smok\"]\n"), `experiment full.profiles: no profile "smok"`},
	// Tables, figures, spike.
	{"table row missing experiment", repl(`experiment = "bpk-interleaved"`, `experiment = "bpk-interleavedd"`), `table bpk.row[0].experiment: no experiment "bpk-interleavedd"`},
	{"table row unknown key", repl("label = 'interleaved replay (unmasked)'", "labl = 'x'"), "table.row.labl: unknown key"},
	{"table cells missing experiment", repl(`ctrl-seq = "controller-drive"`, `ctrl-seq = "controller-drivee"`), `no experiment "controller-drivee"`},
	{"table cells missing column", repl(`fixed-seq = "full"`, `fixd-seq = "full"`), `"fixd-seq" is not a column`},
	{"table decimals negative", repl("decimals = 2\nmax_seeds = 3", "decimals = -1\nmax_seeds = 3"), "decimals: must be in [0, 6]"},
	{"table tasks 0", repl("tasks = 5", "tasks = 0"), "table accmatrix.tasks: must be >= 1"},
	{"table name ..", repl(`name = "bpk"`, `name = "../../../evil"`), `"../../../evil": want lower-case`},
	{"table name absolute", repl(`name = "bpk"`, `name = "/tmp/eviltable"`), `"/tmp/eviltable": want lower-case`},
	{"table published outside", repl(`published = "paper/published.toml"`, `published = "../../../../etc/passwd"`), "table bpk.published:"},
	{"table published missing", repl(`published = "paper/published.toml"`, `published = "paper/nonexistent.toml"`), "table bpk.published: open ../paper/nonexistent.toml"},
	{"figure name ..", repl(`name = "ksweep"`, `name = "../../evilfig"`), `"../../evilfig": want lower-case`},
	{"figure series missing experiment", repl(`experiments = ["k200", "full", "k5000"]`, `experiments = ["k200", "fulll", "k5000"]`), `no experiment "fulll"`},
	{"spike missing experiment", repl(`experiments = ["full", "silent"]`, `experiments = ["full", "silentt"]`), `spike.experiments: "silentt": no such [[experiment]]`},
	{"spike steps zero", repl("steps = [4, 8, 16, 32]", "steps = [0, 8]"), "spike.steps: T_s = 0: every time budget must be >= 1"},
	{"spike steps negative", repl("steps = [4, 8, 16, 32]", "steps = [-4, 8]"), "spike.steps: T_s = -4"},
	{"spike steps huge", repl("steps = [4, 8, 16, 32]", "steps = [4, 1000000000]"), "spike.steps: T_s = 1000000000: must be <= 10000"},
	{"spike percentile 150", repl("steps = [4, 8, 16, 32]", "steps = [4, 8, 16, 32]\npercentile = 150.0"), "spike.percentile: 150: want a fraction in (0, 1]"},
	{"spike percentile nan", repl("steps = [4, 8, 16, 32]", "steps = [4, 8, 16, 32]\npercentile = nan"), "spike.percentile: NaN"},
	{"spike calibration negative", repl("steps = [4, 8, 16, 32]", "steps = [4, 8, 16, 32]\ncalibration = -5"), "spike.calibration: -5: want >= 1"},
	{"spike calibration huge", repl("steps = [4, 8, 16, 32]", "steps = [4, 8, 16, 32]\ncalibration = 1000000000"), "spike.calibration: 1000000000: want <= 60000"},
	{"spike ac_pj negative", repl("steps = [4, 8, 16, 32]", "steps = [4, 8, 16, 32]\nac_pj = -0.9"), "spike.ac_pj: -0.9: want a positive price"},
	// Settings, remotes, releases, executor.
	{"type settings.store int", repl(`store = ".repro"`, `store = 5`), "settings.store: incompatible types"},
	{"unknown settings key stor", repl(`store = ".repro"`, `stor = ".repro"`), "settings.stor: unknown key"},
	{"unknown remote key pth", repl(`path = "paper/cells"`, `pth = "paper/cells"`), "settings.remotes.ledger.p"},
	{"unknown top-level table", appendText("[setings]\nstore = \"x\""), "setings.store: unknown key"},
	{"remote path empty", repl(`path = "paper/cells"`, `path = ""`), "settings.remotes.ledger.path: missing"},
	{"remote name ..", repl("[settings.remotes.ledger]", "[settings.remotes.\"../x\"]"), "a remote's name must be lower-case"},
	{"data_mirror elsewhere", repl(`data_mirror = "../shared/data"`, `data_mirror = "/etc"`), ""},
	{"release not archive", appendText("[release.mnist]\nsha256 = { a = \"zz\" }"), "release.mnist: mnist: a declared release needs an archive release"},
	{"release unknown dataset", appendText("[release.imagenet]\nsha256 = { a = \"zz\" }"), `release.imagenet: unknown data set "imagenet"`},
	{"slurm jobs negative", appendText("[executor.slurm]\njobs = -5"), "executor.slurm.jobs: -5: must be >= 0"},
	{"slurm batch negative", appendText("[executor.slurm]\nbatch = -5"), "executor.slurm.batch: -5: must be >= 0"},
	{"slurm cpus negative", appendText("[executor.slurm]\ncpus_per_task = -1"), "executor.slurm.cpus_per_task: -1: must be >= 0"},
	{"slurm array_limit negative", appendText("[executor.slurm]\narray_limit = -3"), "executor.slurm.array_limit: -3: must be >= 0"},
	{"slurm jobs huge", appendText("[executor.slurm]\njobs = 100000000"), "executor.slurm.jobs: 100000000: must be <= 100000"},
	// Syntax.
	{"syntax unclosed table header", repl("[[experiment]]\nname = \"full\"", "[[experiment]\nname = \"full\""), "bad.toml:"},
	{"syntax unterminated string", repl(`name = "full"`, `name = "full`), "strings cannot contain newlines"},
	{"syntax duplicate key", repl("buffer = 200\n", "buffer = 200\nbuffer = 300\n"), "has already been defined"},
	{"syntax duplicate table", appendText("[settings]\nstore = \"x\""), "has already been defined"},
	{"syntax bare garbage", repl(`store = ".repro"`, `@@@`), "bad.toml:12:"},
	{"syntax NUL byte", repl(`store = ".repro"`, "store = \".repro\"\x00"), "control characters"},
	{"syntax invalid utf8", func(s string) string { return "\xff" + s }, "invalid UTF-8"},
	{"empty file", func(string) string { return "" }, "no profile defined"},
	{"truncated file", truncateInArray, "bad.toml:"},
}

// truncateInArray cuts s inside the first array value past its middle, as a
// copy interrupted mid-write leaves it (a cut at a line end could be valid).
func truncateInArray(s string) string {
	mid := len(s) / 2
	i := strings.Index(s[mid:], "= [")
	if i < 0 {
		return s[:mid]
	}
	return s[:mid+i+3]
}

// TestConfigProbes: every probe of the reliability review is rejected when
// the config loads, with file:line and key, or (the valid ones) loads. Load
// writes nothing (it never sees a store); cmd/repro's TestBadConfigFailsAtLoad
// checks that plan and run store nothing for the same kind of error.
func TestConfigProbes(t *testing.T) {
	t.Parallel()
	src := readPipelineTOML(t)
	at := regexp.MustCompile(`^\.\./bad\.toml:\d+: `)
	for _, p := range configProbes {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			bad := p.edit(src)
			if bad == src {
				t.Fatal("the probe changed nothing")
			}
			cfg, err := pipeline.ParseConfig("../bad.toml", bad) // beside pipeline.toml: paths resolve alike
			if err == nil {
				_, err = Load(cfg)
			}
			if p.want == "" {
				if err != nil {
					t.Fatalf("a valid change was rejected: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted; want %q", p.want)
			}
			msg := err.Error()
			if !strings.Contains(msg, p.want) {
				t.Errorf("error %q, want it to contain %q", msg, p.want)
			}
			if !at.MatchString(msg) && p.name != "empty file" {
				t.Errorf("error %q names no file:line", msg)
			}
		})
	}
}
