package stages

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"repro/internal/dataset"
	"repro/pipeline"
)

// DownloadParams are the params of a download cell.
type DownloadParams struct {
	Dataset string `toml:"dataset"` // "mnist", "cifar10" or "cifar100"
	// Members, when set, declares a release other than the published one
	// ("<member> <sha256 hex>" per file, e.g. a small subset for tests):
	// it is read from the data mirror only and verified against these
	// digests, which are part of the key, so its cells never mix with the
	// published release's.
	Members []string `toml:"members,omitzero"`
}

// SettingDataMirror is the host-local setting naming a directory that holds
// release files (verified like downloads, so it is not part of the key).
const SettingDataMirror = "data.mirror"

// SettingDataURL is the host-local setting naming an HTTP mirror: a base URL
// under which the release files are served by base name (e.g. a cluster's
// file server). It is tried before the canonical URLs and verified the same
// way, so it is not part of the key either.
const SettingDataURL = "data.url"

// Download fetches one data set's release files from their canonical URLs,
// or first from the mirror directory in rc.Settings["data.mirror"] and then
// the HTTP mirror in rc.Settings["data.url"], checks
// each against its published SHA-256 and stores one output per file (see
// doc.go); CIFAR archives are extracted in Go and their members stored. A
// checksum mismatch fails the cell with an error naming the file, the
// expected and the actual digest, and nothing is stored. Progress is in
// bytes.
//
// Version history:
//
//   - 1: the release files, verified against their published SHA-256.
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
	if len(p.Members) > 0 {
		if rel, err = declaredRelease(rel, p.Members); err != nil {
			return fmt.Errorf("download.members: %w", err)
		}
	}
	if base := rc.Settings[SettingDataURL]; base != "" {
		rel = withURLPrefix(rel, strings.TrimSuffix(base, "/")+"/")
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

// withURLPrefix returns a copy of rel whose files (or archive) are first
// looked for at prefix + base name.
func withURLPrefix(rel *dataset.Release, prefix string) *dataset.Release {
	cp := *rel
	cp.Files = make([]dataset.File, len(rel.Files))
	for i, f := range rel.Files {
		f.URLs = append([]string{prefix + f.Name}, f.URLs...)
		cp.Files[i] = f
	}
	if rel.Archive != nil {
		a := *rel.Archive
		a.URLs = append([]string{prefix + a.Name}, a.URLs...)
		cp.Archive = &a
	}
	return &cp
}

// declaredRelease is rel with the members of DownloadParams.Members.
func declaredRelease(rel *dataset.Release, members []string) (*dataset.Release, error) {
	digests := map[string]string{}
	for _, m := range members {
		name, sum, ok := strings.Cut(m, " ")
		if !ok || digests[name] != "" {
			return nil, fmt.Errorf("%q: want one \"<member> <sha256>\" per member", m)
		}
		digests[name] = sum
	}
	return rel.WithMembers(digests)
}
