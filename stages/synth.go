package stages

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"time"

	"repro/pipeline"
)

// SynthConfig is the [synthetic] table of pipeline.toml: a layered DAG of
// cheap deterministic cells that exercises the engine alone (planning,
// caching, scheduling, kill and resume, Slurm) at any size, without data.
type SynthConfig struct {
	Cells   int `toml:"cells"`    // total cells
	Width   int `toml:"width"`    // cells per layer; a cell reads fan_in cells of the layer below
	FanIn   int `toml:"fan_in"`   //
	Work    int `toml:"work"`     // SHA-256 rounds per cell (CPU work; output depends on it)
	SleepMS int `toml:"sleep_ms"` // wall time per cell (does not change outputs)
	// SleepSpread, if above 1, makes cell i sleep sleep_ms x (1 + 7i mod
	// sleep_spread): cells of unequal length, for the scheduler's order.
	SleepSpread int     `toml:"sleep_spread"`
	Fail        []int   `toml:"fail"`  // indices of cells that fail
	Salt        string  `toml:"salt"`  // changes every output
	Scale       float64 `toml:"scale"` // unused by the stage; a knob tests edit to change one layer
	Layer       int     `toml:"scale_layer"`
}

// SynthParams are the params of one synthetic cell.
type SynthParams struct {
	Index   int     `toml:"index"`
	Work    int     `toml:"work"`
	SleepMS int     `toml:"sleep_ms"`
	Fail    bool    `toml:"fail"`
	Salt    string  `toml:"salt"`
	Scale   float64 `toml:"scale"`
}

// Synth is the synthetic stage: its output is a hash chain over its params
// and its inputs' bytes, so it changes exactly when the key does.
//
// Version history:
//
//   - 1: the hash chain.
var Synth = &pipeline.Stage{
	Name:      "synth",
	Version:   1,
	NewParams: func() any { return &SynthParams{Scale: 1} },
	// A cell costs its sleep and about 0.3 us per SHA-256 round.
	Cost: func(params any) float64 {
		p := params.(*SynthParams)
		return float64(p.SleepMS)/1000 + float64(p.Work)*3e-7
	},
	Run: func(ctx context.Context, rc *pipeline.RunContext) error {
		p := rc.Params.(*SynthParams)
		h := sha256.New()
		fmt.Fprintf(h, "%d %d %q %g\n", p.Index, p.Work, p.Salt, p.Scale)
		for _, name := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
			if !rc.HasInput(name) {
				break
			}
			b, err := rc.Input(name).Read(ctx, "out")
			if err != nil {
				return err
			}
			h.Write(b)
		}
		sum := h.Sum(nil)
		for i := 0; i < p.Work; i++ {
			s := sha256.Sum256(sum)
			sum = s[:]
		}
		// Sleep in ten steps, reporting progress like a long stage would.
		for step := int64(1); p.SleepMS > 0 && step <= 10; step++ {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Duration(p.SleepMS) * time.Millisecond / 10):
			}
			rc.Progress(step, 10)
		}
		if p.Fail {
			return fmt.Errorf("synthetic cell %d fails on purpose", p.Index)
		}
		fmt.Fprintf(rc.Log, "synth %d: %x\n", p.Index, sum[:8])
		out := binary.LittleEndian.AppendUint64(sum, uint64(p.Index))
		rc.Put("out", out)
		return nil
	},
}

// SynthCells builds the synthetic DAG described by sc.
func SynthCells(sc *SynthConfig) ([]*pipeline.Cell, error) {
	if sc.Cells <= 0 {
		return nil, fmt.Errorf("synthetic.cells: must be > 0")
	}
	if sc.Width <= 0 {
		sc.Width = sc.Cells
	}
	if sc.FanIn < 0 || sc.FanIn > 8 {
		return nil, fmt.Errorf("synthetic.fan_in: must be in [0, 8]")
	}
	fail := map[int]bool{}
	for _, i := range sc.Fail {
		fail[i] = true
	}
	names := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	cells := make([]*pipeline.Cell, sc.Cells)
	for i := range cells {
		layer := i / sc.Width
		p := &SynthParams{Index: i, Work: sc.Work, SleepMS: sc.SleepMS, Fail: fail[i], Salt: sc.Salt, Scale: 1}
		if sc.SleepSpread > 1 {
			p.SleepMS *= 1 + 7*i%sc.SleepSpread
		}
		if sc.Scale != 0 && layer == sc.Layer {
			p.Scale = sc.Scale
		}
		c := &pipeline.Cell{ID: fmt.Sprintf("synth/l%d/c%d", layer, i), Stage: Synth, Params: p}
		if layer > 0 {
			below := (layer - 1) * sc.Width
			for j := 0; j < sc.FanIn; j++ {
				up := below + (i*7+j*13)%sc.Width
				c.Inputs = append(c.Inputs, pipeline.CellInput{Name: names[j], Cell: cells[up]})
			}
			// Drop duplicate inputs (small widths).
			seen := map[*pipeline.Cell]bool{}
			kept := c.Inputs[:0]
			for _, in := range c.Inputs {
				if !seen[in.Cell] {
					seen[in.Cell] = true
					in.Name = names[len(kept)]
					kept = append(kept, in)
				}
			}
			c.Inputs = kept
		}
		cells[i] = c
	}
	return cells, nil
}
