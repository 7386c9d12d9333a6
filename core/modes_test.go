package core

import "testing"

// TestModes: every config spelling resolves to its own typed mode, and the
// default system resolves to refractory rotation, no gate, heavy-ball SGD,
// local sleep, the free readout and the drive controller.
func TestModes(t *testing.T) {
	t.Parallel()
	for _, names := range [][]string{maskNames, gateNames, optNames, scheduleNames, readoutNames, ctrlNames} {
		for i, s := range names {
			if m, ok := modeOf[uint8](names, s); !ok || int(m) != i {
				t.Errorf("%q resolves to %d (%v), want %d", s, m, ok, i)
			}
		}
		if _, ok := modeOf[uint8](names, "bogus"); ok {
			t.Errorf("an unknown spelling resolves in %v", names)
		}
	}
	cfg := DefaultLocalConfig()
	want := localModes{mask: maskRefractory, gate: gateAlways, opt: optSGD, schedule: scheduleLocal, readout: readoutFree, ctrl: ctrlDrive}
	if got := cfg.modes(); got != want {
		t.Errorf("default modes %+v, want %+v", got, want)
	}
	cfg.Mask, cfg.Gate, cfg.Opt, cfg.Schedule, cfg.Readout, cfg.KPAdaptMode = "mirror", "refr_block", "adam", "offline", "isolated", "grad"
	want = localModes{mask: maskMirror, gate: gateBlock, opt: optAdam, schedule: scheduleOffline, readout: readoutIsolated, ctrl: ctrlGrad}
	if got := cfg.modes(); got != want {
		t.Errorf("modes %+v, want %+v", got, want)
	}
}
