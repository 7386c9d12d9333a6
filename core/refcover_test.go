package core

import (
	"fmt"
	"slices"
)

// The reference check's coverage of the local learner's mask and gate
// modes (TestReferenceCheckCoverage, refcover_ext_test.go, holds it
// against the configurations pipeline.toml runs). A mode is covered by
// the paths (controls left out) whose config uses it, read from the
// paths' own configs, so the listing cannot drift from what the check runs.

// GateTrajectoryMin is the shortest trajectory (in waking batches) that
// covers a gate or a rest mask with state of its own: three time constants
// of the novelty gate's slow average (0.998 a batch, 500 batches).
const GateTrajectoryMin = 1500

// RefModeCover is one mode's coverage: the step-level paths and the
// trajectories that run it, and the longest trajectory's length.
type RefModeCover struct {
	Steps, Trajectories []string
	Longest             int
}

// RefModeKeys returns the mask and gate modes of cfg as the coverage
// names them: "mask <name>" and "gate <name>" ("gate always" for none).
func RefModeKeys(cfg *LocalConfig) []string {
	gate := cfg.Gate
	if gate == "" {
		gate = "always"
	}
	return []string{"mask " + cfg.Mask, "gate " + gate}
}

// StatefulMode reports whether a mode carries state from batch to batch
// that a one-step path does not follow: the gates (their averages,
// warm-up, bout counters, the pressure the pressure gate reads) and the
// rest masks with a pressure or a use trace of their own.
func StatefulMode(key string) bool {
	switch key {
	case "gate always":
		return false
	case "mask refr_press", "mask refr_frac", "mask refr_util":
		return true
	}
	return len(key) > 5 && key[:5] == "gate "
}

// RefCoverage returns the coverage of every mode the reference check's
// local-learner paths run.
func RefCoverage() (map[string]*RefModeCover, error) {
	cover := map[string]*RefModeCover{}
	for _, p := range slices.Concat(refPaths, trajectoryPaths) {
		if p.control {
			continue
		}
		cfg, err := p.ours()
		if err != nil {
			return nil, fmt.Errorf("reference-check path %q: %v", p.name, err)
		}
		for _, k := range RefModeKeys(&cfg) {
			c := cover[k]
			if c == nil {
				c = &RefModeCover{}
				cover[k] = c
			}
			if p.trajec {
				c.Trajectories = append(c.Trajectories, p.name)
				c.Longest = max(c.Longest, p.steps)
			} else {
				c.Steps = append(c.Steps, p.name)
			}
		}
	}
	return cover, nil
}

// AllModeKeys lists every mask and gate mode the local learner has.
func AllModeKeys() []string {
	var ks []string
	for _, m := range maskNames {
		ks = append(ks, "mask "+m)
	}
	for _, g := range gateNames {
		if g == "" {
			g = "always"
		}
		ks = append(ks, "gate "+g)
	}
	return ks
}
