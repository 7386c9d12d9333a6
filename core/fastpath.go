package core

// The fast paths of the update. updateLayer hands a layer's update call
// (after its plasticity terms are built) to the first entry of fastPaths
// whose guard admits it, or else to generalUpdate, the per-synapse path
// that follows the reference's order operation by operation. A fast path
// does the same call row by row with the vector kernels and, on every call
// its guard admits, computes exactly what generalUpdate computes: the same
// float32 operations in the same order, so the same bits, signed zeros
// included. The guards are the only place a path is chosen.
//
// Each guard is a conjunction; the comment on each conjunct says which
// part of the general path its run function does not do, or does
// differently, so that the call must not need it. A conjunct marked
// conservative excludes calls the path would also compute exactly (runs
// on tiny data with it dropped matched the general path bit for bit); it
// is kept so that every call takes the path the switch the table replaced
// (issue 57) gave it, the path every train cell ran on.
//
// The guards are disjoint (they split on op.adam, c.anchor and c.ctrl), so
// at most one admits a call and the order of the table is only the order
// of evaluation. TestFastPathGuards checks that over every combination of
// the conditions they read; TestFastPathEveryPreset runs every local
// preset with and without the fast paths, requires the same bits after
// every step, and fails if an entry's guard admits no call of any preset.

// numFastPaths is the number of entries of fastPaths.
const numFastPaths = 4

// fastPath is one entry of the table: a name (the run function's), the
// guard, and the function that performs the admitted call.
type fastPath struct {
	name  string
	guard func(nt *net, c *layerCall) bool
	run   func(nt *net, cfg *LocalConfig, c *layerCall)
}

// fastPaths are the fast paths in the order fastUpdate consults them.
var fastPaths = [numFastPaths]fastPath{
	{"sgdRows", sgdRowsGuard, func(nt *net, _ *LocalConfig, c *layerCall) {
		nt.sgdRows(c.ly, c.preL, c.m, c.op, c.wd, c.lam, c.pre)
	}},
	{"adamRows", adamRowsGuard, func(nt *net, _ *LocalConfig, c *layerCall) {
		nt.adamRows(c.ly, c.preL, c.m, c.op, c.wd, c.lam, c.pre)
	}},
	{"anchorRows", anchorRowsGuard, func(nt *net, _ *LocalConfig, c *layerCall) {
		nt.anchorRows(c.ly, c.preL, c.op, c.wd, c.lam, c.pre)
	}},
	{"ctrlRows", ctrlRowsGuard, func(nt *net, cfg *LocalConfig, c *layerCall) {
		nt.ctrlRows(cfg, c.ly, c.m, c.op, c.pre, c.replay)
	}},
}

// fastUpdate runs call c on the first fast path whose guard admits it and
// reports whether one did (none under generalOnly).
func (nt *net) fastUpdate(cfg *LocalConfig, c *layerCall) bool {
	if nt.generalOnly {
		return false
	}
	for k := range fastPaths {
		if p := &fastPaths[k]; p.guard(nt, c) {
			p.run(nt, cfg, c)
			nt.pathCalls[k]++
			return true
		}
	}
	return false
}

// sgdRowsGuard admits the calls sgdRows computes exactly: heavy-ball SGD
// with a fixed decay and no anchor, masked or not.
func sgdRowsGuard(nt *net, c *layerCall) bool {
	ly := c.ly
	return !c.op.adam && // the heavy-ball step
		// Under leaking moments (no preset: they are Adam's) the general
		// heavy-ball step moves the synapses the mask freezes; sgdRows
		// skips them.
		!c.op.leak &&
		// The controller sets the decay from the call's sums after the
		// step (ctrlRows); sgdRows applies the fixed lam in the step.
		!c.ctrl &&
		!c.anchor && // no two-timescale anchor (anchorRows)
		// No re-mask: sgdRows does not re-zero absent synapses, which are
		// stored (flagged) only on the controller's layers.
		ly.absent == nil &&
		// The twin's row steps (kernels.SGDRowFB*, sgdRowFBScalar) have no
		// coupled L2, which weight transport puts on every layer.
		!nt.sub.transport &&
		// The twin's row steps clamp the twin by Dale's law, which
		// no_dale_fb exempts (the flag is set on every layer, so it also
		// sends W^1, which has no twin, to the general path: conservative).
		!ly.fbNoDale &&
		// The steps of a row without a twin (W^1: kernels.SGDRowInput,
		// sgdRowScalar) do no Dale clamp. Always true: W^1 is the only
		// layer without a twin, and its pre units, the input, have no
		// Dale signs.
		(ly.fb != nil || ly.sign == nil)
}

