package outdir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var testOwner = Owner{Marker: ".repro-test", Kind: "repro test v1", Legacy: func(rel string) bool { return rel == "index.html" }}

// writeTree makes dir with files (slash path -> content; a content of
// "->target" makes a symlink to target).
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(content, "->"); ok {
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	marker := string(testOwner.MarkerText([]string{"a.html", "sub/b.html"}))
	for _, tc := range []struct {
		name    string
		files   map[string]string // nil: the folder is missing
		foreign string            // the entry Check must name; "" when it accepts
	}{
		{"missing", nil, ""},
		{"empty", map[string]string{}, ""},
		{"temporary files only", map[string]string{".tmp-x-123": "half"}, ""},
		{"marked", map[string]string{".repro-test": marker, "a.html": "a", "sub/b.html": "b"}, ""},
		{"marked, a file it does not list", map[string]string{".repro-test": marker, "a.html": "a", "notes.txt": "mine"}, "notes.txt"},
		{"marked, a folder it does not list", map[string]string{".repro-test": marker, "a.html": "a", "other/x": "x"}, "other/x"},
		{"marker of another kind", map[string]string{".repro-test": "repro crate v1\na.html\n", "a.html": "a"}, ".repro-test"},
		{"marker is a symlink", map[string]string{".repro-test": "->" + "/etc/hostname", "a.html": "a"}, ".repro-test"},
		{"foreign", map[string]string{"notes.txt": "mine"}, "notes.txt"},
		{"store", map[string]string{"README": "This directory is a repro artifact store", "blobs/ab/x.zst": "z"}, "README"},
		{"home-like", map[string]string{".bashrc": "alias", "Documents/thesis.tex": "x"}, ".bashrc"},
		{"legacy", map[string]string{"index.html": "old site"}, ""},
		{"legacy with a stray file", map[string]string{"index.html": "old site", "store/README": "x"}, "store/README"},
		{"only an empty folder", map[string]string{"x/.tmp-y": ""}, "x/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "out")
			if tc.files != nil {
				writeTree(t, dir, tc.files)
			}
			err := testOwner.Check(dir)
			if tc.foreign == "" {
				if err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			}
			var fe *ForeignError
			if !errors.As(err, &fe) || !errors.Is(err, ErrForeign) || fe.Entry != tc.foreign {
				t.Fatalf("Check = %v, want a foreign folder naming %s", err, tc.foreign)
			}
			if !strings.Contains(err.Error(), "nothing was written or removed") {
				t.Errorf("Check's error does not say nothing was touched: %v", err)
			}
		})
	}
}

func TestCheckNotAFolder(t *testing.T) {
	t.Parallel()
	f := filepath.Join(t.TempDir(), "f")
	os.WriteFile(f, []byte("x"), 0o644)
	if err := testOwner.Check(f); err == nil || !strings.Contains(err.Error(), "is not a folder") {
		t.Fatalf("Check(a file) = %v", err)
	}
}

// RemoveOwned removes what the marker lists and keeps anything that came
// later, saying so.
func TestRemoveOwnedKeepsTheRest(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "out")
	writeTree(t, dir, map[string]string{".repro-test": string(testOwner.MarkerText([]string{"a.html", "sub/b.html"})), "a.html": "a", "sub/b.html": "b"})
	owned, err := testOwner.Owned(dir)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "sub", "late.txt"), []byte("mine"), 0o644) // after the check
	err = testOwner.RemoveOwned(dir, owned)
	if err == nil || !strings.Contains(err.Error(), "sub/late.txt") {
		t.Fatalf("RemoveOwned = %v, want it to name sub/late.txt", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "sub", "late.txt")); string(b) != "mine" {
		t.Fatalf("a file the marker does not list was removed")
	}
	if _, err := os.Stat(filepath.Join(dir, "a.html")); !os.IsNotExist(err) {
		t.Errorf("a listed file was kept (%v)", err)
	}
	dir2 := filepath.Join(t.TempDir(), "out")
	writeTree(t, dir2, map[string]string{".repro-test": string(testOwner.MarkerText([]string{"sub/b.html"})), "sub/b.html": "b"})
	owned, _ = testOwner.Owned(dir2)
	if err := testOwner.RemoveOwned(dir2, owned); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir2); !os.IsNotExist(err) {
		t.Errorf("an owned folder was not removed whole (%v)", err)
	}
}
