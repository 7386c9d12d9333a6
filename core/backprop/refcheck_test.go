package backprop

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"repro/core"
	"repro/internal/refdump"
)

// The differential check of the backprop k-WTA learner on the local
// schedule against the authors' run_bp_local (make reference-check;
// opt-in, REPRO_REFCHECK=1; docs/reference-check.md). For every path below,
// tools/refcheck/refbp.py runs the authors' code up to a waking batch and
// writes the state, the batches and the random draws; this test loads the
// state into our runner (injectLocal), replays the draws (core.TapeRNG),
// runs the same steps and compares every tensor: the passes' activities,
// the logits and the state after each optimiser step of the first batch,
// then the state every `every` batches.

// bpRefPath is one learner path: a reference config and the steps recorded.
type bpRefPath struct {
	name  string // the line's label
	ref   string // the authors' config name
	ours  func() (Config, error)
	step  int // first waking batch recorded (1-based)
	steps int // batches run
	every int // state compared every n batches
	// epochs per task of the reference's run (0: its config's); 1 brings
	// the first task boundary to waking batch 793.
	epochs int
	// control: a deliberately wrong port (the check must report it).
	control bool
	// clearAtTask clears the rotation's suppression when a task starts, as
	// this port did before d4bed59 (a control).
	clearAtTask bool
	// alter, when set, changes our step after every injection (a control:
	// a wrong port the configuration does not show).
	alter func(s *localStep)
	// alterBatch, when set, changes our batch-protocol runner after every
	// injection (a control, as alter).
	alterBatch func(r *runner)
	ci         bool // in the CI's short set
	trajec     bool // in the full set only
}

// bpRefConfig is the one place the check builds our configuration of a
// reference config: the preset of that name (presets), then
// edit (nil: none).
func bpRefConfig(name string, edit func(c *Config)) func() (Config, error) {
	return func() (Config, error) {
		c, ok := testPreset(name)
		if !ok {
			return c, fmt.Errorf("no backprop preset %q", name)
		}
		if edit != nil {
			edit(&c)
		}
		return c, c.Validate()
	}
}

// The first task (digits 0 and 1, 12,665 samples) has 792 waking batches of
// 16 per epoch; the paths across the first task boundary run the reference
// at one epoch per task (the boundary mechanics do not depend on the epoch
// count, and the run is five times shorter), so the second task starts at
// waking batch 793.
var bpRefPaths = []bpRefPath{
	{name: "control: BP k-WTA, isolated with rotation, Adam's weight decay doubled", ci: true, ref: "bpk_iso_rot_lr1e4", control: true,
		ours: bpRefConfig("bpk_iso_rot_lr1e4", func(c *Config) { c.WeightDecay *= 2 })},
	{name: "control: BP k-WTA, isolated with rotation, the mask's presynaptic side dropped on the second layer", ci: true, ref: "bpk_iso_rot_lr1e4", control: true,
		ours: bpRefConfig("bpk_iso_rot_lr1e4", nil), alter: func(s *localStep) { s.mask.Pre[1] = nil }},
	{name: "BP k-WTA, interleaved", ci: true, ref: "bpk_er_lr3e5", ours: bpRefConfig("bpk_er_lr3e5", nil)},
	{name: "BP k-WTA, isolated", ci: true, ref: "bpk_iso_lr1e4", ours: bpRefConfig("bpk_iso_lr1e4", nil)},
	{name: "BP k-WTA, interleaved with rotation", ci: true, ref: "bpk_er_rot_lr1e4", ours: bpRefConfig("bpk_er_rot_lr1e4", nil)},
	{name: "BP k-WTA, isolated with rotation", ci: true, ref: "bpk_iso_rot_lr1e4", ours: bpRefConfig("bpk_iso_rot_lr1e4", nil)},
	{name: "BP k-WTA, isolated with rotation, across the first task boundary", ci: true, ref: "bpk_iso_rot_lr1e4",
		ours: bpRefConfig("bpk_iso_rot_lr1e4", nil), step: 791, steps: 4, every: 1, epochs: 1},
	{name: "control: BP k-WTA, isolated with rotation, suppression cleared at the task boundary (the port before d4bed59)", ci: true,
		ref: "bpk_iso_rot_lr1e4", ours: bpRefConfig("bpk_iso_rot_lr1e4", nil), step: 791, steps: 4, every: 1, epochs: 1, control: true, clearAtTask: true},
	{name: "BP k-WTA, interleaved, trajectory", ref: "bpk_er_lr3e5", ours: bpRefConfig("bpk_er_lr3e5", nil), steps: 300, every: 50, trajec: true},
	{name: "BP k-WTA, isolated, trajectory", ref: "bpk_iso_lr1e4", ours: bpRefConfig("bpk_iso_lr1e4", nil), steps: 300, every: 50, trajec: true},
	{name: "BP k-WTA, interleaved with rotation, trajectory across the first task boundary", ref: "bpk_er_rot_lr1e4",
		ours: bpRefConfig("bpk_er_rot_lr1e4", nil), step: 751, steps: 200, every: 50, epochs: 1, trajec: true},
	{name: "BP k-WTA, isolated with rotation, trajectory across the first task boundary", ref: "bpk_iso_rot_lr1e4",
		ours: bpRefConfig("bpk_iso_rot_lr1e4", nil), step: 751, steps: 200, every: 50, epochs: 1, trajec: true},
	{name: "control: BP k-WTA, isolated with rotation, trajectory across the first task boundary, suppression cleared there (the port before d4bed59)",
		ref: "bpk_iso_rot_lr1e4", ours: bpRefConfig("bpk_iso_rot_lr1e4", nil), step: 751, steps: 200, every: 50, epochs: 1, trajec: true, control: true, clearAtTask: true},
}

