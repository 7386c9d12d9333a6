package experiments

import (
	"errors"
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
) + TestTable{Head: `name = "t"; caption = "c"; header = "h"; columns = ["sequential"]; titles = ["S"]`,
	Rows: []string{`experiment = "full"; label = "F"`, `experiment = "bp-er"; label = "B"`}}.TOML()

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
		{`experiment = "bp-er"`, `experiment = "bp-err"`, 47, `table t.row[1].experiment: no experiment "bp-err"`},
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
