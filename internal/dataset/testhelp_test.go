package dataset

import (
	"path/filepath"
	"testing"

	"repro/internal/mirror"
)

// dataRoot is the project's data mirror (settings.data_mirror of
// pipeline.toml, or REPRO_DATA_MIRROR); tests that need it skip when it
// lacks MNIST.
func dataRoot(t testing.TB) string {
	t.Helper()
	return mirror.Dir(t, filepath.Join("mnist", MNISTTrainImages))
}