func TestReferenceCheck(t *testing.T) {
	py := refdump.Python(t)
	ref := refdump.EnvOr("REPRO_REFCHECK_REF", "../../../shared/spec/reference/src")
	mnist := refdump.EnvOr("REPRO_REFCHECK_MNIST", filepath.Join(os.Getenv("REPRO_DATA"), "mnist"))
	refdump.Need(t, filepath.Join(ref, "run_seq.py"), filepath.Join(mnist, "train-images-idx3-ubyte.gz"))
	only := os.Getenv("REPRO_REFCHECK_ONLY")
	set := refdump.Set(t)
	var tally refdump.Tally
	type job struct {
		p   bpRefPath
		run func(*testing.T, string, string, string, bpRefPath) string
	}
	var jobs []job
	for _, p := range bpRefPaths {
		jobs = append(jobs, job{p, runBPRefPath})
	}
	for _, p := range bpBatchPaths {
		jobs = append(jobs, job{p, runBatchRefPath})
	}
	for _, p := range bpFitPaths {
		jobs = append(jobs, job{p, runFitRefPath})
	}
	for _, j := range jobs {
		p := j.p
		if (set == "ci" && !p.ci) || (set != "all" && p.trajec) {
			continue
		}
		if only != "" && !strings.Contains(p.name, only) && p.ref != only {
			continue
		}
		line := j.run(t, py, ref, mnist, p)
		tally.Line(line, p.control)
	}
	if tally.Failed > 0 {
		t.Errorf("%d paths differ from the authors' code (lines above)", tally.Failed)
	}
}

// runBPRefPath records the reference and runs ours; it returns the path's
// line.
func runBPRefPath(t *testing.T, py, ref, mnist string, p bpRefPath) string {
	step, steps, every := p.step, max(p.steps, 1), max(p.every, 1)
	if step == 0 {
		step = 70 // the buffer is full (1,000 samples), so the reservoir writes draw
	}
	dir := filepath.Join(t.TempDir(), "dump")
	cmd := exec.Command(py, "../../tools/refcheck/refbp.py", "--ref", ref, "--mnist", mnist, "--config", p.ref,
		"--step", strconv.Itoa(step), "--steps", strconv.Itoa(steps), "--every", strconv.Itoa(every),
		"--epochs", strconv.Itoa(p.epochs), "--out", dir)
	cmd.Env = append(os.Environ(), "OMP_NUM_THREADS=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Sprintf("%s: not run: refbp.py: %v: %s", p.name, err, refdump.LastLine(string(out)))
	}
	d, err := refdump.Load(dir)
	if err != nil {
		return fmt.Sprintf("%s: not run: %v", p.name, err)
	}
	cfg, err := p.ours()
	if err != nil {
		return fmt.Sprintf("%s: not run: our config: %v", p.name, err)
	}
	return p.name + ": " + checkBPDump(d, cfg, p.clearAtTask, p.alter)
}

// tensors converts a dump's tensors to core's type.
func tensors(d *refdump.Dump) core.Tensors {
	ts := core.Tensors{}
	for n, x := range d.Tensors {
		ts[n] = core.Tensor{Shape: x.Shape, F32: x.F32, F64: x.F64, I32: x.I32}
	}
	return ts
}

func refTensor(t core.Tensor) refdump.Tensor {
	return refdump.Tensor{Shape: t.Shape, F32: t.F32, F64: t.F64, I32: t.I32}
}

// bpExact are compared bit for bit (counts, labels, copies, masks).
var bpExact = []string{"t", "bufSeen", "bufY", "bufX", "sup", "X", "y"}

// bpOrder is the order the state's tensors are compared in: counts and
// copies first, then biases before weights, values before moments.
var bpOrder = []string{"X", "y", "t", "bufSeen", "bufY", "bufX", "bufZ", "sup", "b", "mb", "vb", "W", "mW", "vW", "out"}

func bpKey(n string) int {
	base := strings.TrimRight(n, "0123456789")
	if i := slices.Index(bpOrder, base); i >= 0 {
		return i
	}
	return len(bpOrder)
}

