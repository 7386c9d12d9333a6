package ledgertrust

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"repro/artifacts"
)

// ErrNoGit: the ledger is not kept in git (a shared folder remote, a
// scratch remote git ignores or tracks none of, a repository without a
// commit): there is no committed version to check against.
var ErrNoGit = errors.New("not in a git work tree")

// ErrUncommitted is wrapped by Vet's error for a record whose bytes are not
// the committed ones (edited, or added since the last commit).
var ErrUncommitted = errors.New("differs from its committed version")

// ErrRewritten is wrapped by Vet's error for a record whose committed
// history changes its outputs or key.
var ErrRewritten = errors.New("its committed history changes its outputs")

// Ledger is what Check read of a ledger's git history. It is safe for
// concurrent use.
type Ledger struct {
	dir       string
	committed map[string]string // record path (slash, relative to dir) -> blob ID at HEAD
	rewritten map[string]string // record path -> the commit that changed its outputs
	changes   int               // committed modifications of record files read
}

// Check reads the committed state and history of the records under dir
// (a ledger folder: cells/XX/<key>.json) in its git repository.
func Check(ctx context.Context, dir string) (*Ledger, error) {
	if out, err := git(ctx, dir, nil, "rev-parse", "--is-inside-work-tree"); err != nil || strings.TrimSpace(string(out)) != "true" {
		return nil, fmt.Errorf("ledger %s: %w", dir, ErrNoGit)
	}
	l := &Ledger{dir: dir, committed: map[string]string{}, rewritten: map[string]string{}}
	tree, err := git(ctx, dir, nil, "ls-tree", "-r", "-z", "HEAD", "--", "cells")
	if err != nil {
		if _, herr := git(ctx, dir, nil, "rev-parse", "--verify", "--quiet", "HEAD"); herr != nil {
			return nil, fmt.Errorf("ledger %s: %w (no commit yet)", dir, ErrNoGit)
		}
		return nil, err
	}
	for _, ent := range bytes.Split(tree, []byte{0}) {
		// "<mode> blob <id>\t<path>"
		meta, path, ok := bytes.Cut(ent, []byte{'\t'})
		if !ok {
			continue
		}
		f := strings.Fields(string(meta))
		if len(f) == 3 && f[1] == "blob" {
			l.committed[string(path)] = f[2]
		}
	}
	if len(l.committed) == 0 {
		// A remote in a work tree that commits none of its records (a
		// scratch remote, an ignored folder) is not a ledger kept in git.
		return nil, fmt.Errorf("ledger %s: %w (git tracks none of its records)", dir, ErrNoGit)
	}
	if err := l.readHistory(ctx); err != nil {
		return nil, err
	}
	return l, nil
}

// change is one committed modification of a record file.
type change struct {
	commit, path, before, after string
}

// readHistory finds the records whose committed versions disagree on
// their outputs or key.
func (l *Ledger) readHistory(ctx context.Context) error {
	out, err := git(ctx, l.dir, nil, "log", "--format=C %H", "--raw", "--no-abbrev", "--no-renames", "--relative", "-z", "--", "cells")
	if err != nil {
		return err
	}
	var changes []change
	commit := ""
	fields := bytes.Split(out, []byte{0})
	for i := 0; i < len(fields); i++ {
		s := strings.TrimLeft(string(fields[i]), "\n")
		if c, ok := strings.CutPrefix(s, "C "); ok {
			// The format line runs into the first raw line after a newline.
			c, rest, _ := strings.Cut(c, "\n")
			commit = c
			s = strings.TrimLeft(rest, "\n")
		}
		if !strings.HasPrefix(s, ":") || i+1 >= len(fields) {
			continue
		}
		// ":<mode> <mode> <before> <after> <status>" then the path.
		f := strings.Fields(s)
		i++
		if len(f) == 5 && f[4] == "M" {
			changes = append(changes, change{commit, string(fields[i]), f[2], f[3]})
		}
	}
	l.changes = len(changes)
	if len(changes) == 0 {
		return nil
	}
	var ids []string
	for _, c := range changes {
		ids = append(ids, c.before, c.after)
	}
	slices.Sort(ids)
	objs, err := catFiles(ctx, l.dir, slices.Compact(ids))
	if err != nil {
		return err
	}
	for _, c := range changes {
		if !sameIdentity(objs[c.before], objs[c.after]) {
			l.rewritten[c.path] = c.commit
		}
	}
	return nil
}

