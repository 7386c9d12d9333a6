package artifacts

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func openTemp(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPutGetRoundTrip(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	for _, data := range [][]byte{nil, []byte("x"), bytes.Repeat([]byte("abc"), 100000)} {
		d, err := s.Put(data)
		if err != nil {
			t.Fatal(err)
		}
		if d != Sum(data) {
			t.Fatalf("Put digest = %s, want %s", d, Sum(data))
		}
		got, err := s.Get(d)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("Get(%s) returned different bytes", d.Short())
		}
		// Idempotent.
		if d2, err := s.Put(data); err != nil || d2 != d {
			t.Fatalf("second Put = %s, %v", d2, err)
		}
	}
	if _, err := s.Get(Sum([]byte("absent"))); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get(absent) error = %v, want ErrNotFound", err)
	}
}

func TestFlippedByteIsCorrupt(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	data := bytes.Repeat([]byte("some content "), 1000)
	d, _ := s.Put(data)
	path := s.BlobPath(d)
	b, _ := os.ReadFile(path)
	os.Chmod(path, 0o644)
	for i := 10; i < len(b); i += len(b) / 7 {
		c := append([]byte(nil), b...)
		c[i] ^= 0x20
		os.WriteFile(path, c, 0o644)
		if _, err := s.Get(d); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("byte %d flipped: Get error = %v, want ErrCorrupt", i, err)
		}
	}
	r, err := s.Verify(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Problems) != 1 {
		t.Fatalf("Verify problems = %v, want 1", r.Problems)
	}
	if _, err := s.Stat(d); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after Verify the corrupt blob should be moved aside; Stat error = %v", err)
	}
	// A fresh Put repairs it.
	if _, err := s.Put(data); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(d); err != nil {
		t.Fatalf("after re-Put: %v", err)
	}
}

func TestBlobWithWrongNameIsCorrupt(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	a, _ := s.Put([]byte("aaaa"))
	b, _ := s.Put([]byte("bbbb"))
	// Put a's compressed bytes under b's name: valid zstd, wrong content.
	za, _ := os.ReadFile(s.BlobPath(a))
	os.Chmod(s.BlobPath(b), 0o644)
	os.WriteFile(s.BlobPath(b), za, 0o644)
	if _, err := s.Get(b); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Get = %v, want ErrCorrupt", err)
	}
}

func TestManifestLookup(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	k := Key(Sum([]byte("cell")))
	if _, err := s.Lookup(k); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Lookup before write = %v", err)
	}
	out, _ := s.Put([]byte("output"))
	m := &Manifest{Key: k, CellID: "x/y", Stage: "x", StageVersion: 1, Outputs: []Output{{Name: "o", Digest: out, Size: 6}}}
	if err := s.PutManifest(m); err != nil {
		t.Fatal(err)
	}
	got, err := s.Lookup(k)
	if err != nil {
		t.Fatal(err)
	}
	if got.CellID != "x/y" || got.Outputs[0].Digest != out {
		t.Fatalf("Lookup = %+v", got)
	}
	// An output blob gone: a miss that says why.
	os.Remove(s.BlobPath(out))
	if _, err := s.Lookup(k); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "output o") {
		t.Fatalf("Lookup with blob gone = %v", err)
	}
	// A manifest cannot be published before its outputs.
	m2 := &Manifest{Key: Key(Sum([]byte("c2"))), Outputs: []Output{{Name: "o", Digest: Sum([]byte("nope"))}}}
	if err := s.PutManifest(m2); err == nil {
		t.Fatal("PutManifest with missing output succeeded")
	}
	// A damaged record is a miss with ErrCorrupt.
	os.WriteFile(s.ManifestPath(k), []byte(`{"format":"repro-manifest v1","key":`), 0o644)
	if _, err := s.Lookup(k); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Lookup of damaged manifest = %v, want ErrCorrupt", err)
	}
}

