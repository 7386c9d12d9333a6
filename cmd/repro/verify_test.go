package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestVerifyFindsEverything: a blob deleted from under a manifest, a stray
// file in the blob tree and a corrupt blob that cannot be moved aside are
// each reported (exit 1) with the cells that need them and the command that
// recomputes them; stray files are moved aside, and gc leaves them.
func TestVerifyFindsEverything(t *testing.T) {
	t.Parallel()
	dir := workdir(t, tinyDAG)
	mustRepro(t, dir, "run", "-q")

	d, blob := outputBlob(t, dir, "synth/l0/c0")
	os.Remove(blob)
	out, _, code := reproSplit(t, dir, "verify")
	for _, want := range []string{
		"MISSING blobs/" + d[:2] + "/" + d + ".zst: output out of cell synth/l0/c0: blob " + d[:12] + ": not found\n",
		"  needed by synth/l0/c0 (key ", "): repro run --only 'synth/l0/c0' recomputes it\n", "1 problem(s)",
	} {
		if code != 1 || !strings.Contains(out, want) {
			t.Errorf("verify after deleting a blob: exit %d, output lacks %q:\n%s", code, want, out)
		}
	}
	if out := mustRepro(t, dir, "run", "--only", "synth/l0/c0", "-q"); !strings.Contains(out, "ran 1 cell,") {
		t.Errorf("the command verify named: %s", out)
	}

	garbage := filepath.Join(dir, "store", "blobs", "00", "garbage.zst")
	os.MkdirAll(filepath.Dir(garbage), 0o755)
	os.WriteFile(garbage, []byte("not zstd"), 0o644)
	out, _, code = reproSplit(t, dir, "verify")
	if code != 1 || !strings.Contains(out, "STRAY blobs/00/garbage.zst: not a blob (the name is no SHA-256 digest); moved to corrupt/garbage.zst\n") {
		t.Errorf("verify with a stray file: exit %d:\n%s", code, out)
	}
	if _, err := os.Stat(garbage); err == nil {
		t.Errorf("the stray file was not moved")
	}
	if out, _, code := reproSplit(t, dir, "verify"); code != 0 || !strings.Contains(out, " 0 problem(s)") {
		t.Errorf("verify after the stray file was moved: exit %d:\n%s", code, out)
	}
	// gc never deletes a file it did not name: it says it left it.
	stray := filepath.Join(dir, "store", "blobs", "01", "notes.txt")
	os.MkdirAll(filepath.Dir(stray), 0o755)
	os.WriteFile(stray, []byte("x"), 0o644)
	old := time.Now().Add(-2 * time.Hour)
	os.Chtimes(stray, old, old)
	if out := mustRepro(t, dir, "gc", "--apply"); !strings.Contains(out, "left 1 other file in the blob tree alone (not named as repro names blobs; not deleted): blobs/01/notes.txt") {
		t.Errorf("gc --apply with a stray file: %s", out)
	}
	if _, err := os.Stat(stray); err != nil {
		t.Errorf("gc removed the stray file: %v", err)
	}

	// A corrupt blob where corrupt/ cannot be made: the corruption first,
	// then why it stayed.
	os.RemoveAll(filepath.Join(dir, "store", "corrupt"))
	os.WriteFile(filepath.Join(dir, "store", "corrupt"), nil, 0o444)
	d, blob = outputBlob(t, dir, "synth/l1/c4")
	b, _ := os.ReadFile(blob)
	b[len(b)/2] ^= 1
	os.Chmod(blob, 0o644)
	os.WriteFile(blob, b, 0o644)
	out, _, code = reproSplit(t, dir, "verify")
	want := "CORRUPT blobs/" + d[:2] + "/" + d + ".zst: blob " + d[:12] + ": corrupt"
	if code != 1 || !strings.Contains(out, want) || !strings.Contains(out, "; could not move it aside: mkdir ") || !strings.Contains(out, "needed by synth/l1/c4 (key ") {
		t.Errorf("verify of a corrupt blob that cannot be moved: exit %d, want %q:\n%s", code, want, out)
	}
}