// compareBP compares every tensor of ours with ref's tag/name and returns
// the first difference, or "". A tensor present on one side only differs.
func compareBP(ours core.Tensors, ref map[string]refdump.Tensor, tag string) string {
	names := make([]string, 0, len(ours))
	for n := range ours {
		names = append(names, n)
	}
	for n := range ref {
		if rest, ok := strings.CutPrefix(n, tag+"/"); ok && !strings.Contains(rest, "/") {
			if _, have := ours[rest]; !have {
				return fmt.Sprintf("%s: ours absent, reference present", rest)
			}
		}
	}
	sort.Slice(names, func(i, j int) bool {
		if ki, kj := bpKey(names[i]), bpKey(names[j]); ki != kj {
			return ki < kj
		}
		return names[i] < names[j]
	})
	for _, n := range names {
		rt, ok := ref[tag+"/"+n]
		if !ok {
			return fmt.Sprintf("%s: ours present, reference absent", n)
		}
		exact := slices.Contains(bpExact, strings.TrimRight(n, "0123456789"))
		if v := refdump.Compare(n, refTensor(ours[n]), rt, exact, nil); v != "" {
			return v
		}
	}
	return ""
}

// checkBPDump runs our learner from the dump's pre-state and returns the
// verdict. clearAtTask clears the suppression when a task starts (a
// control: the port before d4bed59); alter (when non-nil) changes our step
// after every injection (a control).
func checkBPDump(d *refdump.Dump, cfg Config, clearAtTask bool, alter func(*localStep)) string {
	steps := int(d.Num("steps"))
	every := 1
	if a, ok := d.Meta["args"].(map[string]any); ok {
		every = int(a["every"].(float64))
	}
	rc, _ := d.Meta["config"].(map[string]any)
	flag := func(k string) float64 {
		if b, _ := rc[k].(bool); b {
			return 1
		}
		return 0
	}
	b2f := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	sizes, _ := d.Meta["sizes"].([]any)
	if len(sizes) != len(cfg.Hidden)+2 {
		return fmt.Sprintf("differs at step 0, tensor config.sizes: ours %d layers, reference %d", len(cfg.Hidden)+2, len(sizes))
	}
	checks := []struct {
		name      string
		ours, ref float64
	}{
		{"config.lr", cfg.LR, d.Num("lr")}, {"config.lr_replay", cfg.LR * cfg.ReplayGain, d.Num("lr_replay")},
		{"config.batch_replay", float64(cfg.ReplayBatch), d.Num("batch_replay")},
		{"config.kwta", cfg.KWTA, rc["bp_kwta"].(float64)},
		{"config.isolate", b2f(cfg.Isolate), flag("isolate")}, {"config.rotate", b2f(cfg.Rotate), flag("rotate")},
	}
	for l, h := range cfg.Hidden {
		checks = append(checks, struct {
			name      string
			ours, ref float64
		}{fmt.Sprintf("config.hidden[%d]", l), float64(h), sizes[l+1].(float64)})
	}
	for _, c := range checks {
		if math.Abs(c.ours-c.ref) > 1e-12*math.Abs(c.ref) {
			return fmt.Sprintf("differs at step 0, tensor %s: ours %g, reference %g", c.name, c.ours, c.ref)
		}
	}
	// A data set of the recorded batches, and the taped draws.
	train := &core.Dataset{D: 784, Classes: 10, Height: 28, Width: 28}
	var batches [][]int
	var draws []core.Draw
	perStep := make([]int, steps)
	for s := range steps {
		x, y := d.Tensors[fmt.Sprintf("s%d/X", s)], d.Tensors[fmt.Sprintf("s%d/y", s)]
		if len(y.I32) == 0 || len(x.F32) != len(y.I32)*train.D {
			return fmt.Sprintf("not run: step %d: the recorded batch is missing or malformed", s)
		}
		var idx []int
		for range y.I32 {
			idx = append(idx, train.N)
			train.N++
		}
		train.X = append(train.X, x.F32...)
		train.Y = append(train.Y, y.I32...)
		batches = append(batches, idx)
		for j := 0; ; j++ {
			key := fmt.Sprintf("s%d/d%d", s, j)
			v, ok := d.Tensors[key+"/randint"]
			if !ok {
				if _, perm := d.Tensors[key+"/randperm"]; perm {
					return fmt.Sprintf("not run: %s: a randperm draw, which run_bp_local's steps never make", key)
				}
				break
			}
			high := int(d.Entry("draws", key)["high"].(float64))
			for _, x := range v.I32 {
				draws = append(draws, core.Draw{Value: int(x), N: high})
			}
		}
		perStep[s] = len(draws)
	}
	ts := tensors(d)
	r, ls, err := injectLocal(cfg, train, ts, "pre")
	if err != nil {
		return "not run: " + err.Error()
	}
	done := 0
	r.rng = core.TapeRNG(draws, &done)
	if alter != nil {
		alter(ls)
	}
	var verdict string
	var ties []string
	step, calls, tied := 0, 0, false
	probe := func(stage string) {
		if verdict != "" || tied {
			return
		}
		pass := ls.wake
		if stage == "replay" {
			pass = ls.rep
		}
		tag := fmt.Sprintf("s%d/p%d", step, calls)
		calls++
		L := r.net.Layers()
		// Activities first: a k-WTA set that differs is either a near-tie or
		// a difference.
		for l := 1; l < L; l++ {
			name := fmt.Sprintf("a%d", l)
			rt, ok := d.Tensors[tag+"/"+name]
			if !ok {
				verdict = fmt.Sprintf("differs at step %d (%s pass), tensor %s: ours present, reference absent", step, stage, name)
				return
			}
			n := pass.Rows * r.net.Sizes[l]
			ours := refdump.Tensor{Shape: []int{pass.Rows, r.net.Sizes[l]}, F32: pass.A[l][:n]}
			if v, tie := refdump.CompareActivity(name, ours, rt); v != "" {
				if tie {
					tied = true
					ties = append(ties, fmt.Sprintf("step %d, %s pass: %s", step, stage, v))
				} else {
					verdict = fmt.Sprintf("differs at step %d (%s pass), tensor %s", step, stage, v)
				}
				return
			}
		}
		if step > 0 {
			return
		}
		C := r.net.Classes()
		pt := core.Tensors{"out": {Shape: []int{pass.Rows, C}, F32: pass.A[L][:pass.Rows*C]}}
		if stage == "replay" {
			D := train.D
			pt["X"] = core.Tensor{Shape: []int{pass.Rows, D}, F32: pass.A[0][:pass.Rows*D]}
			pt["y"] = core.Tensor{Shape: []int{pass.Rows}, I32: ls.y[:pass.Rows]}
		}
		for n, o := range pt {
			exact := n == "X" || n == "y"
			if v := refdump.Compare(n, refTensor(o), d.Tensors[tag+"/"+n], exact, nil); v != "" {
				verdict = fmt.Sprintf("differs at step 0 (%s pass), tensor %s", stage, v)
				return
			}
		}
		// The reference writes its state after the optimiser call, before
		// it rewrites the suppression; our probe runs at the same point.
		if v := compareBP(r.exportState(), d.Tensors, fmt.Sprintf("s0/u%d", calls-1)); v != "" {
			verdict = fmt.Sprintf("differs at step 0 (after the %s update), tensor %s", stage, v)
		}
	}
	ls.probe = probe
	starts, _ := d.Meta["starts"].(map[string]any)
	crossed := ""
	for s := 0; ; s++ {
		if s > 0 {
			if done != perStep[s-1] {
				return fmt.Sprintf("differs at step %d, tensor random draws: ours %d, reference %d", s-1, done, perStep[s-1])
			}
			if s%every == 0 {
				tag := fmt.Sprintf("post%d", s)
				if !tied {
					if v := compareBP(r.exportState(), d.Tensors, tag); v != "" {
						return fmt.Sprintf("differs at step %d, tensor %s", s-1, v)
					}
				} else if s < steps {
					// After a near-tie: continue from the reference's state at
					// this checkpoint (the steps since the tie go unchecked).
					if r, ls, err = injectLocal(cfg, train, ts, tag); err != nil {
						return "not run: " + err.Error()
					}
					done = 0
					base := perStep[s-1]
					r.rng = core.TapeRNG(draws[base:], &done)
					for k := range perStep {
						perStep[k] -= base
					}
					ls.probe, tied = probe, false
					if alter != nil {
						alter(ls)
					}
				}
			}
		}
		if s == steps {
			break
		}
		// What the reference's loop ran before batch s: an epoch's or a
		// task's start (its evaluation leaves the state alone).
		if st, ok := starts[fmt.Sprintf("s%d", s)].(map[string]any); ok && s > 0 && st["epoch"] == true {
			what := "an epoch start"
			if st["task"] == true {
				what = "a task start"
				if clearAtTask {
					for _, sup := range r.supp {
						clear(sup)
					}
				}
			}
			crossed += fmt.Sprintf(", across %s at step %d", what, s)
		}
		step, calls = s, 0
		var msg any
		func() {
			defer func() { msg = recover() }()
			ls.step(batches[s])
		}()
		if msg != nil {
			return fmt.Sprintf("differs at step %d: the draws: %v", s, msg)
		}
		if verdict != "" {
			return verdict
		}
		if s == 0 && !tied {
			n := 0
			for k := range d.Meta["updates"].(map[string]any) {
				if strings.HasPrefix(k, "s0/u") {
					n++
				}
			}
			if calls != n {
				return fmt.Sprintf("differs at step 0, tensor update calls: ours %d, reference %d", calls, n)
			}
		}
	}
	if len(ties) > 0 {
		return fmt.Sprintf("identical through %d steps%s, re-synchronised at the next checkpoint after %d k-WTA near-tie(s) within float32 rounding (first: %s)", steps, crossed, len(ties), ties[0])
	}
	return fmt.Sprintf("identical through %d steps%s", steps, crossed)
}

