package ledgertrust

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"repro/artifacts"
)

// The committed ledger passes: no record's history changes its outputs.
func TestCommittedLedgerIsConsistent(t *testing.T) {
	t.Parallel()
	l, err := Check(context.Background(), filepath.Join("..", "..", "paper", "cells"))
	if errors.Is(err, ErrNoGit) {
		t.Skip("not in a git checkout")
	}
	if err != nil {
		t.Fatal(err)
	}
	records, changes := l.Counts()
	if records < 1000 || changes < 1000 {
		t.Fatalf("read %d records and %d changes: the ledger's history was not read", records, changes)
	}
	if rw := l.Rewritten(); len(rw) > 0 {
		t.Fatalf("%d records' committed history changes their outputs, e.g. %v", len(rw), rw)
	}
}

func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, b)
	}
}

// TestVetRecords re-runs the review's probe (a new blob named by its real
// digest and a record pointed at it passed pull): such a record, edited in
// the clone or committed over the first one, reads as damaged, with the
// reason; the committed record reads as it is.
func TestVetRecords(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	gitIn(t, repo, "init", "-q")
	st, err := artifacts.Open(filepath.Join(t.TempDir(), "store"), artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := artifacts.OpenDirRemote("ledger", filepath.Join(repo, "cells"))
	if err != nil {
		t.Fatal(err)
	}
	put := func(id, out string) *artifacts.Manifest {
		d, err := st.Put([]byte(out))
		if err != nil {
			t.Fatal(err)
		}
		m := &artifacts.Manifest{Key: artifacts.Key(artifacts.Sum([]byte(id))), CellID: id, Stage: "x", StageVersion: 1,
			Outputs: []artifacts.Output{{Name: "result", Digest: d, Size: int64(len(out))}}}
		if err := st.PutManifest(m); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := st.PushCell(r, m, true); err != nil {
			t.Fatal(err)
		}
		return m
	}
	kept := put("train/kept", "acc 0.917")
	edited := put("train/edited", "acc 0.917")
	rewritten := put("train/rewritten", "acc 0.917")
	gitIn(t, repo, "add", ".")
	gitIn(t, repo, "commit", "-qm", "ledger")

	// The tamper: a real blob of other content, the record pointed at it.
	tamper := func(m *artifacts.Manifest) {
		d, _ := st.Put([]byte("acc 0.990"))
		z, _ := os.ReadFile(st.BlobPath(d))
		r.PutBlob(d, z)
		cp := *m
		cp.Outputs = []artifacts.Output{{Name: "result", Digest: d, Size: 9}}
		if err := r.PutManifest(&cp); err != nil {
			t.Fatal(err)
		}
	}
	tamper(edited)
	tamper(rewritten)
	gitIn(t, repo, "add", filepath.Join("cells", "cells"))
	gitIn(t, repo, "reset", "-q", "--", r.ManifestPath(edited.Key)) // edited stays uncommitted
	gitIn(t, repo, "commit", "-qm", "a commit that rewrites a record")
	added := put("train/added", "acc 0.5") // pushed, not committed

	vr := NewRemote(context.Background(), r)
	for _, tc := range []struct {
		m    *artifacts.Manifest
		want error
	}{
		{kept, nil},
		{edited, ErrUncommitted},
		{rewritten, ErrRewritten},
		{added, ErrUncommitted},
	} {
		t.Run(tc.m.CellID, func(t *testing.T) {
			_, err := vr.Manifest(tc.m.Key)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Manifest = %v", err)
				}
				return
			}
			if !errors.Is(err, artifacts.ErrCorrupt) || !strings.Contains(err.Error(), tc.want.Error()) {
				t.Fatalf("Manifest = %v, want ErrCorrupt saying %q", err, tc.want)
			}
		})
	}
	// Outside git, or in a work tree that tracks none of its records (a
	// scratch remote), nothing is vetted.
	plain, _ := artifacts.OpenDirRemote("plain", filepath.Join(t.TempDir(), "cells"))
	scratch, _ := artifacts.OpenDirRemote("scratch", filepath.Join(repo, ".scratch"))
	for _, r := range []*artifacts.DirRemote{plain, scratch} {
		st.PushCell(r, added, true)
		if _, err := NewRemote(context.Background(), r).Manifest(added.Key); err != nil {
			t.Errorf("remote %s: %v", r.Name(), err)
		}
	}
}
