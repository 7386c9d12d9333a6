package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"

	"repro/artifacts"
)

type valParams struct {
	Name string `toml:"name"`
	V    int    `toml:"v"`
	Fail bool   `toml:"fail"`
}

// counter counts stage executions per cell ID.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) inc(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[id]++
}

func (c *counter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := 0
	for _, v := range c.n {
		t += v
	}
	return t
}

func (c *counter) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n = map[string]int{}
}

func newStage(name string, version int, cnt *counter) *Stage {
	return &Stage{
		Name: name, Version: version,
		NewParams: func() any { return &valParams{} },
		Run: func(ctx context.Context, rc *RunContext) error {
			cnt.inc(rc.CellID)
			p := rc.Params.(*valParams)
			if p.Fail {
				return errors.New("boom")
			}
			out := fmt.Sprintf("%s v=%d", rc.Params.(*valParams).Name, p.V)
			for _, in := range []string{"a", "b"} {
				if rc.HasInput(in) {
					b, err := rc.Input(in).Read(ctx, "out")
					if err != nil {
						return err
					}
					out += "|" + string(b)
				}
			}
			rc.Put("out", []byte(out))
			return nil
		},
	}
}

// diamond builds A0, A1 -> B0, B1 -> C.
type diamond struct {
	A, B, C *Stage
	params  map[string]*valParams
}

