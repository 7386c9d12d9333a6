package core

import (
	"encoding/json"
	"math"
	"testing"
)

// TestDiagChannelsOnlyCounts checks that the channel diagnostic changes
// nothing but its own field, and that its shares partition the mask.
func TestDiagChannelsOnlyCounts(t *testing.T) {
	t.Parallel()
	for _, mask := range []string{"refractory", "soft", "silent", "none"} {
		t.Run(mask, func(t *testing.T) {
			t.Parallel()
			cfg := tinyConfig()
			cfg.Mask = mask
			train := tinyData(1, 30, 4, 4, 5)
			eval := tinyData(2, 10, 4, 4, 5)
			off, err := TrainLocal(cfg, train, eval, pairTasks(4), 7, Hooks{})
			if err != nil {
				t.Fatal(err)
			}
			cfg.DiagChannels = true
			on, err := TrainLocal(cfg, train, eval, pairTasks(4), 7, Hooks{})
			if err != nil {
				t.Fatal(err)
			}
			shares := on.MaskChannels
			on.MaskChannels = nil
			a, _ := json.Marshal(off)
			b, _ := json.Marshal(on)
			if string(a) != string(b) {
				t.Errorf("diag_channels changed the run:\noff %s\non  %s", a, b)
			}
			if mask == "none" {
				if shares != nil {
					t.Errorf("unmasked run recorded channel shares %v", shares)
				}
				return
			}
			sum := 0.0
			for _, s := range shares {
				sum += s
			}
			// The shares are ratios of integer counts: their sum is 1 up to rounding.
			if len(shares) != 3 || math.Abs(sum-1) > 1e-12 {
				t.Errorf("shares %v: want three summing to 1", shares)
			}
			if mask == "silent" && shares[2] != 0 {
				t.Errorf("mask silent (no suppression) has suppressed share %g", shares[2])
			}
			if mask == "refractory" && (shares[0] == 0 || shares[1] == 0 || shares[2] == 0) {
				t.Errorf("refractory run left a channel empty: %v", shares)
			}
		})
	}
}

// TestCountChannelsDirect compares countChannels with a direct
// classification of every stored synapse by the paper's definitions.
func TestCountChannelsDirect(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig()
	cfg.Hidden = []int{24, 16, 16} // a deep net with skip synapses
	cfg.Skip = true
	r := newTinyRun(t, cfg, 3, 12)
	r.channels = [3]int64{}
	masks := r.replayMasks()
	r.countChannels(masks, r.supWake)
	var want [3]int64
	nt := r.nt
	for l := 1; l < nt.L; l++ {
		for _, sk := range []bool{false, true} {
			ly, pre := nt.lay[l], l-1
			if sk {
				ly, pre = nt.skip[l], l-2
			}
			if ly == nil {
				continue
			}
			for i := range ly.nOut {
				for _, j := range ly.col[ly.rowPtr[i]:ly.rowPtr[i+1]] {
					preAwake := pre == 0 || r.awake[pre][j]
					switch {
					case r.awake[l][i] && preAwake:
						// frozen: not in the mask
					case !preAwake:
						want[0]++
					case r.supWake != nil && r.supWake[l][i] > 0:
						want[2]++
					default:
						want[1]++
					}
				}
			}
		}
	}
	if r.channels != want {
		t.Errorf("countChannels = %v, want %v", r.channels, want)
	}
	if r.nt.skip[3] == nil || r.supWake == nil || want[2] == 0 {
		t.Errorf("the tiny run has no skip layer or no suppressed entries (%v): the test does not exercise them", want)
	}
}
