package stages

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"repro/internal/dataset"
	"repro/pipeline"
)

// mirrorDir is the data mirror a run of the module's pipeline.toml reads
// (settings.data_mirror, or REPRO_DATA_MIRROR); tests that need it skip
// when it lacks MNIST.
func mirrorDir(t *testing.T) string {
	t.Helper()
	cfg, err := pipeline.LoadConfig("../pipeline.toml")
	if err != nil {
		t.Fatal(err)
	}
	dir := cfg.HostSettings(os.Getenv)[SettingDataMirror]
	if _, err := os.Stat(filepath.Join(dir, "mnist", dataset.MNISTTrainImages)); dir == "" || err != nil {
		t.Skipf("the data mirror %q (settings.data_mirror or REPRO_DATA_MIRROR) lacks MNIST", dir)
	}
	return dir
}

func TestDownloadMirror(t *testing.T) {
	dir := mirrorDir(t)
	for _, ds := range []string{"mnist", "cifar10"} {
		t.Run(ds, func(t *testing.T) {
			out, order := runStage(t, Download, &DownloadParams{Dataset: ds}, nil, map[string]string{SettingDataMirror: dir})
			rel, _ := dataset.ReleaseFor(ds)
			if strings.Join(order, " ") != strings.Join(rel.Outputs(), " ") {
				t.Errorf("outputs %v, want %v", order, rel.Outputs())
			}
			// The outputs' digests are the published ones (README.md).
			checkGolden(t, "download-"+ds, digestLines(out, order))
		})
	}
}

// TestDownloadHTTP serves the real MNIST bytes over HTTP (settings
// data.url, no directory mirror) and checks the stage stores exactly the
// published files. Failure modes of the HTTP path (truncated, corrupted
// responses) are tested in internal/dataset.
func TestDownloadHTTP(t *testing.T) {
	dir := mirrorDir(t)
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.ServeFile(w, r, filepath.Join(dir, "mnist", filepath.Base(r.URL.Path)))
	}))
	defer srv.Close()
	out, order := runStage(t, Download, &DownloadParams{Dataset: "mnist"}, nil, map[string]string{SettingDataURL: srv.URL + "/mnist/"})
	if hits.Load() != 4 {
		t.Errorf("%d requests, want 4", hits.Load())
	}
	checkGolden(t, "download-mnist", digestLines(out, order))
}

func TestDownloadCorruptMirror(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := []byte("these are not the MNIST labels")
	for _, f := range []string{dataset.MNISTTrainImages, dataset.MNISTTrainLabels, dataset.MNISTTestImages, dataset.MNISTTestLabels} {
		os.WriteFile(filepath.Join(dir, f), bad, 0o644)
	}
	out, _, err := execStage(t, Download, &DownloadParams{Dataset: "mnist"}, nil, map[string]string{SettingDataMirror: dir})
	var ce *dataset.ChecksumError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a checksum error", err)
	}
	msg := err.Error()
	for _, s := range []string{dataset.MNISTTrainImages, "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609", dataset.SHA256Hex(bad)} {
		if !strings.Contains(msg, s) {
			t.Errorf("error %q does not mention %s", msg, s)
		}
	}
	if out != nil {
		t.Errorf("a failed download stored %d outputs", len(out))
	}
}

func TestDownloadUnknown(t *testing.T) {
	t.Parallel()
	// The release URL answers 404, so the network path fails at once.
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	for _, ds := range []string{"svhn", "cifar100"} {
		// cifar100 is absent from an empty mirror and from the URL.
		_, _, err := execStage(t, Download, &DownloadParams{Dataset: ds}, nil,
			map[string]string{SettingDataMirror: t.TempDir(), SettingDataURL: srv.URL + "/"})
		if err == nil {
			t.Errorf("%s: no error", ds)
		}
	}
}