// bpBatchPaths are the batch protocol's baselines (the reference's run()
// with model "bp"). A run of 256-sample batches fills the 1,000-sample
// buffer on its fourth batch, so batch 6 already writes and draws; the
// first task has 50 batches per epoch, so the second task starts at batch
// 251.
var bpBatchPaths = []bpRefPath{
	{name: "control: BP+ER with Adam's weight decay doubled", ci: true, ref: "bp_er_1000", control: true, step: 6,
		ours: bpRefConfig("bp_er_1000", func(c *Config) { c.WeightDecay *= 2 })},
	{name: "BP+ER", ci: true, ref: "bp_er_1000", ours: bpRefConfig("bp_er_1000", nil), step: 6},
	{name: "DER++", ci: true, ref: "bp_derpp_a0.03_b1.0_w512_ce", ours: bpRefConfig("bp_derpp_a0.03_b1.0_w512_ce", nil), step: 6},
	{name: "ER-ACE", ci: true, ref: "bp_erace_1000", ours: bpRefConfig("bp_erace_1000", nil), step: 6},
	{name: "A-GEM", ci: true, ref: "bp_agem_1000_w512", ours: bpRefConfig("bp_agem_1000_w512", nil), step: 6},
	{name: "BP+ER, trajectory across the first task boundary", ref: "bp_er_1000", ours: bpRefConfig("bp_er_1000", nil), step: 231, steps: 40, every: 10, trajec: true},
	{name: "DER++, trajectory across the first task boundary", ref: "bp_derpp_a0.03_b1.0_w512_ce", ours: bpRefConfig("bp_derpp_a0.03_b1.0_w512_ce", nil), step: 231, steps: 40, every: 10, trajec: true},
	{name: "ER-ACE, trajectory across the first task boundary", ref: "bp_erace_1000", ours: bpRefConfig("bp_erace_1000", nil), step: 231, steps: 40, every: 10, trajec: true},
	{name: "control: ER-ACE, trajectory across the first task boundary, Adam's weight decay doubled", ref: "bp_erace_1000", control: true,
		ours: bpRefConfig("bp_erace_1000", func(c *Config) { c.WeightDecay *= 2 }), step: 231, steps: 40, every: 10, trajec: true},
	{name: "A-GEM, trajectory across the first task boundary", ref: "bp_agem_1000_w512", ours: bpRefConfig("bp_agem_1000_w512", nil), step: 231, steps: 40, every: 10, trajec: true},
	{name: "control: A-GEM, trajectory across the first task boundary, Adam's weight decay doubled", ref: "bp_agem_1000_w512", control: true,
		ours: bpRefConfig("bp_agem_1000_w512", func(c *Config) { c.WeightDecay *= 2 }), step: 231, steps: 40, every: 10, trajec: true},
}

