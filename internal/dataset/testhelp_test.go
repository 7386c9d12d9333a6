package dataset

import (
	"context"
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

// fetchDecode reads data set ds's release from the mirror dir as the
// download stage does (checksums verified) and decodes it as the prepare
// stage does.
func fetchDecode(dir, ds string, decode func(map[string][]byte) (train, test *Raw, err error)) (train, test *Raw, err error) {
	rel, err := ReleaseFor(ds)
	if err != nil {
		return nil, nil, err
	}
	files, err := (&Fetcher{Mirror: dir}).Fetch(context.Background(), rel)
	if err != nil {
		return nil, nil, err
	}
	return decode(files)
}
