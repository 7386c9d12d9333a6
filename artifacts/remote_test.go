package artifacts

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// putCell stores a finished cell with the given outputs in s.
func putCell(t *testing.T, s *Store, id string, outs ...[]byte) *Manifest {
	t.Helper()
	m := &Manifest{Key: Key(Sum([]byte(id))), CellID: id, Stage: "x", StageVersion: 1}
	for i, data := range outs {
		d, err := s.Put(data)
		if err != nil {
			t.Fatal(err)
		}
		m.Outputs = append(m.Outputs, Output{Name: fmt.Sprint("o", i), Digest: d, Size: int64(len(data))})
	}
	if err := s.PutManifest(m); err != nil {
		t.Fatal(err)
	}
	return m
}

func tempRemote(t *testing.T) *DirRemote {
	t.Helper()
	r, err := OpenDirRemote("shared", filepath.Join(t.TempDir(), "remote"))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestPushPullRoundTrip(t *testing.T) {
	t.Parallel()
	a, b, r := openTemp(t), openTemp(t), tempRemote(t)
	if keys, err := r.Keys(); err != nil || len(keys) != 0 {
		t.Fatalf("a missing remote directory: keys %v, %v; want an empty remote", keys, err)
	}
	big := bytes.Repeat([]byte("result "), 5000)
	m := putCell(t, a, "train/x", big, []byte("small"))
	if _, wrote, _, err := a.PushCell(r, m, true); err != nil || !wrote {
		t.Fatalf("push: wrote %v, %v", wrote, err)
	}
	// Pushing again copies nothing and keeps the first manifest.
	tr, wrote, other, err := a.PushCell(r, m, true)
	if err != nil || wrote || other || tr.Blobs != 0 {
		t.Fatalf("second push: %+v wrote %v other %v err %v", tr, wrote, other, err)
	}
	keys, err := r.Keys()
	if err != nil || len(keys) != 1 || keys[0] != m.Key {
		t.Fatalf("remote keys %v, %v", keys, err)
	}
	rm, err := r.Manifest(m.Key)
	if err != nil {
		t.Fatal(err)
	}
	tr, err = b.PullCell(r, rm)
	if err != nil || tr.Blobs != 2 {
		t.Fatalf("pull: %+v, %v", tr, err)
	}
	got, err := b.Lookup(m.Key)
	if err != nil {
		t.Fatal(err)
	}
	data, err := b.Get(got.Outputs[0].Digest)
	if err != nil || !bytes.Equal(data, big) {
		t.Fatalf("pulled blob: %v", err)
	}
	if _, err := os.Stat(filepath.Join(r.Root(), "README")); err != nil {
		t.Fatalf("remote README: %v", err)
	}
}

// A manifest-only push (a ledger's data cells) writes no blob, and pulling
// such a cell is a miss naming the absent output.
func TestPushManifestOnly(t *testing.T) {
	t.Parallel()
	a, b, r := openTemp(t), openTemp(t), tempRemote(t)
	m := putCell(t, a, "streams/x", []byte("a large stream"))
	if _, _, _, err := a.PushCell(r, m, false); err != nil {
		t.Fatal(err)
	}
	if ok, _ := r.HasBlob(m.Outputs[0].Digest); ok {
		t.Fatal("manifest-only push wrote a blob")
	}
	rm, err := r.Manifest(m.Key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.PullCell(r, rm); !errors.Is(err, ErrNotFound) {
		t.Fatalf("pull of a manifest-only cell: %v, want ErrNotFound", err)
	}
	if _, err := b.GetManifest(m.Key); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a failed pull left a manifest: %v", err)
	}
}

// A flipped byte or a truncated blob in the remote is rejected by pull,
// which then publishes nothing; so is a manifest stored under another key.
func TestPullRejectsDamagedRemote(t *testing.T) {
	t.Parallel()
	for _, damage := range []string{"flip", "truncate", "empty"} {
		a, b, r := openTemp(t), openTemp(t), tempRemote(t)
		data := bytes.Repeat([]byte("accuracy 0.917 "), 300)
		m := putCell(t, a, "train/"+damage, data)
		if _, _, _, err := a.PushCell(r, m, true); err != nil {
			t.Fatal(err)
		}
		path := r.s.BlobPath(m.Outputs[0].Digest)
		z, _ := os.ReadFile(path)
		switch damage {
		case "flip":
			z[len(z)/2] ^= 0x10
		case "truncate":
			z = z[:len(z)-7]
		case "empty":
			z = nil
		}
		os.Chmod(path, 0o644)
		if err := os.WriteFile(path, z, 0o644); err != nil {
			t.Fatal(err)
		}
		rm, _ := r.Manifest(m.Key)
		if _, err := b.PullCell(r, rm); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: pull error %v, want ErrCorrupt", damage, err)
		}
		if _, err := b.Lookup(m.Key); err == nil {
			t.Errorf("%s: damaged cell was published locally", damage)
		}
	}
	a, r := openTemp(t), tempRemote(t)
	m := putCell(t, a, "train/moved", []byte("r"))
	a.PushCell(r, m, true)
	other := Key(Sum([]byte("other")))
	b, _ := os.ReadFile(r.s.ManifestPath(m.Key))
	if err := WriteFile(r.s.ManifestPath(other), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Manifest(other); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("manifest under a foreign key: %v, want ErrCorrupt", err)
	}
}