// identity is what a record's later versions must keep.
type identity struct {
	Key     string            `json:"key"`
	Outputs []json.RawMessage `json:"outputs"`
}

// sameIdentity reports whether two versions of a record name the same key
// and outputs (compared as the JSON of each output: name, digest, size).
func sameIdentity(a, b []byte) bool {
	var x, y identity
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	if x.Key != y.Key || len(x.Outputs) != len(y.Outputs) {
		return false
	}
	for i := range x.Outputs {
		if !jsonEqual(x.Outputs[i], y.Outputs[i]) {
			return false
		}
	}
	return true
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	p, _ := json.Marshal(x)
	q, _ := json.Marshal(y)
	return bytes.Equal(p, q)
}

// catFiles reads git objects ids through one git cat-file --batch.
func catFiles(ctx context.Context, dir string, ids []string) (map[string][]byte, error) {
	in := strings.Join(ids, "\n") + "\n"
	out, err := git(ctx, dir, strings.NewReader(in), "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	objs := map[string][]byte{}
	r := bufio.NewReader(bytes.NewReader(out))
	for {
		hdr, err := r.ReadString('\n')
		if err == io.EOF {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		f := strings.Fields(hdr)
		if len(f) != 3 {
			continue // "<id> missing"
		}
		n, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, fmt.Errorf("git cat-file: %q", hdr)
		}
		b := make([]byte, n+1) // the content and its newline
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		objs[f[0]] = b[:n]
	}
}

// BlobID is git's content hash of b (the SHA-1 of "blob <len>\0" and b).
func BlobID(b []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(b))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

// Vet judges the record file at rel (slash path under the ledger folder)
// holding b: nil for the committed bytes of a record whose history keeps
// its outputs; an error wrapping ErrUncommitted or ErrRewritten otherwise.
func (l *Ledger) Vet(rel string, b []byte) error {
	if c, ok := l.rewritten[rel]; ok {
		return fmt.Errorf("%s: %w (commit %.12s): a push never replaces a record's outputs", rel, ErrRewritten, c)
	}
	id, ok := l.committed[rel]
	switch {
	case !ok:
		return fmt.Errorf("%s: %w: it is not committed (commit the ledger after a push; an edit in this clone is not trusted)", rel, ErrUncommitted)
	case id != BlobID(b):
		return fmt.Errorf("%s: %w (git diff %s shows the edit)", rel, ErrUncommitted, rel)
	}
	return nil
}

// Counts is how many records HEAD commits and how many committed
// modifications of them Check compared.
func (l *Ledger) Counts() (records, changes int) { return len(l.committed), l.changes }

// Rewritten lists the records whose history changes their outputs, with
// the commit that did (for repro check and the tests).
func (l *Ledger) Rewritten() map[string]string { return l.rewritten }

func git(ctx context.Context, dir string, stdin io.Reader, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Stdin = stdin
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(errb.String()))
	}
	return out, nil
}

// Remote is a directory remote whose records are vetted (Ledger.Vet)
// before use: a record that is not the committed one, or whose history
// changes its outputs, reads as damaged (artifacts.ErrCorrupt), so a run
// computes the cell instead and pull rejects it. The ledger's history is
// read at the first record asked for.
type Remote struct {
	*artifacts.DirRemote
	ctx context.Context

	once   sync.Once
	ledger *Ledger
	err    error
}

// NewRemote vets the records of r against its git history.
func NewRemote(ctx context.Context, r *artifacts.DirRemote) *Remote {
	return &Remote{DirRemote: r, ctx: ctx}
}

// Manifest implements artifacts.Remote.
func (r *Remote) Manifest(k artifacts.Key) (*artifacts.Manifest, error) {
	m, err := r.DirRemote.Manifest(k)
	if err != nil {
		return nil, err
	}
	r.once.Do(func() { r.ledger, r.err = Check(r.ctx, r.Root()) })
	if errors.Is(r.err, ErrNoGit) {
		return m, nil // nothing committed to check against (docs/audit.md)
	}
	if r.err != nil {
		return nil, fmt.Errorf("manifest %s: %w: %v", k.Short(), artifacts.ErrCorrupt, r.err)
	}
	path := r.ManifestPath(k)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(r.Root(), path)
	if err != nil {
		return nil, err
	}
	if err := r.ledger.Vet(filepath.ToSlash(rel), b); err != nil {
		return nil, fmt.Errorf("cell %s: record %w: %v", m.CellID, artifacts.ErrCorrupt, err)
	}
	return m, nil
}
