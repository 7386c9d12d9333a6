package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repro/experiments"
)

// TestStoreRefusesForeignDirectory: --store naming a directory that holds
// other files is refused before any work, and leaves it untouched; repro
// init makes a store there when asked.
func TestStoreRefusesForeignDirectory(t *testing.T) {
	t.Parallel()
	dir := workdir(t, tinyDAG)
	home := filepath.Join(dir, "home")
	os.MkdirAll(home, 0o755)
	os.WriteFile(filepath.Join(home, "thesis.tex"), []byte("x"), 0o644)
	for _, args := range [][]string{{"run", "--store", home}, {"plan", "--store", home}, {"verify", "--store", home}} {
		out, errOut, code := reproSplit(t, dir, args...)
		if code != 1 || !strings.Contains(errOut, "not a repro store") || !strings.Contains(errOut, "repro init --store") {
			t.Errorf("repro %s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), code, out, errOut)
		}
	}
	if ents, _ := os.ReadDir(home); len(ents) != 1 {
		t.Fatalf("a refused store directory now holds %d entries", len(ents))
	}
	if out := mustRepro(t, dir, "init", "--store", home); !strings.HasPrefix(out, "created store ") {
		t.Fatalf("init: %q", out)
	}
	if out := mustRepro(t, dir, "run", "-q", "--store", home); !strings.Contains(out, "ran 6 cells") {
		t.Fatalf("run after init: %q", out)
	}
	if out := mustRepro(t, dir, "init", "--store", home); !strings.HasPrefix(out, "store ") || !strings.HasSuffix(out, " exists\n") {
		t.Fatalf("init again: %q", out)
	}
	// A new directory and an empty one still become stores by themselves.
	os.MkdirAll(filepath.Join(dir, "empty"), 0o755)
	for _, s := range []string{"empty", "fresh/store"} {
		if out := mustRepro(t, dir, "run", "-q", "--store", s); !strings.Contains(out, "ran 6 cells") {
			t.Fatalf("run --store %s: %q", s, out)
		}
	}
}

// TestBadConfigFailsAtLoad: a bad value in pipeline.toml makes plan and
// run fail before any work, naming the file, line and key, and nothing is
// stored; a profile name that would write outside the work tree is
// rejected the same way.
func TestBadConfigFailsAtLoad(t *testing.T) {
	t.Parallel()
	good := `[settings]
store = "store"
default_profile = "p"
[profile.p]
seeds = [0, 1]
split_seeds = [1234]

` + experiments.TestExperiment{Name: "full", Learner: "local", Protocols: []string{"sequential"}, Section: []string{"eta = 0.2"}}.TOML()
	cases := []struct{ from, to, want string }{
		{"eta = 0.2", `mask = "mirorr"`, "pipeline.toml:14: experiment full.local.mask: invalid config: mask = mirorr"},
		{"eta = 0.2", "eta = inf", "pipeline.toml:14: experiment full.local.eta: invalid config: eta = +Inf: must be finite"},
		{"eta = 0.2", "epochs = 1000000000", "pipeline.toml:14: experiment full.local.epochs: epochs = 1000000000: must be <= 1000"},
		{"eta = 0.2", "buffer = 1000000000000", "pipeline.toml:14: experiment full.local.buffer: buffer = 1000000000000: must be <= 1000000"},
		// 2.6 TiB: more than any machine has.
		{"eta = 0.2", "hidden = [" + strings.Repeat("65536, ", 19) + "65536]", "pipeline.toml:14: experiment full.local.hidden: a train cell would need about 2453.8 GiB of memory"},
		{"seeds = [0, 1]", "seeds = [-1, 1]", "pipeline.toml:5: profile.p.seeds: -1: a run seed must be >= 0"},
		{"[profile.p]", `[profile."../../evilprof"]`, `pipeline.toml:4: profile.../../evilprof: profile name "../../evilprof"`},
	}
	for _, c := range cases {
		t.Run(c.to, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			src := strings.Replace(good, c.from, c.to, 1)
			if strings.Contains(c.to, "evilprof") {
				src = strings.Replace(src, `default_profile = "p"`, `default_profile = "../../evilprof"`, 1)
			}
			if err := os.WriteFile(filepath.Join(dir, "pipeline.toml"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, cmd := range []string{"plan", "run"} {
				out, err := repro(t, dir, cmd)
				if err == nil || !strings.Contains(out, c.want) {
					t.Errorf("repro %s: err %v, output %q, want %q", cmd, err, out, c.want)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "store")); !os.IsNotExist(err) {
				t.Errorf("a store was created for a bad config (%v)", err)
			}
		})
	}
}