func (d *diamond) graph(t *testing.T) *Graph {
	t.Helper()
	p := func(id string) *valParams {
		if d.params[id] == nil {
			d.params[id] = &valParams{V: 1}
		}
		d.params[id].Name = id
		cp := *d.params[id]
		return &cp
	}
	a0 := &Cell{ID: "a/0", Stage: d.A, Params: p("a/0")}
	a1 := &Cell{ID: "a/1", Stage: d.A, Params: p("a/1")}
	b0 := &Cell{ID: "b/0", Stage: d.B, Params: p("b/0"), Inputs: []CellInput{{"a", a0}}}
	b1 := &Cell{ID: "b/1", Stage: d.B, Params: p("b/1"), Inputs: []CellInput{{"a", a1}}}
	c := &Cell{ID: "c/0", Stage: d.C, Params: p("c/0"), Inputs: []CellInput{{"a", b0}, {"b", b1}}}
	g, err := NewGraph([]*Cell{c, b1, b0, a1, a0})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func run(t *testing.T, st *artifacts.Store, g *Graph, jobs int) *RunReport {
	t.Helper()
	ex := &LocalExecutor{Store: st, Stages: g.Stages}
	rep, err := Run(context.Background(), st, g, RunOptions{Profile: "p", Jobs: jobs, Executor: ex})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestRunCachesAndRerunsExactlyTheDependents(t *testing.T) {
	t.Parallel()
	cnt := &counter{n: map[string]int{}}
	d := &diamond{A: newStage("a", 1, cnt), B: newStage("b", 1, cnt), C: newStage("c", 1, cnt), params: map[string]*valParams{}}
	st, _ := artifacts.Open(t.TempDir(), artifacts.Options{})

	run(t, st, d.graph(t), 2)
	if cnt.total() != 5 {
		t.Fatalf("first run executed %d cells, want 5", cnt.total())
	}
	cnt.reset()
	if rep := run(t, st, d.graph(t), 2); cnt.total() != 0 || rep.Cached != 5 {
		t.Fatalf("second run executed %d cells (cached %d), want 0 (5)", cnt.total(), rep.Cached)
	}

	// One param of a/0 changes: a/0, b/0 and c/0 rerun, nothing else.
	d.params["a/0"].V = 2
	p, err := MakePlan(st, d.graph(t), "p")
	if err != nil {
		t.Fatal(err)
	}
	wantReason := map[string]string{"a/0": "config changed: a.v 1 -> 2", "b/0": "input changed: a/0", "c/0": "input changed: b/0"}
	for id, want := range wantReason {
		pc := p.Cell(id)
		if pc.State != Stale || !strings.Contains(JoinReasons(pc.Reasons), want) {
			t.Errorf("plan %s = %v %v, want run: %s", id, pc.State, pc.Reasons, want)
		}
	}
	if r, c := p.Counts(); r != 3 || c != 2 {
		t.Errorf("plan counts = %d run %d cached, want 3 and 2", r, c)
	}
	run(t, st, d.graph(t), 2)
	if got := cnt.n; cnt.total() != 3 || got["a/0"] != 1 || got["b/0"] != 1 || got["c/0"] != 1 {
		t.Fatalf("after a param change executed %v, want a/0 b/0 c/0 once", got)
	}

	// A stage version bump reruns that stage and its dependents.
	cnt.reset()
	d.B = newStage("b", 2, cnt)
	p, _ = MakePlan(st, d.graph(t), "p")
	if rs := JoinReasons(p.Cell("b/1").Reasons); !strings.Contains(rs, "stage version b 1 -> 2") {
		t.Errorf("plan b/1 reasons = %q", rs)
	}
	run(t, st, d.graph(t), 2)
	// b's new version writes the same bytes, so c's key is unchanged and c
	// is not recomputed (early cutoff: keys hash input content, not names).
	if cnt.total() != 2 || cnt.n["b/0"] != 1 || cnt.n["b/1"] != 1 {
		t.Fatalf("after a version bump executed %v, want b/0 and b/1", cnt.n)
	}

	// A version of some cells only (Stage.History): a fix that changes
	// the outputs of b/1's params reruns b/1 alone.
	cnt.reset()
	d.B = newStage("b", 2, cnt)
	d.B.History = []Bump{{Version: 3, Applies: func(params any) bool { return params.(*valParams).Name == "b/1" }, Why: "b/1 only"}}
	p, _ = MakePlan(st, d.graph(t), "p")
	if rs := JoinReasons(p.Cell("b/1").Reasons); !strings.Contains(rs, "stage version b 2 -> 3") {
		t.Errorf("plan b/1 reasons = %q", rs)
	}
	if p.Cell("b/0").State != Cached {
		t.Errorf("plan b/0 = %v %v, want cached", p.Cell("b/0").State, p.Cell("b/0").Reasons)
	}
	run(t, st, d.graph(t), 2)
	if cnt.total() != 1 || cnt.n["b/1"] != 1 {
		t.Fatalf("after a per-cell version bump executed %v, want b/1 only", cnt.n)
	}

	// A bump of the stage's Version above every per-cell version reruns
	// every cell of the stage: History never hides Version
	// (CellVersion is the largest of them).
	cnt.reset()
	history := d.B.History
	d.B = newStage("b", 4, cnt)
	d.B.History = history
	p, _ = MakePlan(st, d.graph(t), "p")
	for id, want := range map[string]string{"b/0": "stage version b 2 -> 4", "b/1": "stage version b 3 -> 4"} {
		if pc := p.Cell(id); pc.State != Stale || len(pc.Reasons) != 1 || pc.Reasons[0].Kind != ReasonStageVersion || pc.Reasons[0].String() != want {
			t.Errorf("plan %s = %v %v, want to run: %s", id, pc.State, pc.Reasons, want)
		}
	}
	run(t, st, d.graph(t), 2)
	if cnt.total() != 2 || cnt.n["b/0"] != 1 || cnt.n["b/1"] != 1 {
		t.Fatalf("after a stage Version bump over History executed %v, want b/0 and b/1", cnt.n)
	}

	// An output removed from the store: that cell reruns (and nothing
	// downstream, since it reproduces the same bytes).
	cnt.reset()
	m, _ := st.Lookup(p.Cell("a/1").Key)
	os.Remove(st.BlobPath(m.Outputs[0].Digest))
	p, _ = MakePlan(st, d.graph(t), "p")
	if rs := JoinReasons(p.Cell("a/1").Reasons); !strings.Contains(rs, "output missing") {
		t.Errorf("plan a/1 reasons = %q, want output missing", rs)
	}
	run(t, st, d.graph(t), 2)
	if cnt.total() != 1 || cnt.n["a/1"] != 1 {
		t.Fatalf("after deleting an output executed %v, want a/1 only", cnt.n)
	}
}

func TestRunFailureBlocksOnlyDependents(t *testing.T) {
	t.Parallel()
	cnt := &counter{n: map[string]int{}}
	d := &diamond{A: newStage("a", 1, cnt), B: newStage("b", 1, cnt), C: newStage("c", 1, cnt), params: map[string]*valParams{}}
	d.params["b/0"] = &valParams{V: 1, Fail: true}
	st, _ := artifacts.Open(t.TempDir(), artifacts.Options{})
	g := d.graph(t)
	rep := run(t, st, g, 3)
	if rep.Failed != 1 || rep.Skipped != 1 || rep.Executed != 3 {
		t.Fatalf("report = %+v, want 3 executed, 1 failed (b/0), 1 skipped (c/0)", rep)
	}
	if err := rep.Err(); err == nil || !strings.Contains(err.Error(), "b/0") || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("report error = %v", err)
	}
	p, _ := MakePlan(st, g, "p")
	pc := p.Cell("b/0")
	if pc.Failure == nil || !strings.Contains(JoinReasons(pc.Reasons), "failed last time") {
		t.Fatalf("plan b/0 = %v, failure %v", pc.Reasons, pc.Failure)
	}
	if log, err := st.Get(pc.Failure.Log); err != nil || !strings.Contains(string(log), "boom") {
		t.Fatalf("failure log = %q, %v", log, err)
	}
}

func TestRunIsDeterministicAcrossWorkers(t *testing.T) {
	t.Parallel()
	digests := func(jobs int) map[string]artifacts.Digest {
		cnt := &counter{n: map[string]int{}}
		d := &diamond{A: newStage("a", 1, cnt), B: newStage("b", 1, cnt), C: newStage("c", 1, cnt), params: map[string]*valParams{}}
		st, _ := artifacts.Open(t.TempDir(), artifacts.Options{})
		g := d.graph(t)
		run(t, st, g, jobs)
		p, _ := MakePlan(st, g, "p")
		out := map[string]artifacts.Digest{}
		for _, pc := range p.Cells {
			out[pc.Cell.ID] = pc.Manifest.Outputs[0].Digest
		}
		return out
	}
	a, b := digests(1), digests(4)
	for id := range a {
		if a[id] != b[id] {
			t.Errorf("%s: -j 1 gives %s, -j 4 gives %s", id, a[id].Short(), b[id].Short())
		}
	}
}

func TestKeyIgnoresCellID(t *testing.T) {
	t.Parallel()
	// Same stage, params and inputs under two names: one key, one run.
	cnt := &counter{n: map[string]int{}}
	s := newStage("a", 1, cnt)
	g, err := NewGraph([]*Cell{{ID: "a/x", Stage: s, Params: &valParams{V: 7}}, {ID: "a/y", Stage: s, Params: &valParams{V: 7}}})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := artifacts.Open(t.TempDir(), artifacts.Options{})
	p, _ := MakePlan(st, g, "p")
	if p.Cells[0].Key != p.Cells[1].Key {
		t.Fatal("cells with equal stage, params and inputs have different keys")
	}
}

// TestRecomputeRecordFindsNondeterminism: recomputing planned cells'
// manifests, as repro verify --recompute does, finds the output that
// changed.
func TestRecomputeRecordFindsNondeterminism(t *testing.T) {
	t.Parallel()
	var calls int
	var mu sync.Mutex
	flaky := &Stage{Name: "flaky", Version: 1, NewParams: func() any { return &valParams{} },
		Run: func(ctx context.Context, rc *RunContext) error {
			mu.Lock()
			calls++
			n := calls
			mu.Unlock()
			rc.Put("out", []byte(fmt.Sprint(n)))
			return nil
		}}
	cnt := &counter{n: map[string]int{}}
	steady := newStage("steady", 1, cnt)
	g, err := NewGraph([]*Cell{{ID: "flaky/0", Stage: flaky, Params: &valParams{}}, {ID: "steady/0", Stage: steady, Params: &valParams{}}})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := artifacts.Open(t.TempDir(), artifacts.Options{})
	run(t, st, g, 1)
	p, _ := MakePlan(st, g, "p")
	opt := ExecOptions{Stages: g.Stages}
	if mm, err := RecomputeRecord(context.Background(), st, p.Cell("steady/0").Manifest, opt); err != nil || len(mm) != 0 {
		t.Fatalf("steady cell: %v %v", mm, err)
	}
	mm, err := RecomputeRecord(context.Background(), st, p.Cell("flaky/0").Manifest, opt)
	if err != nil || len(mm) != 1 || mm[0].Output != "out" {
		t.Fatalf("flaky cell: %v %v, want one differing output", mm, err)
	}

	// Restamp gives a matching cell's record of this run, and none for
	// the flaky one.
	old := p.Cell("steady/0").Manifest
	mm, rec, err := Restamp(context.Background(), st, old, ExecOptions{Stages: g.Stages, Executor: "verify"})
	if err != nil || len(mm) != 0 || rec == nil {
		t.Fatalf("restamp steady cell: %v %v %v", mm, rec, err)
	}
	if rec.Key != old.Key || !reflect.DeepEqual(rec.Outputs, old.Outputs) || rec.Provenance.Executor != "verify" ||
		rec.Provenance.CPU == "" || rec.Provenance.Kernels == "" || rec.Provenance.Start.Equal(old.Provenance.Start) {
		t.Errorf("restamped record %+v, from %+v", rec, old)
	}
	if want := []artifacts.Build{old.Provenance.Build()}; !reflect.DeepEqual(rec.Provenance.Earlier, want) {
		t.Errorf("restamped record's earlier builds %+v, want the replaced record's %+v", rec.Provenance.Earlier, want)
	}
	if again, _ := json.Marshal(rec); !bytes.Contains(again, []byte(`"earlier":[{"revision"`)) {
		t.Errorf("the record does not write its earlier builds: %s", again)
	}
	if err := st.PutManifest(rec); err != nil {
		t.Errorf("the restamped record's blobs are not all in the store: %v", err)
	}
	// A second recompute keeps the first build first.
	if _, rec2, err := Restamp(context.Background(), st, rec, ExecOptions{Stages: g.Stages, Executor: "verify"}); err != nil || len(rec2.Provenance.Earlier) != 2 ||
		rec2.Provenance.Earlier[0] != old.Provenance.Build() || rec2.Provenance.Earlier[1] != rec.Provenance.Build() {
		t.Errorf("second restamp: %v, earlier builds %+v", err, rec2)
	}
	if mm, rec, err := Restamp(context.Background(), st, p.Cell("flaky/0").Manifest, opt); err != nil || len(mm) != 1 || rec != nil {
		t.Errorf("restamp flaky cell: %v %v %v, want one differing output and no record", mm, rec, err)
	}
}

// TestRunPanicFailsOnlyItsCell: a stage that panics (here an allocation of
// an impossible length, as a huge buffer in pipeline.toml once made) fails
// its cell with the panic and its stack in the cell's log, blocks only its
// dependents, and leaves no lock; the other cells finish.
func TestRunPanicFailsOnlyItsCell(t *testing.T) {
	t.Parallel()
	cnt := &counter{n: map[string]int{}}
	d := &diamond{A: newStage("a", 1, cnt), B: newStage("b", 1, cnt), C: newStage("c", 1, cnt), params: map[string]*valParams{}}
	run := d.B.Run
	d.B.Run = func(ctx context.Context, rc *RunContext) error {
		if rc.CellID == "b/0" {
			n := -1 + len(rc.CellID) - 3 // 0, computed so that vet cannot see it
			_ = make([]float32, n-1)     // panics: makeslice: len out of range
		}
		return run(ctx, rc)
	}
	st, _ := artifacts.Open(t.TempDir(), artifacts.Options{})
	g := d.graph(t)
	rep, err := Run(context.Background(), st, g, RunOptions{Profile: "p", Jobs: 2, Executor: &LocalExecutor{Store: st, Stages: g.Stages}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed != 1 || rep.Skipped != 1 || rep.Executed != 3 {
		t.Fatalf("report = %+v, want 3 executed, 1 failed (b/0), 1 skipped (c/0)", rep)
	}
	if err := rep.Err(); err == nil || !strings.Contains(err.Error(), "b/0") || !strings.Contains(err.Error(), "panic: runtime error: makeslice: len out of range") {
		t.Fatalf("report error = %v", err)
	}
	p, _ := MakePlan(st, g, "p")
	pc := p.Cell("b/0")
	if pc.Failure == nil {
		t.Fatal("no failure record for the cell that panicked")
	}
	log, err := st.Get(pc.Failure.Log)
	if err != nil || !strings.Contains(string(log), "goroutine ") || !strings.Contains(string(log), "TestRunPanicFailsOnlyItsCell") {
		t.Fatalf("failure log holds no stack: %q, %v", log, err)
	}
	locks, err := os.ReadDir(st.Root() + "/locks")
	if err != nil {
		t.Fatal(err) // the store keeps its locks there: no directory would be no check
	}
	if len(locks) != 0 {
		t.Fatalf("locks left: %v", locks)
	}
}

// flipOutput flips a byte in the first output blob of cell id's record.
func flipOutput(t *testing.T, st *artifacts.Store, g *Graph, id string) artifacts.Key {
	t.Helper()
	p, err := MakePlan(st, g, "p")
	if err != nil {
		t.Fatal(err)
	}
	pc := p.Cell(id)
	path := st.BlobPath(pc.Manifest.Outputs[0].Digest)
	b, _ := os.ReadFile(path)
	b[len(b)/2] ^= 1
	os.Chmod(path, 0o644)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return pc.Key
}

// TestRunRecomputesDamagedOutputs: verify on read. A cached output that
// does not hash to its digest is recomputed in the run that meets it, and
// the run says so (EventDamaged): at once for a small output; for one
// above LazyCheckAbove only when a cell reading it is about to run, and
// then before that cell reads it.
func TestRunRecomputesDamagedOutputs(t *testing.T) {
	t.Parallel()
	for _, lazy := range []bool{false, true} {
		cnt := &counter{n: map[string]int{}}
		d := &diamond{A: newStage("a", 1, cnt), B: newStage("b", 1, cnt), C: newStage("c", 1, cnt), params: map[string]*valParams{}}
		st, _ := artifacts.Open(t.TempDir(), artifacts.Options{})
		g := d.graph(t)
		opt := RunOptions{Profile: "p", Jobs: 2, Executor: &LocalExecutor{Store: st, Stages: g.Stages}}
		if lazy {
			opt.LazyCheckAbove = 1 // every output is "large"
		}
		var damaged []string
		var mu sync.Mutex
		opt.Events = func(ev Event) {
			if ev.Kind == EventDamaged {
				mu.Lock()
				damaged = append(damaged, ev.Cell.ID)
				mu.Unlock()
			}
		}
		if _, err := Run(context.Background(), st, g, opt); err != nil {
			t.Fatal(err)
		}
		flipOutput(t, st, g, "a/0")
		cnt.reset()
		// A new process: a Store trusts the blobs it checked itself.
		st, _ = artifacts.Open(st.Root(), artifacts.Options{})
		opt.Executor = &LocalExecutor{Store: st, Stages: g.Stages}
		rep, err := Run(context.Background(), st, g, opt)
		if err != nil {
			t.Fatal(err)
		}
		if lazy {
			// Nothing that runs reads a/0: it is not read, not served.
			if rep.Damaged != 0 || cnt.total() != 0 {
				t.Fatalf("lazy, no reader runs: %+v, ran %v", rep, cnt.n)
			}
			// Make b/0 (a/0's reader) run: a/0 is checked and repaired
			// first, and b/0 reads the repaired output.
			bk := flipOutput(t, st, g, "b/0")
			os.Remove(st.ManifestPath(bk))
			rep, err = Run(context.Background(), st, g, opt)
			if err != nil {
				t.Fatal(err)
			}
		}
		if rep.Damaged != 1 || rep.Failed != 0 || cnt.n["a/0"] != 1 || len(damaged) != 1 || damaged[0] != "a/0" {
			t.Fatalf("lazy %v: report %+v, ran %v, damaged events %v", lazy, rep, cnt.n, damaged)
		}
		if lazy && (cnt.n["b/0"] != 1 || rep.Executed != 2 || rep.Cached != 3) {
			t.Fatalf("lazy: report %+v, ran %v", rep, cnt.n)
		}
		if !lazy && (rep.Executed != 1 || rep.Cached != 4) {
			t.Fatalf("eager: report %+v, ran %v", rep, cnt.n)
		}
		if r, err := st.Verify(context.Background(), nil); err != nil || len(r.Problems) != 0 {
			t.Fatalf("lazy %v: verify after the run: %+v, %v", lazy, r.Problems, err)
		}
	}
}