// batchRecordings holds this test run's recordings of the reference's
// run() (refbatch.py) and fit_bp (reffitbp.py), by driver and arguments,
// so that a control reuses its path's.
var batchRecordings = map[string]*refdump.Dump{}

// runBatchRefPath records the reference's run() (or reuses a recording of
// the same arguments) and runs ours; it returns the path's line.
func runBatchRefPath(t *testing.T, py, ref, mnist string, p bpRefPath) string {
	return runRecordedBatchPath(t, "refbatch.py", py, ref, mnist, p)
}

// runFitRefPath records the reference's fit_bp (or reuses a recording of
// the same arguments) and runs ours; it returns the path's line.
func runFitRefPath(t *testing.T, py, ref, mnist string, p bpRefPath) string {
	return runRecordedBatchPath(t, "reffitbp.py", py, ref, mnist, p)
}

// runRecordedBatchPath records p with the driver tools/refcheck/<driver>
// (both write the batch protocol's state) and checks our batch step
// against the recording.
func runRecordedBatchPath(t *testing.T, driver, py, ref, mnist string, p bpRefPath) string {
	steps, every := max(p.steps, 1), max(p.every, 1)
	args := []string{"--ref", ref, "--mnist", mnist, "--config", p.ref,
		"--step", strconv.Itoa(p.step), "--steps", strconv.Itoa(steps), "--every", strconv.Itoa(every)}
	key := driver + " " + strings.Join(args, " ")
	d := batchRecordings[key] // a control reads its path's recording
	if d == nil {
		dir := filepath.Join(t.TempDir(), "dump")
		cmd := exec.Command(py, append(append([]string{"../../tools/refcheck/" + driver}, args...), "--out", dir)...)
		cmd.Env = append(os.Environ(), "OMP_NUM_THREADS=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Sprintf("%s: not run: %s: %v: %s", p.name, driver, err, refdump.LastLine(string(out)))
		}
		var err error
		if d, err = refdump.Load(dir); err != nil {
			return fmt.Sprintf("%s: not run: %v", p.name, err)
		}
		batchRecordings[key] = d
	}
	cfg, err := p.ours()
	if err != nil {
		return fmt.Sprintf("%s: not run: our config: %v", p.name, err)
	}
	return p.name + ": " + checkBatchDump(d, cfg, p.alterBatch)
}

