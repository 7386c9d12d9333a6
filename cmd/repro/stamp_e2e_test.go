package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"repro/artifacts"
	"repro/internal/buildstamp"
)

// stampedBins are CLI binaries with a given build stamp, built once each.
var stampedBins struct {
	sync.Mutex
	path map[string]string // ldflags -> binary
}

// reproStamped returns the CLI built with -ldflags ldflags (buildstamp's -X
// flags, or "" for a binary that cannot name its source) and
// -buildvcs=false, as plain `go build` builds in this environment.
func reproStamped(t *testing.T, ldflags string) string {
	t.Helper()
	stampedBins.Lock()
	defer stampedBins.Unlock()
	if p, ok := stampedBins.path[ldflags]; ok {
		return p
	}
	if stampedBins.path == nil {
		stampedBins.path = map[string]string{}
	}
	p := filepath.Join(filepath.Dir(reproBin), fmt.Sprintf("repro-stamp%d", len(stampedBins.path)))
	if out, err := exec.Command("go", "build", "-buildvcs=false", "-ldflags="+ldflags, "-o", p, ".").CombinedOutput(); err != nil {
		t.Fatalf("building repro with -ldflags %q: %v\n%s", ldflags, err, out)
	}
	stampedBins.path[ldflags] = p
	return p
}

// reproWith runs the CLI binary bin in dir and returns its streams and
// exit status.
func reproWith(t *testing.T, bin, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	return o.String(), e.String(), exitCode(t, err)
}

