package core

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
)

// formerFastPath is the choice fastUpdate made before the table (issue
// 57), as it was written: a fast path's name, or "" for the general path.
func formerFastPath(nt *net, c *layerCall) string {
	ly, op := c.ly, c.op
	fast := !op.leak
	if op.adam {
		fast = ly.fb == nil || ly.sign != nil
	}
	fast = fast && !nt.sub.transport && !ly.fbNoDale
	switch {
	case !fast:
		return ""
	case !c.ctrl && !c.anchor && ly.absent == nil:
		if op.adam {
			return "adamRows"
		}
		return "sgdRows"
	case c.anchor && c.m == nil && !c.ctrl && !op.adam && ly.absent == nil:
		return "anchorRows"
	case c.ctrl && !c.anchor && !op.adam && c.wd == 0 && ly.fb != nil && ly.dense():
		return "ctrlRows"
	}
	return ""
}

// TestFastPathGuards: over every combination of the conditions the guards
// read, at most one guard admits a call, and the table chooses the path
// the former switch chose. The one exception is a layer without a twin
// but with Dale signs, which no network has (W^1 is the only layer
// without a twin, and the input has no Dale signs): the former switch
// would send it to sgdRows or adamRows, which clamp no layer without a
// twin; the guards send it to the general path.
func TestFastPathGuards(t *testing.T) {
	t.Parallel()
	const nCond = 12
	used := make(map[string]int)
	for bits := range 1 << nCond {
		on := func(k int) bool { return bits&(1<<k) != 0 }
		ly := &layer{csrView: csrView{nIn: 2, nOut: 1, col: []int32{0}}}
		if on(0) {
			ly.fb = []float32{0}
		}
		if on(1) {
			ly.sign = []float32{1}
		}
		if on(2) {
			ly.absent = []bool{false}
		}
		ly.fbNoDale = on(3)
		if on(4) {
			ly.nIn, ly.col = 1, []int32{0} // dense
		}
		nt := &net{}
		nt.sub.transport = on(5)
		c := &layerCall{ly: ly, op: &optim{adam: on(6), leak: on(7)}, ctrl: on(8), anchor: on(9)}
		if on(10) {
			c.m = &layerMask{}
		}
		if on(11) {
			c.wd = 1e-3
		}
		var admit []string
		for k := range fastPaths {
			if fastPaths[k].guard(nt, c) {
				admit = append(admit, fastPaths[k].name)
			}
		}
		if len(admit) > 1 {
			t.Fatalf("conditions %012b: guards %v all admit the call", bits, admit)
		}
		got := ""
		if len(admit) == 1 {
			got = admit[0]
			used[got]++
		}
		want := formerFastPath(nt, c)
		if ly.fb == nil && ly.sign != nil && (want == "sgdRows" || want == "adamRows") {
			want = "" // no such layer; see above
		}
		if got != want {
			t.Errorf("conditions %012b: the table chooses %q, the former switch %q", bits, got, want)
		}
	}
	for _, p := range fastPaths {
		if used[p.name] == 0 {
			t.Errorf("%s: its guard admits no combination", p.name)
		}
	}
}

