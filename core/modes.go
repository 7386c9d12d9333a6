package core

import "slices"

// The local learner's string modes (the TOML values of mask, gate, opt,
// schedule, readout and kp_adapt_mode) as typed values, resolved once per
// run from the validated config (LocalConfig.modes); the strings stay the
// config's and the canonical params' spelling. Each mode's value is its
// index in the names list.

type maskMode uint8

const (
	maskRefractory maskMode = iota
	maskSilent
	maskNone
	maskRandom
	maskSoft
	maskMirror
	maskRefrPress
	maskRefrFrac
	maskRefrUtil
)

var maskNames = []string{"refractory", "silent", "none", "random", "soft", "mirror", "refr_press", "refr_frac", "refr_util"}

// rotates reports whether the mode computes a suppression for the next
// waking batch (the rotation variants).
func (m maskMode) rotates() bool {
	switch m {
	case maskRefractory, maskRandom, maskSoft, maskRefrPress, maskRefrFrac, maskRefrUtil:
		return true
	}
	return false
}

type gateMode uint8

const (
	gateAlways   gateMode = iota // ""
	gatePressure                 // replay when the mean pressure of the asleep units reaches theta
	gateSurprise                 // replay when the batch error reaches theta
	gateNovelty                  // refr_nov: rotation while the fast error EMA exceeds beta times the slow
	gateProgress                 // refr_prog: novelty, or the unmastered clause, or the warm-up
	gateBlock                    // refr_block: bouts of block batches started by refr_prog's trigger
)

var gateNames = []string{"", "pressure", "surprise", "refr_nov", "refr_prog", "refr_block"}

// gatesRotation reports whether the gate decides when rotation runs (the
// refr_* gates), rather than when replay runs.
func (g gateMode) gatesRotation() bool { return g >= gateNovelty }

type optMode uint8

const (
	optSGD optMode = iota
	optAdam
)

var optNames = []string{"sgd", "adam"}

type scheduleMode uint8

const (
	scheduleLocal scheduleMode = iota
	scheduleOffline
)

var scheduleNames = []string{"local", "offline"}

type readoutMode uint8

const (
	readoutFree readoutMode = iota
	readoutIsolated
)

var readoutNames = []string{"free", "isolated"}

type ctrlMode uint8

const (
	ctrlDrive ctrlMode = iota // lambda from the mean |Delta W|
	ctrlGrad                  // lambda from the mean |G|, times eta
)

var ctrlNames = []string{"drive", "grad"}

// localModes are a config's modes, resolved.
type localModes struct {
	mask     maskMode
	gate     gateMode
	opt      optMode
	schedule scheduleMode
	readout  readoutMode
	ctrl     ctrlMode
}

// modeOf returns the index of s in names and whether it is there.
func modeOf[M ~uint8](names []string, s string) (M, bool) {
	i := slices.Index(names, s)
	return M(max(i, 0)), i >= 0
}

// modes resolves the config's mode strings (Validate has checked them;
// an unknown string resolves to the list's first mode).
func (c *LocalConfig) modes() localModes {
	var m localModes
	m.mask, _ = modeOf[maskMode](maskNames, c.Mask)
	m.gate, _ = modeOf[gateMode](gateNames, c.Gate)
	m.opt, _ = modeOf[optMode](optNames, c.Opt)
	m.schedule, _ = modeOf[scheduleMode](scheduleNames, c.Schedule)
	m.readout, _ = modeOf[readoutMode](readoutNames, c.Readout)
	m.ctrl, _ = modeOf[ctrlMode](ctrlNames, c.KPAdaptMode)
	return m
}