// Two stores pushing overlapping cells into one remote at once leave every
// object of the remote intact and every cell pullable.
func TestConcurrentPushes(t *testing.T) {
	t.Parallel()
	r := tempRemote(t)
	stores := []*Store{openTemp(t), openTemp(t)}
	var cells [][]*Manifest
	for i, s := range stores {
		var ms []*Manifest
		for c := range 40 {
			// Cells 0-29 are shared (same key and content), the rest differ.
			id := fmt.Sprint("cell", c)
			if c >= 30 {
				id = fmt.Sprint("cell", c, "-of-", i)
			}
			ms = append(ms, putCell(t, s, id, bytes.Repeat([]byte(id), 2000), []byte("shared output")))
		}
		cells = append(cells, ms)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i, s := range stores {
		for range 2 { // two pushers per store too
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, m := range cells[i] {
					if _, _, _, err := s.PushCell(r, m, true); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	keys, _ := r.Keys()
	if len(keys) != 50 {
		t.Fatalf("remote holds %d manifests, want 50", len(keys))
	}
	fresh := openTemp(t)
	for _, k := range keys {
		m, err := r.Manifest(k)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fresh.PullCell(r, m); err != nil {
			t.Fatal(err)
		}
	}
	tmp, _ := filepath.Glob(filepath.Join(r.Root(), "*", "*", ".tmp-*"))
	if len(tmp) > 0 {
		t.Fatalf("temporary files left: %v", tmp)
	}
	// The pattern looks where the remote's files are: it matches them.
	if all, _ := filepath.Glob(filepath.Join(r.Root(), "*", "*", "*")); len(all) < len(keys) {
		t.Fatalf("the pattern for temporary files sees %d files, want at least the %d manifests", len(all), len(keys))
	}
}

// RefreshRecord replaces a record only by one of the same outputs that
// differs, and never adds one.
func TestRefreshRecord(t *testing.T) {
	t.Parallel()
	a, r := openTemp(t), tempRemote(t)
	m := putCell(t, a, "train/x", []byte("result"))
	if ok, err := RefreshRecord(r, m); ok || err != nil {
		t.Fatalf("refresh of a record the remote lacks: %v, %v; want nothing added", ok, err)
	}
	a.PushCell(r, m, true)
	if ok, err := RefreshRecord(r, m); ok || err != nil {
		t.Fatalf("refresh by the same record: %v, %v; want no write", ok, err)
	}
	later := *m
	later.Provenance.CPUSecs = 7
	if ok, err := RefreshRecord(r, &later); !ok || err != nil {
		t.Fatalf("refresh by a later run: %v, %v", ok, err)
	}
	if got, _ := r.Manifest(m.Key); got.Provenance.CPUSecs != 7 {
		t.Fatalf("remote record CPU %g, want the later run's 7", got.Provenance.CPUSecs)
	}
	other := later
	other.Outputs = []Output{{Name: "o0", Digest: Sum([]byte("else")), Size: 4}}
	other.Provenance.CPUSecs = 9
	if ok, err := RefreshRecord(r, &other); ok || err != nil {
		t.Fatalf("refresh by other outputs: %v, %v; want the record kept", ok, err)
	}
	if got, _ := r.Manifest(m.Key); got.Provenance.CPUSecs != 7 {
		t.Fatalf("a record of other outputs replaced the remote's")
	}
}

// TestRemoteRecognisedByMarker: a push writes the remote's marker; a
// directory holding other files is refused as a remote (nothing written
// into it); a remote made before the marker (README only) is read, and its
// next push adds the marker; a store is not pushed into.
func TestRemoteRecognisedByMarker(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	a := openTemp(t)
	m := putCell(t, a, "train/x", []byte("result"))

	fresh := filepath.Join(base, "fresh")
	r, err := OpenDirRemote("ledger", fresh)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := a.PushCell(r, m, true); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(fresh, RemoteMarker)); err != nil || string(b) != remoteMarkerText {
		t.Fatalf("marker %q, %v", b, err)
	}

	foreign := filepath.Join(base, "notastore")
	os.MkdirAll(filepath.Join(foreign, "sub"), 0o755)
	os.WriteFile(filepath.Join(foreign, "important.txt"), []byte("precious"), 0o644)
	if _, err := OpenDirRemote("ledger", foreign); !errors.Is(err, ErrNotRemote) {
		t.Fatalf("open a foreign directory as a remote: %v", err)
	}
	// Became foreign after opening: push still refuses.
	late := filepath.Join(base, "late")
	r2, _ := OpenDirRemote("ledger", late)
	os.MkdirAll(late, 0o755)
	os.WriteFile(filepath.Join(late, "important.txt"), []byte("precious"), 0o644)
	if _, _, _, err := a.PushCell(r2, m, true); !errors.Is(err, ErrNotRemote) {
		t.Fatalf("push into a foreign directory: %v", err)
	}
	if ents, _ := os.ReadDir(late); len(ents) != 1 {
		t.Fatalf("push wrote into a foreign directory: %v", ents)
	}

	old := filepath.Join(base, "old")
	os.MkdirAll(filepath.Join(old, "cells"), 0o755)
	os.WriteFile(filepath.Join(old, "README"), []byte(remoteREADME), 0o644)
	r3, err := OpenDirRemote("ledger", old)
	if err != nil {
		t.Fatalf("a remote made before the marker: %v", err)
	}
	if _, _, _, err := a.PushCell(r3, m, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(old, RemoteMarker)); err != nil {
		t.Fatalf("push to an old remote did not add the marker: %v", err)
	}

	r4, err := OpenDirRemote("store", a.Root())
	if err != nil {
		t.Fatalf("a store read as a remote: %v", err)
	}
	b := openTemp(t)
	mb := putCell(t, b, "train/y", []byte("other"))
	if _, _, _, err := b.PushCell(r4, mb, true); !errors.Is(err, ErrNotRemote) {
		t.Fatalf("push into a store: %v", err)
	}
}

// TestConcurrentPushFirstWins re-runs the review's probe (two concurrent
// pushes of 7 cells reported up to 12 new records): pushers of the same
// keys at once write each record exactly once, and when their outputs
// differ every loser is told (other), so the warning cannot be skipped.
func TestConcurrentPushFirstWins(t *testing.T) {
	t.Parallel()
	for _, sameOutputs := range []bool{true, false} {
		t.Run(fmt.Sprintf("same outputs %v", sameOutputs), func(t *testing.T) {
			t.Parallel()
			for round := range 10 {
				r := tempRemote(t)
				const pushers, cells = 4, 7
				stores := make([]*Store, pushers)
				ms := make([][]*Manifest, pushers)
				for p := range stores {
					stores[p] = openTemp(t)
					for c := range cells {
						out := fmt.Sprintf("cell %d", c)
						if !sameOutputs {
							out += fmt.Sprintf(" by pusher %d", p)
						}
						ms[p] = append(ms[p], putCell(t, stores[p], fmt.Sprintf("c%d", c), []byte(out)))
					}
				}
				var mu sync.Mutex
				wrote, others := map[int]int{}, map[int]int{}
				var wg sync.WaitGroup
				for p := range stores {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for c, m := range ms[p] {
							_, w, other, err := stores[p].PushCell(r, m, true)
							if err != nil {
								t.Error(err)
								return
							}
							mu.Lock()
							if w {
								wrote[c]++
							}
							if other {
								others[c]++
							}
							mu.Unlock()
						}
					}()
				}
				wg.Wait()
				for c := range cells {
					wantOther := 0
					if !sameOutputs {
						wantOther = pushers - 1
					}
					if wrote[c] != 1 || others[c] != wantOther {
						t.Fatalf("round %d, cell %d: written by %d pushers, %d told of other outputs; want 1 and %d", round, c, wrote[c], others[c], wantOther)
					}
				}
			}
		})
	}
}

// WriteFileExclusive creates once; a second call leaves the first content.
func TestWriteFileExclusive(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "d", "f")
	if ok, err := WriteFileExclusive(p, []byte("first"), 0o644); !ok || err != nil {
		t.Fatalf("first create: %v, %v", ok, err)
	}
	if ok, err := WriteFileExclusive(p, []byte("second"), 0o644); ok || err != nil {
		t.Fatalf("second create: %v, %v; want false, nil", ok, err)
	}
	if b, _ := os.ReadFile(p); string(b) != "first" {
		t.Fatalf("content %q", b)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(p), ".tmp-*")); len(left) > 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}
