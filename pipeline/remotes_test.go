package pipeline

import (
	"context"

	"os"
	"path/filepath"
	"strings"
	"testing"

	"repro/artifacts"
)

func newDiamond(cnt *counter, cVersion int) *diamond {
	return &diamond{A: newStage("a", 1, cnt), B: newStage("b", 1, cnt), C: newStage("c", cVersion, cnt), params: map[string]*valParams{}}
}

// pushAll pushes every finished cell of g's plan in st to r, with the
// outputs of the stages keep accepts.
func pushAll(t *testing.T, st *artifacts.Store, g *Graph, r artifacts.Remote, keep func(stage string) bool) {
	t.Helper()
	p, err := MakePlan(st, g, "p")
	if err != nil {
		t.Fatal(err)
	}
	for _, pc := range p.Cells {
		if pc.State != Cached {
			t.Fatalf("%s not cached", pc.Cell.ID)
		}
		if _, _, _, err := st.PushCell(r, pc.Manifest, keep(pc.Cell.Stage.Name)); err != nil {
			t.Fatal(err)
		}
	}
}

// remoteRun runs g on st taking what it can from remotes.
func remoteRun(t *testing.T, st *artifacts.Store, g *Graph, remotes ...artifacts.Remote) (*RunReport, *RemoteRun) {
	t.Helper()
	rr, err := PrepareRemotes(context.Background(), st, g, "p", remotes, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ex := &LocalExecutor{Store: st, Stages: g.Stages}
	rep, err := Run(context.Background(), st, g, RunOptions{Profile: "p", Jobs: 2, Executor: ex, Remote: rr.Take})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Err(); err != nil {
		t.Fatal(err)
	}
	return rep, rr
}

func openRemote(t *testing.T) *artifacts.DirRemote {
	t.Helper()
	r, err := artifacts.OpenDirRemote("shared", filepath.Join(t.TempDir(), "remote"))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func all(string) bool { return true }

// pushedDiamond computes the diamond on a store and pushes it to a new
// remote, keeping the outputs of the stages keep accepts.
func pushedDiamond(t *testing.T, keep func(string) bool) (*counter, *diamond, *Graph, *artifacts.Store, *artifacts.DirRemote) {
	t.Helper()
	cnt := &counter{n: map[string]int{}}
	d := newDiamond(cnt, 1)
	g := d.graph(t)
	a := openStore(t)
	run(t, a, g, 2)
	r := openRemote(t)
	pushAll(t, a, g, r, keep)
	cnt.reset()
	return cnt, d, g, a, r
}

func outputOf(t *testing.T, st *artifacts.Store, g *Graph, id string) string {
	t.Helper()
	p, err := MakePlan(st, g, "p")
	if err != nil {
		t.Fatal(err)
	}
	pc := p.Cell(id)
	if pc.State != Cached {
		t.Fatalf("%s: %v %v", id, pc.State, pc.Reasons)
	}
	b, err := st.Get(pc.Manifest.Outputs[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A fresh store with a full remote computes nothing, and a change reruns
// exactly the changed cell and what reads it, pulling its inputs.
func TestRemoteFullRoundTrip(t *testing.T) {
	t.Parallel()
	cnt, d, g, a, r := pushedDiamond(t, all)
	want := outputOf(t, a, g, "c/0")
	b := openStore(t)
	p, err := MakePlanWith(b, g, "p", []artifacts.Remote{r})
	if err != nil {
		t.Fatal(err)
	}
	if run, cached := p.Counts(); run != 0 || cached != 5 || p.InRemote() != 5 {
		t.Fatalf("plan on a fresh store: %d to run, %d cached, %d in remote", run, cached, p.InRemote())
	}
	rep, rr := remoteRun(t, b, g, r)
	if cnt.total() != 0 || rr.Pulled != 5 || len(rr.Misses) != 0 {
		t.Fatalf("fresh run computed %d cells, pulled %d, misses %v", cnt.total(), rr.Pulled, rr.Misses)
	}
	if rep.Executed != 0 || rep.Cached != 5 {
		t.Fatalf("report %+v", rep)
	}
	if got := outputOf(t, b, g, "c/0"); got != want {
		t.Fatalf("pulled c/0 = %q, want %q", got, want)
	}

	cnt.reset()
	d.params["b/0"].V = 2
	g = d.graph(t)
	c := openStore(t)
	remoteRun(t, c, g, r)
	if cnt.n["b/0"] != 1 || cnt.n["c/0"] != 1 || cnt.total() != 2 {
		t.Fatalf("after changing b/0 the run computed %v, want b/0 and c/0 once", cnt.n)
	}
}

// A ledger keeps every record but only the last stage's outputs: a fresh
// store computes nothing and leaves the data cells in the remote; a change
// to the last cell rebuilds the inputs it reads (same keys) and that cell.
func TestRemoteLedger(t *testing.T) {
	t.Parallel()
	cnt, d, g, _, r := pushedDiamond(t, func(s string) bool { return s == "c" })
	b := openStore(t)
	rep, rr := remoteRun(t, b, g, r)
	if cnt.total() != 0 || rr.Pulled != 1 || rep.Remote != 4 {
		t.Fatalf("computed %v, pulled %d, left in remote %d; want 0, 1, 4", cnt.n, rr.Pulled, rep.Remote)
	}
	if _, err := b.GetManifest(rr.Plan.Cell("a/0").Key); err == nil {
		t.Fatal("a record-only cell was written to the store without its outputs")
	}

	d.params["c/0"].V = 2
	g = d.graph(t)
	p, err := MakePlanWith(b, g, "p", []artifacts.Remote{r})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a/0", "a/1", "b/0", "b/1"} {
		pc := p.Cell(id)
		if pc.State != Stale || !OnlyReasons(pc.Reasons, ReasonNeededBy) || len(pc.Reasons) != 1 {
			t.Fatalf("%s: %v %v, want to run as needed by a cell that runs", id, pc.State, pc.Reasons)
		}
	}
	cnt.reset()
	remoteRun(t, b, g, r)
	if cnt.total() != 5 {
		t.Fatalf("after changing c/0 the run computed %v, want all 5 once", cnt.n)
	}
}

// A flipped byte or a truncated blob in the remote is a miss: the cell is
// computed (with the inputs it needs), to the same bytes.
func TestRemoteDamagedBlobRecomputed(t *testing.T) {
	t.Parallel()
	for _, damage := range []string{"flip", "truncate"} {
		cnt, _, g, a, r := pushedDiamond(t, func(s string) bool { return s == "c" })
		want := outputOf(t, a, g, "c/0")
		p, _ := MakePlan(a, g, "p")
		path := filepath.Join(r.Root(), "blobs", p.Cell("c/0").Manifest.Outputs[0].Digest.String()[:2], p.Cell("c/0").Manifest.Outputs[0].Digest.String()+".zst")
		z, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if damage == "flip" {
			z[len(z)/2] ^= 1
		} else {
			z = z[:len(z)/2]
		}
		os.Chmod(path, 0o644)
		os.WriteFile(path, z, 0o644)

		cnt.reset()
		b := openStore(t)
		_, rr := remoteRun(t, b, g, r)
		if len(rr.Misses) != 1 || !strings.Contains(rr.Misses[0], "corrupt") {
			t.Fatalf("%s: misses %v, want one naming the corrupt blob", damage, rr.Misses)
		}
		if cnt.n["c/0"] != 1 || cnt.total() != 5 {
			t.Fatalf("%s: computed %v, want c/0 and its inputs", damage, cnt.n)
		}
		if got := outputOf(t, b, g, "c/0"); got != want {
			t.Fatalf("%s: recomputed c/0 = %q, want %q", damage, got, want)
		}
	}
}

// A remote cell computed under an older stage version has another key and
// is not used; a record stored under a key it does not hash to is rejected
// with a reason.
func TestRemoteOlderVersionNotUsed(t *testing.T) {
	t.Parallel()
	cnt, _, g, a, r := pushedDiamond(t, all)
	g2 := newDiamond(cnt, 2).graph(t)
	b := openStore(t)
	p, err := MakePlanWith(b, g2, "p", []artifacts.Remote{r})
	if err != nil {
		t.Fatal(err)
	}
	if pc := p.Cell("c/0"); pc.State != Stale {
		t.Fatalf("c/0 under stage version 2: %v from remote %q, want to run", pc.State, pc.Remote)
	}
	if pc := p.Cell("b/0"); pc.State != InRemote {
		t.Fatalf("b/0: %v, want in remote", pc.State)
	}

	// c's v1 record copied under c's v2 key is rejected, and so is a record
	// whose params were edited.
	pc := p.Cell("c/0")
	pa, _ := MakePlan(a, g, "p")
	for _, forge := range []struct {
		edit func(m *artifacts.Manifest)
		why  string
	}{
		{func(m *artifacts.Manifest) {}, "record is of c v1"},
		{func(m *artifacts.Manifest) { m.StageVersion = 2; m.Params = strings.Replace(m.Params, "v 1", "v 7", 1) }, "does not hash to its key"},
	} {
		m := *pa.Cell("c/0").Manifest
		m.Key = pc.Key
		forge.edit(&m)
		if err := r.PutManifest(&m); err != nil {
			t.Fatal(err)
		}
		p, err = MakePlanWith(b, g2, "p", []artifacts.Remote{r})
		if err != nil {
			t.Fatal(err)
		}
		if pc := p.Cell("c/0"); pc.State != Stale || !strings.Contains(JoinReasons(pc.Reasons), forge.why) {
			t.Fatalf("forged record: %v %v, want a reason with %q", pc.State, pc.Reasons, forge.why)
		}
	}
}

func openStore(t *testing.T) *artifacts.Store {
	t.Helper()
	st, err := artifacts.Open(t.TempDir(), artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// RemoteRun.Held names the cells the plan takes from a remote (pulled
// before the run, or records only): the ones whose key the remote holds,
// not those the run must compute.
func TestRemoteRunHeld(t *testing.T) {
	t.Parallel()
	_, d, _, _, r := pushedDiamond(t, all)
	d.params["a/1"].V = 2 // a/1, b/1 and c/0 compute; a/0 and b/0 come from r
	g := d.graph(t)
	rr, err := PrepareRemotes(context.Background(), openStore(t), g, "p", []artifacts.Remote{r}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var o RunOptions
	rr.Use(&o)
	for _, c := range g.Cells {
		if want := c.ID == "a/0" || c.ID == "b/0"; rr.Held(c) != want || o.Held(c) != want {
			t.Errorf("%s: Held %v, want %v", c.ID, rr.Held(c), want)
		}
	}
}
