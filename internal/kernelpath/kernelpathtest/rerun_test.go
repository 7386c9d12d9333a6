package kernelpathtest

import (
	"testing"

	"repro/internal/kernelpath"
)

// TestPath is what the re-run runs: the path in force, logged.
func TestPath(t *testing.T) {
	t.Logf("kernel path %v", kernelpath.Path())
}

// The switch works in a child process: TestPath there sees the cap.
func TestRerunOnEveryPath(t *testing.T) {
	RerunOnEveryPath(t, "^TestPath$")
}
