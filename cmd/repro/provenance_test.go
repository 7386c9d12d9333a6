package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repro/internal/ledgerprov"
)

// TestLedgerReadmeProvenance: the results ledger's README states which
// commits computed the records the paper profile reaches there, as
// 'repro provenance' counts them; a README that says anything else (a
// ledger pushed to without 'make ledger-readme', a hand edit) fails.
func TestLedgerReadmeProvenance(t *testing.T) {
	var out, errb bytes.Buffer
	args := []string{"provenance", "--config", filepath.Join(repoRoot, "pipeline.toml"), "--store", t.TempDir(), "--profile", "paper", "--remote", "ledger", "--check"}
	getenv := func(k string) string {
		if k == "REPRO_STORE" {
			return ""
		}
		return os.Getenv(k)
	}
	if code := runMain(context.Background(), args, &out, &errb, getenv); code != 0 {
		t.Fatalf("repro %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errb.String())
	}
	readme, err := os.ReadFile(filepath.Join(repoRoot, "paper", "cells", "README"))
	if err != nil {
		t.Fatal(err)
	}
	stated, ok, err := ledgerprov.Stated(string(readme))
	if err != nil || !ok {
		t.Fatalf("paper/cells/README: section %v, %v", ok, err)
	}
	// --check compared the section with the statement it printed.
	if !strings.Contains(stated, out.String()[:strings.Index(out.String(), "\n")]) {
		t.Errorf("the README's section does not hold the statement printed:\n%s", out.String())
	}
}

// TestLedgerReadmeProvenanceLie: --check fails on a README whose section
// names a commit the records do not (here a copy of the repository whose
// ledger README gained a line), and --write then makes it true again.
func TestLedgerReadmeProvenanceLie(t *testing.T) {
	root := t.TempDir()
	linkAllBut(t, repoRoot, root, "paper")
	linkAllBut(t, filepath.Join(repoRoot, "paper"), filepath.Join(root, "paper"), "cells")
	ledger := filepath.Join(root, "paper", "cells")
	linkAllBut(t, filepath.Join(repoRoot, "paper", "cells"), ledger, "README")
	readme, err := os.ReadFile(filepath.Join(repoRoot, "paper", "cells", "README"))
	if err != nil {
		t.Fatal(err)
	}
	lie := strings.Replace(string(readme), ledgerprov.End, "  commit 0000000000000000000000000000000000000000: 1 record (computed): 1 train\n"+ledgerprov.End, 1)
	if lie == string(readme) {
		t.Fatal("paper/cells/README has no generated section")
	}
	path := filepath.Join(ledger, "README")
	if err := os.WriteFile(path, []byte(lie), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(flag string) (int, string) {
		var out bytes.Buffer
		args := []string{"provenance", "--config", filepath.Join(root, "pipeline.toml"), "--store", t.TempDir(), "--profile", "paper", "--remote", "ledger", flag}
		code := runMain(context.Background(), args, &out, &out, func(k string) string {
			if k == "REPRO_STORE" {
				return ""
			}
			return os.Getenv(k)
		})
		return code, out.String()
	}
	if code, out := run("--check"); code != 1 || !strings.Contains(out, "states another provenance than its records") {
		t.Fatalf("--check on a lying README: exit %d\n%s", code, out)
	}
	if code, out := run("--write"); code != 0 {
		t.Fatalf("--write: exit %d\n%s", code, out)
	}
	if b, _ := os.ReadFile(path); string(b) != string(readme) {
		t.Errorf("--write did not restore the README:\n%s", b)
	}
}

// linkAllBut makes dst a directory of symbolic links to every entry of src
// except the one named but.
func linkAllBut(t *testing.T, src, dst, but string) {
	t.Helper()
	abs, err := filepath.Abs(src)
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(abs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() != but {
			if err := os.Symlink(filepath.Join(abs, e.Name()), filepath.Join(dst, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
}
