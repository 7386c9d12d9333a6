// Package buildstamp names the source a repro binary was built from: the
// git commit, whether the tree had uncommitted changes, and if so the
// digest of those changes, so that two builds of the same edit agree.
//
// Go's own VCS stamp (-buildvcs) is not enough: GOFLAGS may switch it off,
// it does not see a git worktree (whose .git is a file), and it records a
// dirty tree without saying what was changed. So the build computes the
// stamp with git (Compute, or `go run ./internal/buildstamp/ldflags`) and
// links it in with -ldflags -X; Binary reads it back, falling back to Go's
// stamp for a binary built otherwise.
package buildstamp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
)

// Unknown is the revision of a binary that cannot name its source.
const Unknown = "unknown"

// Set with -ldflags -X by LDFlags; empty in a binary built without them.
var (
	revision string
	dirty    string // "true" or "false"
	diff     string // Stamp.Diff
)

// Stamp names the source of a build.
type Stamp struct {
	Revision string // git commit (40 hex digits), or Unknown
	Dirty    bool   // the tree had uncommitted changes (untracked files too)
	// Diff is, for a dirty tree, the SHA-256 (hex) of its changes: the
	// binary diff of the tracked files against the commit, then each
	// untracked, not ignored file's name and content digest in name order.
	// Empty for a clean tree, and for a dirty build stamped by Go alone.
	Diff string
}

// Clean reports whether the stamp names a commit with nothing changed: the
// only builds whose records a remote accepts.
func (s Stamp) Clean() bool { return s.Revision != Unknown && s.Revision != "" && !s.Dirty }

// String is the stamp as people read it: "090770c", "090770c+dirty
// (changes 3f2a9c01d4e5)" or "unknown".
func (s Stamp) String() string {
	if s.Revision == "" || s.Revision == Unknown {
		return Unknown
	}
	r := s.Revision
	if len(r) > 12 {
		r = r[:12]
	}
	if !s.Dirty {
		return r
	}
	if s.Diff == "" {
		return r + "+dirty"
	}
	return fmt.Sprintf("%s+dirty (changes %.12s)", r, s.Diff)
}

// Binary returns the stamp of the running binary: the one linked in by
// LDFlags, else Go's VCS stamp, else Revision Unknown.
func Binary() Stamp {
	if revision != "" {
		return Stamp{Revision: revision, Dirty: dirty == "true", Diff: diff}
	}
	s := Stamp{Revision: Unknown}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return s
	}
	for _, kv := range info.Settings {
		switch kv.Key {
		case "vcs.revision":
			s.Revision = kv.Value
		case "vcs.modified":
			s.Dirty = kv.Value == "true"
		}
	}
	return s
}

// Compute reads the stamp of the git tree that holds dir (a worktree or a
// clone) with the git command.
func Compute(dir string) (Stamp, error) {
	git := func(args ...string) ([]byte, error) {
		cmd := exec.Command("git", append([]string{"-c", "core.quotepath=off"}, args...)...)
		cmd.Dir = dir
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("git %s in %s: %v: %s", strings.Join(args, " "), dir, err, strings.TrimSpace(stderr.String()))
		}
		return out, nil
	}
	rev, err := git("rev-parse", "--verify", "HEAD")
	if err != nil {
		return Stamp{Revision: Unknown}, err
	}
	top, err := git("rev-parse", "--show-toplevel")
	if err != nil {
		return Stamp{Revision: Unknown}, err
	}
	s := Stamp{Revision: strings.TrimSpace(string(rev))}
	d, err := git("diff", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", "--binary", "HEAD", "--")
	if err != nil {
		return Stamp{Revision: Unknown}, err
	}
	others, err := git("ls-files", "-z", "--others", "--exclude-standard", "--full-name", ":/")
	if err != nil {
		return Stamp{Revision: Unknown}, err
	}
	var names []string
	for _, n := range strings.Split(string(others), "\x00") {
		if n != "" {
			names = append(names, n)
		}
	}
	if len(d) == 0 && len(names) == 0 {
		return s, nil
	}
	sort.Strings(names)
	h := sha256.New()
	fmt.Fprintf(h, "diff %d\n", len(d))
	h.Write(d)
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(top)), n))
		if err != nil {
			return Stamp{Revision: Unknown}, fmt.Errorf("untracked file: %w", err)
		}
		fmt.Fprintf(h, "untracked %s\x00%x\n", n, sha256.Sum256(b))
	}
	s.Dirty, s.Diff = true, hex.EncodeToString(h.Sum(nil))
	return s, nil
}

// LDFlags is the value of go build's -ldflags that links s into a binary.
func (s Stamp) LDFlags() string {
	const pkg = "repro/internal/buildstamp."
	return fmt.Sprintf("-X %srevision=%s -X %sdirty=%t -X %sdiff=%s", pkg, s.Revision, pkg, s.Dirty, pkg, s.Diff)
}

// BuildFlags are the `go build` flags that stamp a binary with the source
// tree holding dir, whatever GOFLAGS says: what `make build` passes, for
// the tests that build the CLI.
func BuildFlags(dir string) ([]string, error) {
	s, err := Compute(dir)
	if err != nil {
		return nil, err
	}
	return []string{"-buildvcs=auto", "-ldflags=" + s.LDFlags()}, nil
}