// bpFitPaths are the substrate ladder's dense backprop MLP (tab:substrate,
// experiment substrate-mlp, preset mlp_bp_w), which the authors train with
// run_mnist.fit_bp: torch's Adam (lr 1e-3, L2 1e-3) on the mean over the
// batch of the summed squared error against the one-hot target, batches of
// 256 over the 60,000 training images, no buffer. Ours is the batch
// protocol's step with method none. An epoch has 235 batches (the last of
// 96 images), so batch 236 starts the second epoch.
var bpFitPaths = []bpRefPath{
	{name: "substrate ladder, dense backprop MLP (fit_bp) (batch 40)", ci: true, ref: "mlp_bp_w", ours: bpRefConfig("mlp_bp_w", nil), step: 40},
	{name: "control: substrate ladder, dense backprop MLP (fit_bp), Adam's weight decay doubled", ci: true, ref: "mlp_bp_w", control: true, step: 40,
		ours: bpRefConfig("mlp_bp_w", func(c *Config) { c.WeightDecay *= 2 })},
	// The learning rate is changed in our runner after the injection, past
	// the configuration check (which would report config.lr first).
	{name: "control: substrate ladder, dense backprop MLP (fit_bp), Adam's learning rate doubled in the step", ci: true, ref: "mlp_bp_w",
		control: true, step: 40, ours: bpRefConfig("mlp_bp_w", nil), alterBatch: func(r *runner) { r.cfg.LR *= 2 }},
	{name: "substrate ladder, dense backprop MLP (fit_bp) (batches 40-44)", ref: "mlp_bp_w", ours: bpRefConfig("mlp_bp_w", nil), step: 40, steps: 5, every: 1},
	{name: "substrate ladder, dense backprop MLP (fit_bp), across the first epoch end (batches 233-237)", ref: "mlp_bp_w", ours: bpRefConfig("mlp_bp_w", nil),
		step: 233, steps: 5, every: 1},
	{name: "substrate ladder, dense backprop MLP (fit_bp), trajectory", ref: "mlp_bp_w", ours: bpRefConfig("mlp_bp_w", nil), step: 40, steps: 300, every: 50, trajec: true},
	{name: "control: substrate ladder, dense backprop MLP (fit_bp), trajectory, Adam's weight decay doubled", ref: "mlp_bp_w", control: true,
		ours: bpRefConfig("mlp_bp_w", func(c *Config) { c.WeightDecay *= 2 }), step: 40, steps: 300, every: 50, trajec: true},
}

// recordedSteps returns a data set of a dump's recorded batches (step s
// is batches[s]) and the taped draws, with the count after each step.
func recordedSteps(d *refdump.Dump, steps int) (train *core.Dataset, batches [][]int, draws []core.Draw, perStep []int, err error) {
	train = &core.Dataset{D: 784, Classes: 10, Height: 28, Width: 28}
	perStep = make([]int, steps)
	for s := range steps {
		x, y := d.Tensors[fmt.Sprintf("s%d/X", s)], d.Tensors[fmt.Sprintf("s%d/y", s)]
		if len(y.I32) == 0 || len(x.F32) != len(y.I32)*train.D {
			return nil, nil, nil, nil, fmt.Errorf("step %d: the recorded batch is missing or malformed", s)
		}
		var idx []int
		for range y.I32 {
			idx = append(idx, train.N)
			train.N++
		}
		train.X = append(train.X, x.F32...)
		train.Y = append(train.Y, y.I32...)
		batches = append(batches, idx)
		for j := 0; ; j++ {
			key := fmt.Sprintf("s%d/d%d", s, j)
			v, ok := d.Tensors[key+"/randint"]
			if !ok {
				if _, perm := d.Tensors[key+"/randperm"]; perm {
					return nil, nil, nil, nil, fmt.Errorf("%s: a randperm draw, which these steps never make", key)
				}
				break
			}
			high := int(d.Entry("draws", key)["high"].(float64))
			for _, x := range v.I32 {
				draws = append(draws, core.Draw{Value: int(x), N: high})
			}
		}
		perStep[s] = len(draws)
	}
	return train, batches, draws, perStep, nil
}