// adamRowsGuard admits the calls adamRows computes exactly: masked Adam,
// confined or leaking moments, with a fixed decay and no anchor.
func adamRowsGuard(nt *net, c *layerCall) bool {
	ly := c.ly
	return c.op.adam && // the Adam step (kernels.AdamRow)
		!c.ctrl && // the controller's decay (ctrlRows is heavy-ball only)
		!c.anchor && // no two-timescale anchor
		ly.absent == nil && // no re-mask (absent synapses: controller layers only)
		// kernels.AdamRow clamps by Dale's law exactly when it steps a twin:
		// a twin layer needs Dale signs (without them, as under no_dale,
		// the general path does no clamp), a layer without a twin (W^1)
		// has none (always so: its pre units are the input).
		(ly.fb == nil) == (ly.sign == nil) &&
		// The twin's clamp is not exempt (no_dale_fb; run-wide, so
		// conservative on W^1).
		!ly.fbNoDale &&
		// Conservative: kernels.AdamRow takes the coupled L2 that weight
		// transport puts on every layer, twins included.
		!nt.sub.transport
}

// anchorRowsGuard admits the calls anchorRows computes exactly: heavy-ball
// SGD with the two-timescale anchor on an unmasked waking call with a fixed
// decay.
func anchorRowsGuard(nt *net, c *layerCall) bool {
	ly := c.ly
	return !c.op.adam && // the heavy-ball step
		// Conservative: without a mask nothing is frozen, so leaking
		// moments change nothing (a masked call leaves the free readout
		// unmasked, so op.leak can come with c.m == nil).
		!c.op.leak &&
		c.anchor && // a waking call under the anchor
		c.m == nil && // anchorRows has no mask: every synapse moves
		!c.ctrl && // a fixed decay, in finishSyn's order before the anchor
		ly.absent == nil && // no re-mask (absent synapses: controller layers only)
		// anchorRow's Dale clamp (daleClampRow) clamps the twin too, which
		// no_dale_fb exempts (run-wide, so conservative on W^1).
		!ly.fbNoDale &&
		// Conservative: anchorRows' twin step takes the coupled L2 that
		// weight transport puts on every layer.
		!nt.sub.transport
}

// ctrlRowsGuard admits the calls ctrlRows computes exactly: heavy-ball SGD
// under the adaptive decay controller, without the anchor, on a dense
// layer with a twin.
func ctrlRowsGuard(nt *net, c *layerCall) bool {
	ly := c.ly
	return !c.op.adam && // the heavy-ball step (kernels.CtrlStepRow)
		// Under leaking moments the general heavy-ball step moves the
		// synapses the mask freezes; kernels.CtrlStepRow skips them.
		!c.op.leak &&
		c.ctrl && // the controller sets the decay after the step
		// The anchor's decay pass (finishSyn with the anchor, per synapse
		// in controllerDecay) is the general path's.
		!c.anchor &&
		c.wd == 0 && // kernels.CtrlStepRow has no coupled L2
		ly.fb != nil && // kernels.CtrlStepRow steps the twin
		// kernels.CtrlStepRow reads the row's gradient at the synapse's
		// place in the row: every pre unit stored, in order (the
		// controller's layers store absent synapses, flagged).
		ly.dense() &&
		// Conservative: kernels.CtrlStepRow clamps nothing, and the decay
		// pass that clamps (decayRows) is the general path's, which
		// honours no_dale_fb.
		!ly.fbNoDale &&
		// Conservative: implied by c.wd == 0 unless input_l2 is 0
		// (transport puts it on every layer); validation rejects kp_adapt
		// with transport.
		!nt.sub.transport
}
