package dataset

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// serveRelease returns a copy of rel whose URLs point at a test server
// that serves body for every file, transformed by mode.
func serveRelease(t *testing.T, rel *Release, bodies map[string][]byte, mode string) *Release {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := bodies[filepath.Base(r.URL.Path)]
		if !ok || strings.HasPrefix(r.URL.Path, "/missing/") {
			http.NotFound(w, r)
			return
		}
		switch mode {
		case "corrupt":
			b = append([]byte(nil), b...)
			b[len(b)/2] ^= 0x10
		case "short": // announces the full length, sends half, hangs up
			w.Header().Set("Content-Length", strconv.Itoa(len(b)))
			w.Write(b[:len(b)/2])
			return
		case "truncated": // no length announced, half the bytes
			w.Header().Set("Transfer-Encoding", "chunked")
			b = b[:len(b)/2]
		}
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	cp := *rel
	fix := func(f File) File {
		f.URLs = []string{srv.URL + "/missing/" + f.Name, srv.URL + "/data/" + f.Name}
		return f
	}
	cp.Files = nil
	for _, f := range rel.Files {
		cp.Files = append(cp.Files, fix(f))
	}
	if rel.Archive != nil {
		a := fix(*rel.Archive)
		cp.Archive = &a
	}
	return &cp
}

func TestFetchHTTP(t *testing.T) {
	root := dataRoot(t)
	mnist, _ := ReleaseFor("mnist")
	// Real bytes: the two label files (small) of the genuine release.
	rel := *mnist
	rel.Files = []File{mnist.Files[1], mnist.Files[3]}
	bodies := map[string][]byte{}
	for _, f := range rel.Files {
		b, err := os.ReadFile(filepath.Join(root, "mnist", f.Name))
		if err != nil {
			t.Fatal(err)
		}
		bodies[f.Name] = b
	}
	for _, c := range []struct {
		mode    string
		wantErr string
	}{
		{"ok", ""},
		{"corrupt", "expected " + rel.Files[0].SHA256},
		{"short", "unexpected EOF"},
		{"truncated", "expected " + rel.Files[0].SHA256},
	} {
		t.Run(c.mode, func(t *testing.T) {
			r := serveRelease(t, &rel, bodies, c.mode)
			var last, total int64
			var log bytes.Buffer
			f := &Fetcher{Progress: func(d, tot int64) { last, total = d, tot }, Log: &log}
			out, err := f.Fetch(context.Background(), r)
			if c.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				for _, fl := range rel.Files {
					if SHA256Hex(out[fl.Name]) != fl.SHA256 {
						t.Errorf("%s: wrong bytes", fl.Name)
					}
				}
				if last != total || total != 28881+4542 {
					t.Errorf("progress ended at %d of %d, want %d of %d", last, total, 28881+4542, 28881+4542)
				}
				return
			}
			if err == nil {
				t.Fatalf("Fetch succeeded on a %s response", c.mode)
			}
			if out != nil {
				t.Errorf("Fetch returned %d outputs with an error", len(out))
			}
			if !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), rel.Files[0].Name) {
				t.Errorf("error %q does not name the file and %q", err, c.wantErr)
			}
			if c.mode != "short" {
				var ce *ChecksumError
				if !errors.As(err, &ce) || !errors.Is(err, ErrChecksum) {
					t.Errorf("error %v is not a *ChecksumError", err)
				} else if ce.Actual == ce.Expected || len(ce.Actual) != 64 {
					t.Errorf("checksum error reports actual %q", ce.Actual)
				}
			}
		})
	}
}

// tinyArchive builds a CIFAR-like release: a tar.gz holding dir/a.bin,
// dir/b.bin and an unrelated file.
func tinyArchive(t testing.TB) (*Release, []byte) {
	t.Helper()
	files := map[string][]byte{"a.bin": bytes.Repeat([]byte{1, 2, 3}, 100), "b.bin": []byte("hello")}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	tw.WriteHeader(&tar.Header{Name: "tiny/", Typeflag: tar.TypeDir, Mode: 0o755})
	for _, n := range []string{"a.bin", "b.bin"} {
		tw.WriteHeader(&tar.Header{Name: "tiny/" + n, Typeflag: tar.TypeReg, Size: int64(len(files[n])), Mode: 0o644})
		tw.Write(files[n])
	}
	tw.WriteHeader(&tar.Header{Name: "other/a.bin", Typeflag: tar.TypeReg, Size: 1, Mode: 0o644})
	tw.Write([]byte{9})
	tw.Close()
	zw.Close()
	arc := buf.Bytes()
	rel := &Release{
		Dataset: "tiny", MirrorDir: "tiny",
		Archive:    &File{Name: "tiny.tar.gz", SHA256: SHA256Hex(arc), Size: int64(len(arc))},
		ArchiveDir: "tiny",
		Members:    []Member{{"a.bin", SHA256Hex(files["a.bin"])}, {"b.bin", SHA256Hex(files["b.bin"])}},
	}
	return rel, arc
}

