package dataset

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"repro/pipeline"
)

// dataRoot is the data mirror a run of the module's pipeline.toml reads
// (its settings.data_mirror, or REPRO_DATA_MIRROR); tests that need it
// skip when it lacks MNIST.
func dataRoot(t testing.TB) string {
	t.Helper()
	cfg, err := pipeline.LoadConfig("../../pipeline.toml")
	if err != nil {
		t.Fatal(err)
	}
	root := cfg.HostSettings(os.Getenv)["data.mirror"]
	if _, err := os.Stat(filepath.Join(root, "mnist", MNISTTrainImages)); root == "" || err != nil {
		t.Skipf("the data mirror %q (settings.data_mirror or REPRO_DATA_MIRROR) lacks MNIST", root)
	}
	return root
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
