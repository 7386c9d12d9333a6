package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repro/pipeline"
)

// smokeProject opens the config of every end-to-end test project on real
// or small data files: the store inside the project, the data mirror
// (%MIRROR%) and the default profile smoke with two seeds and one split.
const smokeProject = `
[settings]
store = "store"
data_mirror = "%MIRROR%"
default_profile = "smoke"

[profile.smoke]
seeds = [0, 1]
split_seeds = [1234]
`

// mnistSmokeSettings opens every real-MNIST project of the end-to-end
// tests: smokeProject, with %MIRROR% filled in by mnistProject, training
// on every 50th stream sample and evaluating every 10th, so a backprop
// cell takes about a second.
const mnistSmokeSettings = smokeProject + `stamp = "SMOKE TEST OUTPUT"
[profile.smoke.train]
stream_stride = 50
eval_stride = 10
`

// mnistMirror returns the absolute data mirror of a test that trains on
// real MNIST, as a run of the module's pipeline.toml resolves it
// (settings.data_mirror, or REPRO_DATA_MIRROR), or skips the test (under
// -short, or when the mirror lacks MNIST).
func mnistMirror(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("trains on real MNIST; about a minute")
	}
	cfg, err := pipeline.LoadConfig(filepath.Join(repoRoot, "pipeline.toml"))
	if err != nil {
		t.Fatal(err)
	}
	m := cfg.HostSettings(os.Getenv)["data.mirror"]
	if fi, err := os.Stat(filepath.Join(m, "mnist")); m == "" || err != nil || !fi.IsDir() {
		t.Skipf("the data mirror %q (settings.data_mirror or REPRO_DATA_MIRROR) lacks mnist/", m)
	}
	return m
}

// mnistProject writes a project over real MNIST into a new directory: cfg
// as its pipeline.toml and files (path -> text) beside it, with %MIRROR%
// replaced by the mirror. It returns the directory and the config as
// written. It skips under -short (see mnistMirror).
func mnistProject(t *testing.T, cfg string, files map[string]string) (dir, written string) {
	t.Helper()
	m := mnistMirror(t)
	dir = t.TempDir()
	written = strings.Replace(cfg, "%MIRROR%", m, 1)
	files["pipeline.toml"] = written
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, written
}

// planRerunsOnly fails t for each train cell plan would run whose ID does
// not contain want: an edit to one experiment reruns that experiment only.
func planRerunsOnly(t *testing.T, plan, want string) {
	t.Helper()
	for _, line := range strings.Split(plan, "\n") {
		if strings.HasPrefix(line, "run    train/") && !strings.Contains(line, want) {
			t.Errorf("plan reruns another experiment: %s", line)
		}
	}
}
