package stages

import (
	"context"
	"fmt"
	"net/http"

	"repro/internal/dataset"
	"repro/pipeline"
)

// DownloadParams are the params of a download cell.
type DownloadParams struct {
	Dataset string `toml:"dataset"` // "mnist", "cifar10" or "cifar100"
}

// SettingDataMirror is the host-local setting naming a directory that holds
// release files (verified like downloads, so it is not part of the key).
const SettingDataMirror = "data.mirror"

// Download fetches one data set's release files from their canonical URLs,
// or first from the mirror directory in rc.Settings["data.mirror"], checks
// each against its published SHA-256 and stores one output per file (see
// doc.go); CIFAR archives are extracted in Go and their members stored. A
// checksum mismatch fails the cell with an error naming the file, the
// expected and the actual digest, and nothing is stored. Progress is in
// bytes.
var Download = &pipeline.Stage{
	Name:      "download",
	Version:   1,
	NewParams: func() any { return &DownloadParams{Dataset: "mnist"} },
	Run:       runDownload,
}

func runDownload(ctx context.Context, rc *pipeline.RunContext) error {
	p := rc.Params.(*DownloadParams)
	rel, err := dataset.ReleaseFor(p.Dataset)
	if err != nil {
		return err
	}
	f := &dataset.Fetcher{
		Client:   &http.Client{},
		Mirror:   rc.Settings[SettingDataMirror],
		Progress: rc.Progress,
		Log:      rc.Log,
	}
	files, err := f.Fetch(ctx, rel)
	if err != nil {
		return fmt.Errorf("download %s: %w", p.Dataset, err)
	}
	for _, name := range rel.Outputs() {
		rc.Put(name, files[name])
	}
	return nil
}