// checkBatchDump runs our batch protocol from the dump's pre-state and
// returns the verdict: every step's active sets and A-GEM's projection
// branch, and the state after every `every` batches. A rectifier near-tie
// (a unit whose pre-activation sits at 0 within float32 rounding, active in
// one code only) parts the runs as another thread count would: the check
// then continues from the reference's state at the next checkpoint and the
// line counts the near-ties. alter (when non-nil) changes our runner after
// every injection (a control).
func checkBatchDump(d *refdump.Dump, cfg Config, alter func(*runner)) string {
	steps := int(d.Num("steps"))
	every := int(d.Meta["args"].(map[string]any)["every"].(float64))
	rc, _ := d.Meta["config"].(map[string]any)
	num := func(k string, def float64) float64 {
		if f, ok := rc[k].(float64); ok {
			return f
		}
		return def
	}
	str := func(k, def string) string {
		if s, ok := rc[k].(string); ok {
			return s
		}
		return def
	}
	method := str("replay", MethodNone)
	if num("buffer", 0) == 0 {
		method = MethodNone
	}
	if method != cfg.Method {
		return fmt.Sprintf("differs at step 0, tensor config.method: ours %q, reference %q", cfg.Method, method)
	}
	if str("bp_loss", "mse") != cfg.Loss {
		return fmt.Sprintf("differs at step 0, tensor config.loss: ours %q, reference %q", cfg.Loss, str("bp_loss", "mse"))
	}
	sizes, _ := d.Meta["sizes"].([]any)
	if len(sizes) != len(cfg.Hidden)+2 {
		return fmt.Sprintf("differs at step 0, tensor config.sizes: ours %d layers, reference %d", len(cfg.Hidden)+2, len(sizes))
	}
	checks := []struct {
		name      string
		ours, ref float64
	}{
		{"config.lr", cfg.LR, d.Num("lr")}, {"config.batch", float64(cfg.Batch), d.Num("batch")},
		{"config.replay_batch", float64(cfg.ReplayBatch), d.Num("batch")}, {"config.k", float64(cfg.K), num("buffer", 0)},
	}
	if b, ok := d.Meta["betas"].([]any); ok && len(b) == 2 { // fit_bp's recording names Adam's constants
		checks = append(checks, []struct {
			name      string
			ours, ref float64
		}{{"adam.beta1", adamBeta1, b[0].(float64)}, {"adam.beta2", adamBeta2, b[1].(float64)}, {"adam.eps", adamEps, d.Num("eps")}}...)
		if a, _ := d.Meta["amsgrad"].(bool); a {
			return "differs at step 0, tensor adam.amsgrad: ours false, reference true"
		}
	}
	if method == MethodDERPP {
		checks = append(checks, []struct {
			name      string
			ours, ref float64
		}{{"config.alpha", cfg.Alpha, num("alpha", 0.3)}, {"config.beta", cfg.Beta, num("beta", 0.5)}}...)
	}
	for l, h := range cfg.Hidden {
		checks = append(checks, struct {
			name      string
			ours, ref float64
		}{fmt.Sprintf("config.hidden[%d]", l), float64(h), sizes[l+1].(float64)})
	}
	for _, c := range checks {
		if math.Abs(c.ours-c.ref) > 1e-12*math.Abs(c.ref) {
			return fmt.Sprintf("differs at step 0, tensor %s: ours %g, reference %g", c.name, c.ours, c.ref)
		}
	}
	train, batches, draws, perStep, err := recordedSteps(d, steps)
	if err != nil {
		return "not run: " + err.Error()
	}
	ts := tensors(d)
	var r *runner
	var step *batchStep
	done, rebase := 0, 0
	// inject loads the recording's state tag into our runner, applies a
	// control's change, and tapes the draws from the from-th on.
	inject := func(tag string, from int) error {
		var err error
		if r, step, err = injectBatch(cfg, train, ts, tag); err != nil {
			return err
		}
		if alter != nil {
			alter(r)
		}
		done, rebase = 0, from
		r.rng = core.TapeRNG(draws[from:], &done)
		return nil
	}
	if err := inject("pre", 0); err != nil {
		return "not run: " + err.Error()
	}
	starts, _ := d.Meta["starts"].(map[string]any)
	crossed := ""
	var ties []string
	tied := false
	for s := range steps {
		if st, ok := starts[fmt.Sprintf("s%d", s)].(map[string]any); ok && s > 0 && st["epoch"] == true {
			what := "an epoch start"
			if st["task"] == true {
				what = "a task start"
			}
			crossed += fmt.Sprintf(", across %s at step %d", what, s)
		}
		var msg any
		func() {
			defer func() { msg = recover() }()
			step.step(batches[s])
		}()
		if msg != nil {
			return fmt.Sprintf("differs at step %d: the draws: %v", s, msg)
		}
		if done != perStep[s]-rebase {
			return fmt.Sprintf("differs at step %d, tensor random draws: ours %d, reference %d", s, done, perStep[s]-rebase)
		}
		if !tied {
			what, v, tie := compareBatchPasses(d, s, r, step)
			if tie {
				tied = true
				ties = append(ties, fmt.Sprintf("step %d, %s: %s", s, what, v))
			} else if v != "" {
				return fmt.Sprintf("differs at step %d (%s), tensor %s", s, what, v)
			}
		}
		if (s+1)%every != 0 {
			continue
		}
		tag := fmt.Sprintf("post%d", s+1)
		if !tied {
			if v := compareBP(r.exportState(), d.Tensors, tag); v != "" {
				return fmt.Sprintf("differs at step %d, tensor %s", s, v)
			}
			continue
		}
		// After a near-tie: continue from the reference's state at this
		// checkpoint (the steps since the tie go unchecked).
		if err := inject(tag, perStep[s]); err != nil {
			return "not run: " + err.Error()
		}
		tied = false
	}
	if len(ties) > 0 {
		return fmt.Sprintf("identical through %d steps%s, re-synchronised at the next checkpoint after %d rectifier near-tie(s) within float32 rounding (first: %s)", steps, crossed, len(ties), ties[0])
	}
	return fmt.Sprintf("identical through %d steps%s", steps, crossed)
}