// remoteRecords reads every record of the directory remote at dir.
func remoteRecords(t *testing.T, dir string) []*artifacts.Manifest {
	t.Helper()
	r, err := artifacts.OpenDirRemote("r", dir)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := r.Keys()
	if err != nil {
		t.Fatal(err)
	}
	var ms []*artifacts.Manifest
	for _, k := range keys {
		m, err := r.Manifest(k)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	return ms
}

// The test binary names the tree it was built from, with the changes'
// digest when the tree is dirty, and its records name the CPU and the
// kernel path.
func TestRecordsNameTheirBuild(t *testing.T) {
	t.Parallel()
	src, err := buildstamp.Compute(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := workdir(t, tinyDAG)
	if _, errOut, code := reproSplit(t, dir, "run", "-q"); code != 0 || strings.Contains(errOut, "WARNING") {
		t.Fatalf("run: exit %d, stderr %q", code, errOut)
	}
	recs := remoteRecords(t, filepath.Join(dir, "store")) // a store has a remote's layout
	if len(recs) != 6 {
		t.Fatalf("%d records, want 6", len(recs))
	}
	for _, m := range recs {
		pv := m.Provenance
		if pv.Revision != src.Revision || pv.Dirty != src.Dirty || pv.DirtyDiff != src.Diff || pv.CPU == "" || pv.Kernels == "" {
			t.Errorf("%s: provenance %+v, want the source %+v, a CPU and a kernel path", m.CellID, pv, src)
		}
	}
}

// A binary that cannot name its source warns when it runs, its records
// say "revision unknown", and neither push nor verify --push puts them into
// a remote. A dirty build's records go only with --allow-dirty.
func TestPushRefusesUnnamedSources(t *testing.T) {
	t.Parallel()
	dir := remoteWorkdir(t, "[settings.remotes.shared]\npath = \"cells\"\n", tinyDAG)
	unstamped := reproStamped(t, "")
	_, errOut, code := reproWith(t, unstamped, dir, "run", "-q")
	if code != 0 || !strings.Contains(errOut, "WARNING: this repro binary cannot name the source it was built from") {
		t.Fatalf("unstamped run: exit %d, stderr %q", code, errOut)
	}
	for _, bin := range []string{unstamped, reproBin} {
		out, errOut, code := reproWith(t, bin, dir, "push", "--allow-dirty")
		if code != 1 || !strings.Contains(errOut, "6 records cannot name the clean source that computed them; remote shared takes no such record (nothing pushed)") ||
			!strings.Contains(errOut, "synth/l0/c0: revision unknown") || !strings.Contains(errOut, "'make build'") {
			t.Errorf("push of unstamped records: exit %d, stdout %q, stderr %q", code, out, errOut)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "cells")); !os.IsNotExist(err) {
		t.Errorf("a refused push wrote the remote: %v", err)
	}
	if _, errOut, code := reproWith(t, unstamped, dir, "verify", "--recompute", "--push", "shared"); code != 1 || !strings.Contains(errOut, "this binary cannot name a clean source (it is unknown)") {
		t.Errorf("verify --push by an unstamped binary: exit %d, stderr %q", code, errOut)
	}

	head := strings.Repeat("d", 40)
	dirty := reproStamped(t, buildstamp.Stamp{Revision: head, Dirty: true, Diff: strings.Repeat("e", 64)}.LDFlags())
	dirtyDir := remoteWorkdir(t, "[settings.remotes.shared]\npath = \"cells\"\n", tinyDAG)
	reproWith(t, dirty, dirtyDir, "run", "-q")
	if _, errOut, code := reproWith(t, dirty, dirtyDir, "push"); code != 1 || !strings.Contains(errOut, "synth/l0/c0: built from revision dddddddddddd with uncommitted changes") {
		t.Errorf("push of dirty records: exit %d, stderr %q", code, errOut)
	}
	if out, errOut, code := reproWith(t, dirty, dirtyDir, "push", "--allow-dirty"); code != 0 || !strings.Contains(out, "6 new record(s)") {
		t.Errorf("push --allow-dirty of dirty records: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, m := range remoteRecords(t, filepath.Join(dirtyDir, "cells")) {
		if pv := m.Provenance; pv.Revision != head || !pv.Dirty || pv.DirtyDiff != strings.Repeat("e", 64) {
			t.Errorf("%s: pushed provenance %+v", m.CellID, pv)
		}
	}
	if out, _ := repro(t, dirtyDir, "why", "synth/l0/c0"); !strings.Contains(out, "revision "+head+" (dirty work tree, changes eeeeeeeeeeee)") || !strings.Contains(out, "kernels") {
		t.Errorf("why of a dirty build's record:\n%s", out)
	}
}

// verify --recompute --push restamps records cell by cell: an interrupted
// or partial recompute resumes where it stopped, and another machine
// sharing the remote (a clone of the repository holding it) skips what is
// done.
func TestVerifyPushResumes(t *testing.T) {
	t.Parallel()
	dir := remoteWorkdir(t, "[settings.remotes.shared]\npath = \"cells\"\n", tinyDAG)
	unstamped := reproStamped(t, "")
	if _, _, code := reproWith(t, unstamped, dir, "run", "-q"); code != 0 {
		t.Fatal("unstamped run failed")
	}
	head := strings.Repeat("c", 40)
	clean := reproStamped(t, buildstamp.Stamp{Revision: head}.LDFlags())

	// Layer l0 first, as an interrupted run would leave it.
	out, errOut, code := reproWith(t, clean, dir, "verify", "--recompute=synth/l0", "--push", "shared", "-j", "1")
	if code != 0 || !strings.Contains(out, "recomputing 3 cells (") || !strings.Contains(out, "with binary cccccccccccc on ") ||
		!strings.Contains(out, "pushed synth/l0/c1: same outputs") || !strings.Contains(out, "pushed 3 records naming cccccccccccc to remote shared") ||
		!strings.Contains(out, "recomputed 3 cells matching \"synth/l0\": 0 differing output(s)") {
		t.Fatalf("verify --push of layer l0: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	out, errOut, code = reproWith(t, clean, dir, "verify", "--recompute", "--push", "shared")
	if code != 0 || !strings.Contains(out, "3 cells already recomputed by cccccccccccc (their records in remote shared say so): skipped") ||
		!strings.Contains(out, "recomputed 3 cells matching \"*\": 0 differing output(s)") || strings.Contains(out, "pushed synth/l0") {
		t.Fatalf("resumed verify --push: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	recs := remoteRecords(t, filepath.Join(dir, "cells"))
	if len(recs) != 6 {
		t.Fatalf("remote holds %d records, want 6", len(recs))
	}
	for _, m := range recs {
		if pv := m.Provenance; pv.Revision != head || pv.Dirty || pv.Executor != "verify" || pv.CPU == "" || pv.Kernels == "" {
			t.Errorf("%s: provenance %+v", m.CellID, pv)
		}
	}
	// The store's records were restamped too: a plain push adds nothing.
	if out, errOut, code := reproWith(t, clean, dir, "push"); code != 0 || !strings.Contains(out, "0 new record(s)") {
		t.Errorf("push after verify --push: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	// Another machine: a clone with the remote, without the store.
	clone := cloneWithout(t, dir)
	out, errOut, code = reproWith(t, clean, clone, "verify", "--recompute", "--push", "shared")
	if code != 0 || !strings.Contains(out, "6 cells already recomputed by cccccccccccc") || !strings.Contains(out, "recomputed 0 cells") {
		t.Errorf("verify --push on a clone: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	// Another commit's binary recomputes them all again.
	other := reproStamped(t, buildstamp.Stamp{Revision: strings.Repeat("f", 40)}.LDFlags())
	if out, _, code := reproWith(t, other, clone, "verify", "--recompute", "--push", "shared"); code != 0 || !strings.Contains(out, "pushed 6 records naming ffffffffffff") {
		t.Errorf("verify --push by another commit: exit %d\n%s", code, out)
	}
	// A third commit continues that recompute: --done-by counts the
	// other commit's clean records as done.
	third := reproStamped(t, buildstamp.Stamp{Revision: strings.Repeat("a", 40)}.LDFlags())
	// A prefix naming no record (a mistyped hash) is said, not ignored.
	if out, errOut, code := reproWith(t, third, clone, "verify", "--recompute", "--push", "shared", "--done-by", "fffffff,1234567"); code != 0 ||
		!strings.Contains(out, "6 cells already recomputed by aaaaaaaaaaaa or fffffff, 1234567 (") || !strings.Contains(out, "recomputed 0 cells") ||
		!strings.Contains(errOut, "--done-by 1234567: no record in remote shared names a clean build of this commit") || strings.Contains(errOut, "--done-by fffffff") {
		t.Errorf("verify --push --done-by: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if _, errOut, code := reproWith(t, third, clone, "verify", "--recompute", "--done-by", "fffffff"); code != 2 || !strings.Contains(errOut, "--done-by needs --push") {
		t.Errorf("--done-by without --push: exit %d, stderr %q", code, errOut)
	}
	if _, errOut, code := reproWith(t, third, clone, "verify", "--recompute", "--push", "shared", "--done-by", "HEAD"); code != 2 || !strings.Contains(errOut, `--done-by "HEAD": want commit hashes`) {
		t.Errorf("--done-by HEAD: exit %d, stderr %q", code, errOut)
	}
}

// A recompute by a new commit takes first the records that name no commit,
// then those another commit computed: stopped half-way, it has made the
// most records name one.
func TestVerifyPushUnknownFirst(t *testing.T) {
	t.Parallel()
	dir := remoteWorkdir(t, "[settings.remotes.shared]\npath = \"cells\"\n", tinyDAG)
	if _, _, code := reproWith(t, reproStamped(t, ""), dir, "run", "-q"); code != 0 {
		t.Fatal("unstamped run failed")
	}
	first := reproStamped(t, buildstamp.Stamp{Revision: strings.Repeat("c", 40)}.LDFlags())
	if out, errOut, code := reproWith(t, first, dir, "verify", "--recompute=synth/l0", "--push", "shared", "-j", "1"); code != 0 {
		t.Fatalf("verify --push of layer l0: exit %d\n%s\n%s", code, out, errOut)
	}
	// Layer l0 names cccc, layer l1 no commit: l1 goes first.
	second := reproStamped(t, buildstamp.Stamp{Revision: strings.Repeat("e", 40)}.LDFlags())
	out, errOut, code := reproWith(t, second, dir, "verify", "--recompute", "--push", "shared", "-j", "1")
	if code != 0 {
		t.Fatalf("verify --push: exit %d\n%s\n%s", code, out, errOut)
	}
	var order []string
	for _, l := range strings.Split(out, "\n") {
		if id, ok := strings.CutPrefix(l, "pushed synth/"); ok {
			order = append(order, id[:2])
		}
	}
	if strings.Join(order, " ") != "l1 l1 l1 l0 l0 l0" {
		t.Errorf("recompute order by layer %v, want the three records naming no commit (l1) first\n%s", order, out)
	}
}

// A bad REPRO_KERNELS is a usage error naming the variable, before any
// work; portable records say so.
func TestKernelSwitch(t *testing.T) {
	t.Parallel()
	dir := workdir(t, tinyDAG)
	cmd := exec.Command(reproBin, "run", "-q")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "REPRO_KERNELS=sse")
	out, err := cmd.CombinedOutput()
	if code := exitCode(t, err); code != 2 || !strings.Contains(string(out), `REPRO_KERNELS="sse": want portable, avx2, avx512 or auto`) {
		t.Fatalf("REPRO_KERNELS=sse: exit %d, %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "store")); !os.IsNotExist(err) {
		t.Errorf("a refused run made its store: %v", err)
	}
	cmd = exec.Command(reproBin, "run", "-q")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "REPRO_KERNELS=portable")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("REPRO_KERNELS=portable: %v\n%s", err, out)
	}
	for _, m := range remoteRecords(t, filepath.Join(dir, "store")) {
		if m.Provenance.Kernels != "portable" {
			t.Errorf("%s: kernels %q, want portable", m.CellID, m.Provenance.Kernels)
		}
	}
}

// A push after a partial run takes the finished cells and counts the rest
// as not finished (the unnamed-source check once read the record of a cell
// the store does not hold, and panicked).
func TestPushAfterPartialRun(t *testing.T) {
	t.Parallel()
	dir := remoteWorkdir(t, "[settings.remotes.shared]\npath = \"cells\"\n", tinyDAG)
	if _, errOut, code := reproWith(t, reproBin, dir, "run", "-q", "--only", "synth/l0/c0"); code != 0 {
		t.Fatalf("run --only: exit %d, stderr %q", code, errOut)
	}
	out, errOut, code := reproWith(t, reproBin, dir, "push", "--allow-dirty")
	if code != 0 || !strings.Contains(out, "not finished in this store") || !strings.Contains(out, "1 new record(s)") {
		t.Errorf("push after a partial run: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
