package buildstamp

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitRepo makes a repository with one commit of file a.txt.
func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	write(t, dir, "a.txt", "one\n")
	run(t, dir, "init", "-q")
	run(t, dir, "add", "a.txt")
	run(t, dir, "commit", "-q", "-m", "first")
	return dir
}

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t *testing.T, dir, name, s string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func compute(t *testing.T, dir string) Stamp {
	t.Helper()
	s, err := Compute(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestComputeCleanAndDirty(t *testing.T) {
	dir := gitRepo(t)
	head := run(t, dir, "rev-parse", "HEAD")
	clean := compute(t, dir)
	if clean != (Stamp{Revision: head}) || !clean.Clean() {
		t.Fatalf("clean tree: %+v, want revision %s, clean", clean, head)
	}

	write(t, dir, "a.txt", "two\n")
	d1 := compute(t, dir)
	if !d1.Dirty || d1.Diff == "" || d1.Revision != head || d1.Clean() {
		t.Fatalf("edited tree: %+v", d1)
	}
	// The same edit made again (staged this time) gives the same digest.
	write(t, dir, "a.txt", "one\n")
	if s := compute(t, dir); s != clean {
		t.Fatalf("edit undone: %+v, want %+v", s, clean)
	}
	write(t, dir, "a.txt", "two\n")
	run(t, dir, "add", "a.txt")
	if s := compute(t, dir); s != d1 {
		t.Errorf("same edit, staged: %+v, want %+v", s, d1)
	}
	write(t, dir, "a.txt", "three\n")
	if s := compute(t, dir); s.Diff == d1.Diff {
		t.Errorf("another edit has the first one's digest %s", s.Diff)
	}

	// An untracked file makes the tree dirty; its content enters the digest.
	write(t, dir, "a.txt", "one\n")
	run(t, dir, "add", "a.txt")
	write(t, dir, "b.txt", "x\n")
	u1 := compute(t, dir)
	write(t, dir, "b.txt", "y\n")
	u2 := compute(t, dir)
	if !u1.Dirty || !u2.Dirty || u1.Diff == u2.Diff {
		t.Errorf("untracked file: %+v then %+v, want dirty with two digests", u1, u2)
	}
	// An ignored one does not.
	write(t, dir, ".gitignore", "b.txt\n")
	run(t, dir, "add", ".gitignore")
	run(t, dir, "commit", "-q", "-m", "ignore b")
	if s := compute(t, dir); !s.Clean() {
		t.Errorf("only an ignored file added: %+v, want clean", s)
	}
}

// A git worktree, whose .git is a file: Go's -buildvcs does not stamp
// there, Compute does, and from a subdirectory too.
func TestComputeWorktree(t *testing.T) {
	dir := gitRepo(t)
	wt := filepath.Join(t.TempDir(), "wt")
	run(t, dir, "worktree", "add", "-q", "-b", "side", wt)
	sub := filepath.Join(wt, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, sub, "c.txt", "c\n")
	s := compute(t, sub)
	if s.Revision != run(t, dir, "rev-parse", "HEAD") || !s.Dirty || s.Diff == "" {
		t.Errorf("worktree with an untracked file: %+v", s)
	}
}

func TestComputeOutsideGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	if s, err := Compute(dir); err == nil || s.Revision != Unknown {
		t.Errorf("outside a repository: %+v, %v; want an error and revision unknown", s, err)
	}
}

func TestStringAndLDFlags(t *testing.T) {
	rev := strings.Repeat("ab", 20)
	for _, c := range []struct {
		s    Stamp
		want string
	}{
		{Stamp{Revision: Unknown}, "unknown"},
		{Stamp{}, "unknown"},
		{Stamp{Revision: rev}, "abababababab"},
		{Stamp{Revision: rev, Dirty: true}, "abababababab+dirty"},
		{Stamp{Revision: rev, Dirty: true, Diff: strings.Repeat("9", 64)}, "abababababab+dirty (changes 999999999999)"},
	} {
		if got := c.s.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.s, got, c.want)
		}
	}
	s := Stamp{Revision: rev, Dirty: true, Diff: "d1"}
	want := "-X repro/internal/buildstamp.revision=" + rev + " -X repro/internal/buildstamp.dirty=true -X repro/internal/buildstamp.diff=d1"
	if got := s.LDFlags(); got != want {
		t.Errorf("LDFlags: %q, want %q", got, want)
	}
}
