package main

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"repro/internal/buildstamp"
)

// cloneWithLedger copies what a fresh clone's make paper reads and
// writes: pipeline.toml, paper/ whole (the ledger paper/cells and the
// site included) but the files .gitignore leaves out (the PDF, LaTeX's
// logs).
func cloneWithLedger(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := copyFile(filepath.Join(repoRoot, "pipeline.toml"), filepath.Join(dir, "pipeline.toml")); err != nil {
		t.Fatal(err)
	}
	files, err := paperFiles(filepath.Join(repoRoot, "paper"))
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range files {
		to := filepath.Join(dir, "paper", rel)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := copyFile(filepath.Join(repoRoot, "paper", rel), to); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}

// paperFiles lists the files under root a commit would hold (relative,
// sorted): not LaTeX's outputs, the PDF or a smoke profile's folder, which
// .gitignore leaves out.
func paperFiles(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == "smoke" {
				return filepath.SkipDir
			}
			return nil
		}
		if filepath.Dir(rel) == "." {
			switch filepath.Ext(rel) {
			case ".aux", ".log", ".out", ".pdf":
				return nil
			}
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	slices.Sort(out)
	return out, err
}

// TestMakePaperLeavesTreeClean: what make paper runs on a fresh clone
// (repro run, then repro report), by a binary stamped with another
// revision and a dirty tree, writes every committed file of paper/ back
// byte for byte and adds none: git status stays empty, and the next make
// build is not stamped dirty. Committed outputs are a function of the
// committed inputs, never of the build that renders them.
func TestMakePaperLeavesTreeClean(t *testing.T) {
	if testing.Short() {
		t.Skip("pulls the ledger's 1,600 records into an empty store and writes the site; about 15 s")
	}
	t.Parallel()
	bin := reproStamped(t, buildstamp.Stamp{Revision: strings.Repeat("d", 40), Dirty: true, Diff: strings.Repeat("e", 64)}.LDFlags())
	dir := cloneWithLedger(t)
	store := filepath.Join(t.TempDir(), "store")
	env := []string{"REPRO_STORE=" + store}
	if m := os.Getenv("REPRO_DATA_MIRROR"); m != "" {
		env = append(env, "REPRO_DATA_MIRROR="+m)
	}
	for _, args := range [][]string{{"run", "--profile", "paper", "-q"}, {"report", "--profile", "paper"}} {
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = dir, append(cleanEnv(), env...)
		var o, e strings.Builder
		cmd.Stdout, cmd.Stderr = &o, &e
		code := exitCode(t, cmd.Run())
		out, errOut := o.String(), e.String()
		if code != 0 && !(args[0] == "run" && strings.Contains(out+errOut, "blocked by download/cifar100")) {
			t.Fatalf("repro %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
	}
	want, err := paperFiles(filepath.Join(repoRoot, "paper"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := paperFiles(filepath.Join(dir, "paper"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range got {
		if _, ok := slices.BinarySearch(want, f); !ok {
			t.Errorf("?? paper/%s: written by make paper, not committed", f)
		}
	}
	var changed int
	for _, f := range want {
		a, err1 := os.ReadFile(filepath.Join(repoRoot, "paper", f))
		b, err2 := os.ReadFile(filepath.Join(dir, "paper", f))
		if err1 != nil || err2 != nil {
			t.Errorf(" D paper/%s: %v %v", f, err1, err2)
			continue
		}
		if !bytes.Equal(a, b) {
			if changed++; changed <= 10 {
				t.Errorf(" M paper/%s: make paper rewrote it (first difference: %s)", f, firstDiff(string(b), string(a)))
			}
		}
	}
	if changed > 10 {
		t.Errorf("%d files modified in all", changed)
	}
}

// cleanEnv is the test's environment without REPRO_ variables.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "REPRO_") {
			env = append(env, kv)
		}
	}
	return env
}