func TestNoTempFilesLeft(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	for i := 0; i < 20; i++ {
		if _, err := s.Put([]byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	files := 0
	err := filepath.Walk(s.Root(), func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(filepath.Base(p), ".tmp-") {
			t.Errorf("temporary file left: %s", p)
		}
		if fi.Mode().IsRegular() {
			files++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// No temporary file is only news if the walk saw the blobs written.
	if files < 20 {
		t.Errorf("walked %d files under %s, want at least the 20 blobs written", files, s.Root())
	}
}

func TestLockTakeover(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	k := Key(Sum([]byte("locked")))
	l, err := s.TryLock(k)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.TryLock(k); !errors.Is(err, ErrLocked) {
		t.Fatalf("second TryLock = %v, want ErrLocked", err)
	}
	l.Unlock()
	// A lock left by a dead process on this host is taken over.
	dead := `{"pid": 999999999, "host": "` + hostname() + `", "boot": ` + jsonString(bootID()) + `}`
	os.WriteFile(s.lockPath(k), []byte(dead), 0o644)
	l2, err := s.TryLock(k)
	if err != nil {
		t.Fatalf("TryLock over a dead holder = %v", err)
	}
	l2.Unlock()
	// A lock of another host is respected while its heartbeat is fresh...
	other := `{"pid": 1, "host": "elsewhere", "boot": "x"}`
	os.WriteFile(s.lockPath(k), []byte(other), 0o644)
	if _, err := s.TryLock(k); !errors.Is(err, ErrLocked) {
		t.Fatalf("TryLock over a live remote holder = %v, want ErrLocked", err)
	}
	// ...and taken over once stale.
	old := time.Now().Add(-2 * LockStale)
	os.Chtimes(s.lockPath(k), old, old)
	l3, err := s.TryLock(k)
	if err != nil {
		t.Fatalf("TryLock over a stale remote holder = %v", err)
	}
	l3.Unlock()
}

func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		if r == '\n' {
			b.WriteString(`\n`)
			continue
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}

func TestGC(t *testing.T) {
	t.Parallel()
	now := time.Now()
	clock := func() time.Time { return now }
	s, err := Open(t.TempDir(), Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	mk := func(name string) Key {
		out, _ := s.Put([]byte("out " + name))
		lg, _ := s.Put([]byte("log " + name))
		k := Key(Sum([]byte(name)))
		os.WriteFile(s.LogPath(k), []byte("running log"), 0o644)
		s.PutSpec(&Spec{Key: k, CellID: name})
		if err := s.PutManifest(&Manifest{Key: k, CellID: name, Log: lg, Outputs: []Output{{Name: "o", Digest: out}}}); err != nil {
			t.Fatal(err)
		}
		return k
	}
	keep, drop := mk("keep"), mk("drop")
	// Young entries are protected.
	r, err := s.GC(context.Background(), map[Key]bool{keep: true}, true)
	if err != nil {
		t.Fatal(err)
	}
	if r.Manifests != 0 || r.Blobs != 0 {
		t.Fatalf("GC removed young entries: %+v", r)
	}
	now = now.Add(2 * GCGrace)
	r, err = s.GC(context.Background(), map[Key]bool{keep: true}, false)
	if err != nil {
		t.Fatal(err)
	}
	if r.Manifests != 1 || r.Specs != 1 || r.Blobs != 2 || r.Logs != 1 {
		t.Fatalf("dry-run GC = %+v, want 1 manifest, 1 spec, 2 blobs, 1 log", r)
	}
	if _, err := s.Lookup(drop); err != nil {
		t.Fatalf("dry run deleted something: %v", err)
	}
	if _, err := s.GC(context.Background(), map[Key]bool{keep: true}, true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Lookup(drop); !errors.Is(err, ErrNotFound) {
		t.Fatalf("dropped cell still there: %v", err)
	}
	if _, err := s.Lookup(keep); err != nil {
		t.Fatalf("kept cell damaged: %v", err)
	}
}

func FuzzDecodeManifest(f *testing.F) {
	f.Add([]byte(`{"format":"repro-manifest v1","key":"` + strings.Repeat("ab", 32) + `","cell":"a","stage":"s","stage_version":1,"params":"","inputs":null,"outputs":[],"log":"` + strings.Repeat("00", 32) + `","provenance":{"revision":"","dirty":false,"go_version":"","host":"","executor":"","start":"2026-01-01T00:00:00Z","end":"2026-01-01T00:00:00Z","wall_seconds":0,"cpu_seconds":0,"repro_version":""}}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeManifest(b)
		if err != nil {
			return
		}
		// Round trip: what decodes must re-encode and decode to the same.
		s, err := Open(t.TempDir(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		m.Outputs = nil
		if err := s.PutManifest(m); err != nil {
			t.Fatal(err)
		}
		m2, err := s.GetManifest(m.Key)
		if err != nil {
			t.Fatalf("re-read: %v", err)
		}
		if m2.CellID != m.CellID || m2.Key != m.Key || m2.Params != m.Params {
			t.Fatalf("round trip changed the manifest")
		}
	})
}

// TestOpenRefusesForeignDirectory: Open makes a store only where there is
// none and the directory is absent or empty; Create makes one anyway.
func TestOpenRefusesForeignDirectory(t *testing.T) {
	base := t.TempDir()
	foreign := filepath.Join(base, "home")
	os.MkdirAll(foreign, 0o755)
	os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("mine"), 0o644)
	partial := filepath.Join(base, "partial") // another process is writing its README
	os.MkdirAll(partial, 0o755)
	os.WriteFile(filepath.Join(partial, ".tmp-README-123"), nil, 0o644)
	// Only folders with a store's names, and a user's files in them: not a
	// store (its README would have been written first), so never adopted.
	named := filepath.Join(base, "named")
	os.MkdirAll(filepath.Join(named, "blobs", "aa"), 0o755)
	os.WriteFile(filepath.Join(named, "blobs", "aa", "photo.jpg"), []byte("photo"), 0o644)
	empty := filepath.Join(base, "empty")
	os.MkdirAll(empty, 0o755)
	// A directory remote (a results ledger) has a store's layout and its
	// own README; a store's layout beside some other README is foreign too.
	remote := filepath.Join(base, "ledger")
	r, err := OpenDirRemote("ledger", remote)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.PutBlob(Digest{}, nil); err != nil {
		t.Fatal(err)
	}
	// A remote whose README was deleted is still one: its marker says so.
	noReadme := filepath.Join(base, "ledger2")
	r2, _ := OpenDirRemote("ledger2", noReadme)
	if err := r2.PutBlob(Digest{}, nil); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(noReadme, "README"))
	readme := filepath.Join(base, "readme")
	os.MkdirAll(filepath.Join(readme, "cells"), 0o755)
	os.WriteFile(filepath.Join(readme, "README"), []byte("my project"), 0o644)
	for _, tc := range []struct {
		name, dir string
		create    bool
		ok        bool
	}{
		{"absent", filepath.Join(base, "new"), false, true},
		{"empty", empty, false, true},
		{"partial", partial, false, true},
		{"existing store", empty, false, true}, // created by the case above
		{"foreign", foreign, false, false},
		{"foreign, init", foreign, true, true},
		{"foreign after init", foreign, false, true},
		{"remote", remote, false, false},
		{"remote, init", remote, true, false},
		{"store names only", named, false, false},
		{"remote without README", noReadme, false, false},
		{"other README", readme, false, false},
	} {
		_, err := Open(tc.dir, Options{Create: tc.create})
		if tc.ok != (err == nil) || err != nil && !errors.Is(err, ErrNotStore) {
			t.Errorf("%s: Open(%s) = %v, want ok %v", tc.name, tc.dir, err, tc.ok)
		}
	}
	ents, _ := os.ReadDir(foreign)
	if b, _ := os.ReadFile(filepath.Join(foreign, "notes.txt")); string(b) != "mine" || len(ents) != 2+len(storeDirs) {
		t.Errorf("init beside other files: %d entries, notes %q", len(ents), b)
	}
}

// TestVerifyMissingLogIsNoProblem: a cell whose log is not in the store (as
// a cell taken from a remote) is listed, not reported as a problem; a
// missing output still is.
func TestVerifyMissingLogIsNoProblem(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	out, _ := s.Put([]byte("output"))
	m := &Manifest{Key: Key(Sum([]byte("cell"))), CellID: "x/pulled", Stage: "x", StageVersion: 1,
		Outputs: []Output{{Name: "o", Digest: out, Size: 6}}, Log: Sum([]byte("a log kept elsewhere"))}
	if err := s.PutManifest(m); err != nil {
		t.Fatal(err)
	}
	r, err := s.Verify(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Problems) != 0 || len(r.NoLog) != 1 || r.NoLog[0].ID != "x/pulled" {
		t.Fatalf("problems %v, cells without a log %v; want none and x/pulled", r.Problems, r.NoLog)
	}
	gone, _ := s.Put([]byte("gone"))
	m2 := *m
	m2.Key, m2.CellID = Key(Sum([]byte("cell 2"))), "x/lost"
	m2.Outputs = []Output{{Name: "o", Digest: gone, Size: 4}}
	if err := s.PutManifest(&m2); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(s.BlobPath(gone)); err != nil {
		t.Fatal(err)
	}
	if r, err = s.Verify(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if len(r.Problems) != 1 || r.Problems[0].Kind != "missing" {
		t.Fatalf("a missing output: problems %v, want one missing", r.Problems)
	}
}

// TestSymlinkedFoldersSurvive: a store whose blobs/ and cells/ are symlinks
// to directories elsewhere (a bigger disk) is read through them: verify
// finds every blob and no problem, and gc --apply keeps every reachable
// record and blob and leaves the links in place.
func TestSymlinkedFoldersSurvive(t *testing.T) {
	t.Parallel()
	now := time.Now()
	base := t.TempDir()
	root := filepath.Join(base, "store")
	s, err := Open(root, Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	var keys []Key
	for _, name := range []string{"a", "b", "c"} {
		out, _ := s.Put([]byte("out " + name))
		lg, _ := s.Put([]byte("log " + name))
		k := Key(Sum([]byte(name)))
		if err := s.PutManifest(&Manifest{Key: k, CellID: name, Log: lg, Outputs: []Output{{Name: "o", Digest: out}}}); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	for _, d := range []string{"blobs", "cells"} {
		far := filepath.Join(base, "bigdisk", d)
		os.MkdirAll(filepath.Dir(far), 0o755)
		if err := os.Rename(filepath.Join(root, d), far); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(far, filepath.Join(root, d)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := s.Verify(context.Background(), nil)
	if err != nil || len(r.Problems) != 0 || r.Blobs != 6 || r.Manifests != 3 {
		t.Fatalf("verify through links: %+v, %v", r, err)
	}
	now = now.Add(3 * GCGrace)
	keep := map[Key]bool{keys[0]: true, keys[1]: true, keys[2]: true}
	g, err := s.GC(context.Background(), keep, true)
	if err != nil || len(g.Paths) != 0 || len(g.Strays) != 0 {
		t.Fatalf("gc through links: %+v, %v", g, err)
	}
	for _, d := range []string{"blobs", "cells"} {
		if fi, err := os.Lstat(filepath.Join(root, d)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("%s is no longer the link: %v", d, err)
		}
	}
	for _, k := range keys {
		if _, err := s.Lookup(k); err != nil {
			t.Fatalf("record %s lost: %v", k.Short(), err)
		}
	}
	// A link to something that is not a directory is refused, not taken apart.
	os.Remove(filepath.Join(root, "blobs"))
	os.WriteFile(filepath.Join(base, "file"), nil, 0o644)
	os.Symlink(filepath.Join(base, "file"), filepath.Join(root, "blobs"))
	if _, err := s.GC(context.Background(), keep, true); err == nil || !strings.Contains(err.Error(), "a symlink to no directory") {
		t.Fatalf("gc with blobs a link to a file: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(root, "blobs")); err != nil {
		t.Fatalf("the link was removed: %v", err)
	}
}

// TestLookupVerified: a flipped byte or a truncation in an output is a miss
// wrapping ErrCorrupt, the blob moved aside; a sound blob read once is not
// read again by the same Store; a new Store re-hashes it.
func TestLookupVerified(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	data := bytes.Repeat([]byte("network tensor "), 4096)
	d, _ := s.Put(data)
	k := Key(Sum([]byte("cell")))
	if err := s.PutManifest(&Manifest{Key: k, CellID: "train/x", Outputs: []Output{{Name: "o", Digest: d}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LookupVerified(k); err != nil {
		t.Fatal(err)
	}
	for _, damage := range []func([]byte) []byte{
		func(b []byte) []byte { b[len(b)/2] ^= 1; return b },
		func(b []byte) []byte { return b[:len(b)-2] },
	} {
		b, _ := os.ReadFile(s.BlobPath(d))
		os.Chmod(s.BlobPath(d), 0o644)
		os.WriteFile(s.BlobPath(d), damage(b), 0o644)
		fresh, err := Open(s.Root(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fresh.LookupVerified(k); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "cell train/x: output o: blob ") {
			t.Fatalf("damaged output: %v", err)
		}
		if _, err := os.Stat(s.BlobPath(d)); !os.IsNotExist(err) {
			t.Fatalf("the damaged blob was not moved aside: %v", err)
		}
		if _, err := fresh.LookupVerified(k); !errors.Is(err, ErrNotFound) {
			t.Fatalf("after quarantine: %v", err)
		}
		if _, err := s.Put(data); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLockHolderIdentity: a lock whose PID lives but is another process
// (the PID reused after its holder's kill -9: another start time) is taken
// over; a live holder's lock is an error naming its PID and host; a lock
// file that never became readable is taken over after a short grace.
func TestLockHolderIdentity(t *testing.T) {
	t.Parallel()
	if procStart(os.Getpid()) == "" {
		t.Skip("no /proc: start times unknown")
	}
	me := os.Getpid()
	info := func(start string) string {
		b, _ := json.Marshal(lockInfo{PID: me, Host: hostname(), Boot: bootID(), Start: start})
		return string(b)
	}
	for _, tc := range []struct {
		name    string
		content string
		age     time.Duration
		locked  bool
	}{
		{"live holder", info(procStart(me)), 0, true},
		{"PID reused by another process", info("1"), 0, false},
		{"lock written before start times", info(""), 0, true},
		{"unreadable, being written", "{\"pi", 0, true},
		{"unreadable for longer than the grace", "{\"pi", 2 * lockUnreadableGrace, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := openTemp(t)
			k := Key(Sum([]byte(tc.name)))
			os.WriteFile(s.lockPath(k), []byte(tc.content), 0o644)
			if tc.age > 0 {
				old := time.Now().Add(-tc.age)
				os.Chtimes(s.lockPath(k), old, old)
			}
			l, err := s.TryLock(k)
			if !tc.locked {
				if err != nil {
					t.Fatalf("TryLock = %v, want the lock taken over", err)
				}
				l.Unlock()
				return
			}
			var le *LockedError
			if !errors.As(err, &le) || !errors.Is(err, ErrLocked) {
				t.Fatalf("TryLock = %v, want a LockedError", err)
			}
			want := fmt.Sprintf("pid %d on %s", me, hostname())
			if !strings.Contains(tc.content, `"pid"`) {
				want = "an unreadable lock file"
			}
			if le.Holder != want {
				t.Errorf("holder %q, want %q", le.Holder, want)
			}
		})
	}
}
