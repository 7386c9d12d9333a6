// Package mirror gives tests the project's data mirror: the directory a
// run of the module's pipeline.toml reads the data releases from.
package mirror

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"repro/pipeline"
)

// Dir returns the data mirror as a run resolves it: REPRO_DATA_MIRROR, else
// settings.data_mirror of the module's pipeline.toml (relative to that
// file). It skips t, saying where it looked, when the mirror does not hold
// MNIST (need, relative to the mirror, e.g. "mnist/train-images-idx3-ubyte.gz").
func Dir(t testing.TB, need string) string {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := pipeline.LoadConfig(filepath.Join(root, "pipeline.toml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := cfg.HostSettings(os.Getenv)["data.mirror"]
	if dir == "" {
		t.Skip("no data mirror: set settings.data_mirror in pipeline.toml or REPRO_DATA_MIRROR")
	}
	if _, err := os.Stat(filepath.Join(dir, need)); err != nil {
		t.Skipf("the data mirror %s (settings.data_mirror or REPRO_DATA_MIRROR) lacks %s: %v", dir, need, err)
	}
	return dir
}

// moduleRoot is the nearest directory above the working directory (a
// package's, under go test) that holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = up
	}
}