// compareBatchPasses compares step s's forward passes with the
// reference's: which hidden units the rectifier left active (a set that
// differs is a near-tie or a difference, refdump.CompareActiveSet), and for
// A-GEM the projection's branch (the sign of the dot product of the
// incoming and the buffer gradient). It returns what differs (the forward
// pass or the projection), the tensor's message ("" when they agree) and
// whether it is a near-tie. The
// reference makes one net call per row group (incoming, each replay draw);
// ours concatenates them in one pass, except A-GEM's reference pass.
func compareBatchPasses(d *refdump.Dump, s int, r *runner, st *batchStep) (what, msg string, tie bool) {
	L := r.net.Layers()
	passes := []*Pass{st.p}
	if st.ref != nil && r.buf.Len() > 0 {
		passes = append(passes, st.ref)
	}
	call := 0 // the reference's first net call of this pass
	for _, p := range passes {
		next := call
		for l := 1; l < L; l++ {
			w := r.net.Sizes[l]
			var ref []float32
			c, rows := call, 0
			for rows < p.Rows {
				t, ok := d.Tensors[fmt.Sprintf("s%d/p%d/a%d", s, c, l)]
				if !ok || len(t.Shape) != 2 || t.Shape[1] != w {
					return "forward pass", fmt.Sprintf("a%d: ours %d rows, reference %d", l, p.Rows, rows), false
				}
				ref = append(ref, t.F32...)
				rows += t.Shape[0]
				c++
			}
			if rows != p.Rows {
				return "forward pass", fmt.Sprintf("a%d: ours %d rows, reference %d", l, p.Rows, rows), false
			}
			next = c
			shape := []int{p.Rows, w}
			if v, tie := refdump.CompareActiveSet(fmt.Sprintf("a%d", l), refdump.Tensor{Shape: shape, F32: p.A[l][:p.Rows*w]},
				refdump.Tensor{Shape: shape, F32: ref}); v != "" {
				return "forward pass", v, tie
			}
		}
		call = next
	}
	if v := compareFitPass(d, s, r, st); v != "" {
		return "forward pass", v, false
	}
	if rd, ok := d.Tensors[fmt.Sprintf("s%d/dot0", s)]; ok && st.ref != nil {
		if (st.dot < 0) != (rd.F64[0] < 0) {
			return "projection", fmt.Sprintf("dot: ours %.9g, reference %.9g", st.dot, rd.F64[0]), false
		}
	}
	return "", "", false
}

// compareFitPass compares, for a recording of fit_bp (reffitbp.py writes
// the output s<s>/out and the loss s<s>/loss of its one net call a step),
// step s's forward pass value by value once its active sets agree: the
// hidden activities and the output within the float32 tolerance
// (refdump.Compare), then the loss, mean over rows of sum_c (z_c - y_c)^2,
// ours in float64 from our output, within what the output's tolerance
// tau_z allows, 2 tau_z mean_r sum_c |z_rc - y_rc|, plus the tolerance of
// the loss's own float32 sum. It returns "" when they agree or when the
// recording has no output (the other drivers).
func compareFitPass(d *refdump.Dump, s int, r *runner, st *batchStep) string {
	out, ok := d.Tensors[fmt.Sprintf("s%d/out", s)]
	if !ok {
		return ""
	}
	p, L, C := st.p, r.net.Layers(), st.C
	for l := 1; l <= L; l++ {
		name, key := fmt.Sprintf("a%d", l), fmt.Sprintf("s%d/p0/a%d", s, l)
		if l == L {
			name, key = "out", fmt.Sprintf("s%d/out", s)
		}
		ref := d.Tensors[key]
		w := r.net.Sizes[l]
		if len(ref.Shape) != 2 || ref.Shape[0] != p.Rows || ref.Shape[1] != w {
			return fmt.Sprintf("%s: ours %d x %d, reference %v", name, p.Rows, w, ref.Shape)
		}
		ours := refdump.Tensor{Shape: ref.Shape, F32: p.A[l][:p.Rows*w]}
		if v := refdump.Compare(name, ours, ref, false, nil); v != "" {
			return v
		}
	}
	lt, ok := d.Tensors[fmt.Sprintf("s%d/loss", s)]
	if !ok || len(lt.F64) != 1 {
		return "loss: ours present, reference absent"
	}
	scale, abs, loss := 0.0, 0.0, 0.0
	for _, z := range out.F32 {
		scale = max(scale, math.Abs(float64(z)))
	}
	tauZ := refdump.ToleranceFactor * refdump.U * scale
	for k := range p.Rows {
		y := int(st.y[k])
		for c := range C {
			t := 0.0
			if c == y {
				t = 1
			}
			e := float64(p.A[L][k*C+c]) - t
			loss += e * e
			abs += math.Abs(float64(out.F32[k*C+c]) - t)
		}
	}
	loss /= float64(p.Rows)
	abs /= float64(p.Rows)
	ref := lt.F64[0]
	tol := 2*tauZ*abs + refdump.ToleranceFactor*refdump.U*math.Abs(ref)
	if math.Abs(loss-ref) > tol {
		return fmt.Sprintf("loss: ours %.9g, reference %.9g (tolerance %.3g)", loss, ref, tol)
	}
	return ""
}
