package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiffBuildsAreRevisions re-runs the review's probe (repro diff --
// --output=DIR/o store wrote a file outside the tree): a build that looks
// like an option, or names no commit, is a usage error before git runs
// with it, and nothing is written.
func TestDiffBuildsAreRevisions(t *testing.T) {
	t.Parallel()
	dir := workdir(t, tinyDAG)
	for _, args := range [][]string{{"init", "-q"}, {"add", "pipeline.toml"}, {"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", "commit", "-qm", "c"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, b)
		}
	}
	outside := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"option after --", []string{"diff", "--", "--output=" + filepath.Join(outside, "o"), "store"}, 2, "never an option for git"},
		{"option as B", []string{"diff", "HEAD", "--", "-p"}, 2, "never an option for git"},
		{"empty", []string{"diff", "", "store"}, 2, "never an option for git"},
		{"no such revision", []string{"diff", "nosuchrev", "store"}, 2, `build "nosuchrev" is no git revision`},
		{"a path, not a commit", []string{"diff", "HEAD:pipeline.toml", "store"}, 2, "is no git revision"},
		{"a real revision", []string{"diff", "HEAD~0", "store"}, 1, "no table or figure is committed there"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := reproSplit(t, dir, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("repro %q: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr, tc.code, tc.want)
			}
		})
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("diff wrote %s outside the tree", ents[0].Name())
	}
}
