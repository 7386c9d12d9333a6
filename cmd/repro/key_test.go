package main

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"

	"repro/artifacts"
)

// TestKeyPrintsTheHashedText: for every cell, the text repro key prints
// hashes to the key the cell is stored under; before an input is computed
// key names it and fails.
func TestKeyPrintsTheHashedText(t *testing.T) {
	t.Parallel()
	dir := workdir(t, tinyDAG)
	var pending string
	for id, v := range planState(t, dir) {
		if strings.HasPrefix(v, "run  ") { // key unknown: an input is not computed
			pending = id
		}
	}
	if pending == "" {
		t.Fatal("no cell waits on an input before the first run")
	}
	if out, errOut, code := reproSplit(t, dir, "key", pending); code != 1 || out != "" || !strings.Contains(errOut, "not computed") {
		t.Errorf("key %s before the run: code %d, stdout %q, stderr %q; want 1 and the missing input", pending, code, out, errOut)
	}
	if _, _, code := reproSplit(t, dir, "key", "no/such/cell"); code != 2 {
		t.Errorf("key of an unknown cell: exit %d, want 2", code)
	}

	mustRepro(t, dir, "run", "-q")
	st, err := artifacts.Open(filepath.Join(dir, "store"), artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	state := planState(t, dir)
	for id := range state {
		text, errOut, code := reproSplit(t, dir, "key", id)
		if code != 0 {
			t.Fatalf("key %s: exit %d: %s", id, code, errOut)
		}
		ref, err := st.GetRef("default", id)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(text))
		if got := hex.EncodeToString(sum[:]); got != ref.String() {
			t.Errorf("sha256(key %s) = %s, want the stored key %s; text:\n%s", id, got, ref, text)
		}
		if _, err := st.GetManifest(ref); err != nil {
			t.Errorf("cell %s: no manifest under its key: %v", id, err)
		}
		if !strings.HasPrefix(text, "repro cell v1\nstage synth\nversion ") {
			t.Errorf("key %s text starts %q", id, text)
		}
	}
}