// TestFastPathEveryPreset runs every local preset of presets.toml twice,
// with the fast paths and with the general path only (generalOnly), at
// its own size on a slice of MNIST ($REPRO_DATA; else tiny data of MNIST's
// shape with a non-zero input offset), and requires the same bits of every
// layer's state (weights, twins, optimiser moments, biases, column copies,
// anchor copies, controller state, burst baselines, c = W^1 o) after every
// waking step (with its replay burst), after the end of the epoch (night,
// structural plasticity, weight mirroring) and after two more steps. (A
// preset's data set is its stage's choice; the path a call takes depends
// on the configuration and the layer, not on the data.) To keep the test
// short the batches are at most 16, a night is 2 batches and replay is due
// on every step (cadence 1, bursts of at most 2). It fails if an entry of
// fastPaths is taken by no preset: a guard that admits nothing would leave
// its path untested. With -short it runs every fourth preset and does not
// require every path taken.
func TestFastPathEveryPreset(t *testing.T) {
	names, err := testPresetNames()
	if err != nil {
		t.Fatal(err)
	}
	ds := fastPathData(t)
	idx := make([]int, min(ds.N, 600))
	for i := range idx {
		idx[i] = i
	}
	train := ds.Subset(idx)
	eval := ds.Subset(idx[:20])
	var total [numFastPaths + 1]int
	var table strings.Builder
	fmt.Fprintf(&table, "%-34s", "preset")
	for _, p := range fastPaths {
		fmt.Fprintf(&table, " %10s", p.name)
	}
	fmt.Fprintf(&table, " %10s\n", "general")
	for k, name := range names {
		if testing.Short() && k%4 != 0 {
			continue
		}
		cfg, err := testPreset(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		shrinkForFastPath(&cfg)
		mk := func(general bool) *localRun {
			r, err := newLocalRun(&cfg, train, eval, pairTasks(train.Classes), 7, Hooks{})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			r.nt.generalOnly = general
			return r
		}
		fast, gen := mk(false), mk(true)
		check := func(when string) {
			t.Helper()
			if d := netStateDiff(fast.nt, gen.nt); d != "" {
				t.Fatalf("%s, %s: %s differs between the fast paths and the general path", name, when, d)
			}
		}
		_, etaR := cfg.rates()
		for step := range 6 {
			stepN(fast, 1)
			stepN(gen, 1)
			check(fmt.Sprintf("waking step %d", step))
		}
		fast.endEpoch(etaR)
		gen.endEpoch(etaR)
		check("the end of the epoch")
		for step := range 2 {
			stepN(fast, 1)
			stepN(gen, 1)
			check(fmt.Sprintf("waking step %d after the epoch", step))
		}
		if slices.ContainsFunc(gen.nt.pathCalls[:numFastPaths], func(n int) bool { return n != 0 }) {
			t.Fatalf("%s: generalOnly took a fast path: %v", name, gen.nt.pathCalls)
		}
		fmt.Fprintf(&table, "%-34s", name)
		for k, n := range fast.nt.pathCalls {
			total[k] += n
			fmt.Fprintf(&table, " %10d", n)
		}
		table.WriteByte('\n')
	}
	t.Logf("layer update calls per path:\n%s", table.String())
	if testing.Short() {
		return // a sample of the presets need not take every path
	}
	for k, p := range fastPaths {
		if total[k] == 0 {
			t.Errorf("fast path %s: no preset took it (its guard admits no call)", p.name)
		}
	}
}

// fastPathData returns MNIST's training set ($REPRO_DATA or
// $REPRO_DATA_MIRROR), or without either tiny data of its shape (10
// classes, 28 x 28) whose input offset is non-zero as MNIST's is.
func fastPathData(t *testing.T) *Dataset {
	if os.Getenv("REPRO_DATA") != "" || os.Getenv("REPRO_DATA_MIRROR") != "" {
		return loadMNISTTrain(t)
	}
	t.Log("neither REPRO_DATA nor REPRO_DATA_MIRROR is set: tiny data in MNIST's shape")
	return withBackground(tinyData(3, 60, 10, 28, 28), 4)
}

// shrinkForFastPath makes the run of preset cfg short while keeping its
// widths and paths: batches of at most 16, nights of 2 batches, replay due
// on every waking step where the preset replays on a cadence, bursts of at
// most 2.
func shrinkForFastPath(cfg *LocalConfig) {
	cfg.BatchWake = min(cfg.BatchWake, 16)
	cfg.BatchReplay = min(cfg.BatchReplay, 16)
	cfg.NightBatch = min(cfg.NightBatch, 16)
	cfg.NightBatches = min(cfg.NightBatches, 2)
	cfg.Cadence = 1
	cfg.Burst = min(cfg.Burst, 2)
	cfg.PRSamples = min(cfg.PRSamples, 20)
}

// netStateDiff names the first piece of state in which nets a and b
// differ in their bits, or returns "".
func netStateDiff(a, b *net) string {
	if a.t != b.t || a.staleC != b.staleC {
		return "the update counter or c's staleness"
	}
	for l := 1; l < a.L; l++ {
		if !bitsEqual(a.ebar[l], b.ebar[l]) {
			return fmt.Sprintf("the burst baseline of layer %d", l)
		}
	}
	for l := 1; l <= a.L; l++ {
		if d := layerStateDiff(a.lay[l], b.lay[l]); d != "" {
			return fmt.Sprintf("layer %d: %s", l, d)
		}
		if (a.skip[l] == nil) != (b.skip[l] == nil) {
			return fmt.Sprintf("skip synapses into layer %d: present in one net only", l)
		}
		if a.skip[l] != nil {
			if d := layerStateDiff(a.skip[l], b.skip[l]); d != "" {
				return fmt.Sprintf("skip synapses into layer %d: %s", l, d)
			}
		}
	}
	if !bitsEqual(a.currentC(), b.currentC()) {
		return "c = W^1 o"
	}
	return ""
}

// layerStateDiff names the first piece of state in which layers a and b
// differ in their bits, or returns "".
func layerStateDiff(a, b *layer) string {
	if !slices.Equal(a.rowPtr, b.rowPtr) || !slices.Equal(a.col, b.col) || !slices.Equal(a.absent, b.absent) {
		return "the stored synapses"
	}
	for _, f := range []struct {
		name string
		a, b []float32
	}{
		{"w", a.w, b.w}, {"fb", a.fb, b.fb}, {"bias", a.bias, b.bias},
		{"m1", a.m1, b.m1}, {"m2", a.m2, b.m2}, {"bm1", a.bm1, b.bm1}, {"bm2", a.bm2, b.bm2},
		{"wT", a.wT, b.wT}, {"wSlow", a.wSlow, b.wSlow}, {"fbSlow", a.fbSlow, b.fbSlow}, {"biasSlow", a.biasSlow, b.biasSlow},
	} {
		if !bitsEqual(f.a, f.b) {
			if i := firstBitDiff(f.a, f.b); i >= 0 && len(f.a) == len(f.b) {
				return fmt.Sprintf("%s[%d] (%g, %g)", f.name, i, f.a[i], f.b[i])
			}
			return f.name
		}
	}
	if a.anchorFirst != b.anchorFirst {
		return "the anchor's first-call flag"
	}
	ca, cb := a.ctrlState, b.ctrlState
	if math.Float64bits(ca.lastLam) != math.Float64bits(cb.lastLam) || math.Float64bits(ca.uEMA) != math.Float64bits(cb.uEMA) ||
		math.Float64bits(ca.kpEff) != math.Float64bits(cb.kpEff) || ca.uSet != cb.uSet || ca.kpEffOK != cb.kpEffOK {
		return "the controller's state"
	}
	return ""
}