func TestFetchArchive(t *testing.T) {
	t.Parallel()
	rel, arc := tinyArchive(t)
	for _, c := range []struct {
		mode string
		ok   bool
	}{{"ok", true}, {"corrupt", false}, {"short", false}} {
		r := serveRelease(t, rel, map[string][]byte{"tiny.tar.gz": arc}, c.mode)
		out, err := (&Fetcher{}).Fetch(context.Background(), r)
		if c.ok != (err == nil) {
			t.Fatalf("%s: err = %v", c.mode, err)
		}
		if c.ok && (len(out) != 2 || string(out["b.bin"]) != "hello") {
			t.Errorf("%s: outputs %v", c.mode, out)
		}
	}
	// The archive from a mirror directory, and a member with a wrong digest.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "tiny.tar.gz"), arc, 0o644)
	if out, err := (&Fetcher{Mirror: dir}).Fetch(context.Background(), rel); err != nil || len(out) != 2 {
		t.Errorf("mirror archive: %d outputs, %v", len(out), err)
	}
	bad := *rel
	bad.Members = []Member{{"a.bin", strings.Repeat("0", 64)}}
	if _, err := ExtractTarGz(context.Background(), arc, "tiny", bad.Members); !errors.Is(err, ErrChecksum) {
		t.Errorf("extract with wrong member digest: %v", err)
	}
	missing := []Member{{"c.bin", strings.Repeat("0", 64)}}
	if _, err := ExtractTarGz(context.Background(), arc, "tiny", missing); !errors.Is(err, ErrMalformed) {
		t.Errorf("extract of an absent member: %v", err)
	}
	if _, err := ExtractTarGz(context.Background(), arc[:len(arc)/2], "tiny", rel.Members); err == nil {
		t.Error("extract of a truncated archive succeeded")
	}
}

func TestFetchMirror(t *testing.T) {
	root := dataRoot(t)
	for _, ds := range []string{"mnist", "cifar10"} {
		t.Run(ds, func(t *testing.T) {
			rel, _ := ReleaseFor(ds)
			// A client that fails every request proves nothing left the machine.
			f := &Fetcher{Mirror: root, Client: &http.Client{Transport: failTransport{}}}
			out, err := f.Fetch(context.Background(), rel)
			if err != nil {
				t.Fatal(err)
			}
			if len(out) != len(rel.Outputs()) {
				t.Errorf("%d outputs, want %v", len(out), rel.Outputs())
			}
		})
	}
	// A corrupt mirror file is an error naming it.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, MNISTTestLabels), []byte("not the file"), 0o644)
	rel, _ := ReleaseFor("mnist")
	one := *rel
	one.Files = rel.Files[3:]
	_, err := (&Fetcher{Mirror: dir, Client: &http.Client{Transport: failTransport{}}}).Fetch(context.Background(), &one)
	var ce *ChecksumError
	if !errors.As(err, &ce) || ce.File != MNISTTestLabels {
		t.Errorf("corrupt mirror file: %v", err)
	}
}

// TestFetchMirrorLacksFile: a file missing from the mirror is an error that
// says the mirror was checked and lacked it, besides the URL failures.
func TestFetchMirrorLacksFile(t *testing.T) {
	dir := t.TempDir()
	rel, _ := ReleaseFor("mnist")
	one := *rel
	one.Files = rel.Files[3:]
	_, err := (&Fetcher{Mirror: dir, Client: &http.Client{Transport: failTransport{}}}).Fetch(context.Background(), &one)
	want := MNISTTestLabels + ": not on the data mirror, and no network\nthe data mirror " + dir + " lacks it (looked for " + filepath.Join(dir, MNISTTestLabels) + " and " + filepath.Join(dir, "mnist", MNISTTestLabels) + "): "
	if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Count(err.Error(), "network disabled in tests") != len(one.Files[0].URLs) {
		t.Errorf("file missing from the mirror: %v\nwant it to start %q and list every URL", err, want)
	}
	if !errors.Is(err, ErrAbsent) {
		t.Errorf("file missing from the mirror, no network: %v is not ErrAbsent", err)
	}
	_, err = (&Fetcher{Client: &http.Client{Transport: failTransport{}}}).Fetch(context.Background(), &one)
	if err == nil || !strings.HasPrefix(err.Error(), MNISTTestLabels+": no data mirror, and no network\nno data mirror set") {
		t.Errorf("no mirror: %v", err)
	}
	if errors.Is(err, ErrAbsent) {
		t.Errorf("no mirror set: %v is ErrAbsent; only a mirror that lacks the file makes a release absent by setup", err)
	}
	// A server that answers but refuses the file is not "no network".
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	one.Files = []File{one.Files[0]}
	one.Files[0].URLs = []string{srv.URL + "/" + MNISTTestLabels}
	_, err = (&Fetcher{Mirror: dir}).Fetch(context.Background(), &one)
	if err == nil || !strings.HasPrefix(err.Error(), MNISTTestLabels+": not on the data mirror, and no URL served it\n") || !strings.Contains(err.Error(), "404 Not Found") {
		t.Errorf("server refusing the file: %v", err)
	}
	if errors.Is(err, ErrAbsent) {
		t.Errorf("server refusing the file: %v is ErrAbsent", err)
	}
}

type failTransport struct{}

func (failTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("network disabled in tests")
}

func FuzzExtractTarGz(f *testing.F) {
	rel, arc := tinyArchive(f)
	f.Add(arc)
	f.Add(arc[:len(arc)/2])
	f.Add([]byte{0x1f, 0x8b, 8, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := ExtractTarGz(context.Background(), b, rel.ArchiveDir, rel.Members)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrChecksum) {
				t.Fatalf("error %v wraps neither ErrMalformed nor ErrChecksum", err)
			}
			return
		}
		// Success means every member is there with its published digest.
		for _, m := range rel.Members {
			if SHA256Hex(out[m.Name]) != m.SHA256 {
				t.Fatalf("member %s extracted with the wrong digest", m.Name)
			}
		}
	})
}
