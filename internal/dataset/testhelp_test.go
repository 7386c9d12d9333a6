package dataset

import (
	"os"
	"path/filepath"
	"testing"
)

// dataRoot is the offline copy of the releases (see its README.md);
// REPRO_DATA_MIRROR overrides it. Tests that need it skip when it is absent.
func dataRoot(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("REPRO_DATA_MIRROR")
	if dir == "" {
		dir = "/work/shared/data"
	}
	if _, err := os.Stat(filepath.Join(dir, "mnist", MNISTTrainImages)); err != nil {
		t.Skipf("no data mirror at %s: %v", dir, err)
	}
	return dir
}
