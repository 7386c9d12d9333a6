package experiments

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"repro/core/backprop"
	"repro/pipeline"
	"repro/stages"
)

// structKeys gives every cell of g a structural key: its key text with
// each input's digest replaced by the input cell's structural key. Two
// graphs whose cells have equal structural keys give those cells equal
// store keys (inputs are computed from equal specs), without running
// anything.
func structKeys(g *pipeline.Graph) map[string]string {
	memo := map[string]string{}
	var f func(c *pipeline.Cell) string
	f = func(c *pipeline.Cell) string {
		if k, ok := memo[c.ID]; ok {
			return k
		}
		params := c.Params
		if tp, ok := params.(*stages.TrainParams); ok && tp.KeepNetwork {
			// See TestCellKeysPinned: a kept network is masked out.
			cp := *tp
			cp.KeepNetwork = false
			params = &cp
		}
		ps, err := pipeline.EncodeParams(c.Stage.Name, params)
		if err != nil {
			panic(err)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "stage %s\nversion %d\n%s", c.Stage.Name, c.Stage.CellVersion(c.Params), pipeline.ParamsText(ps))
		ins := append([]pipeline.CellInput(nil), c.Inputs...)
		sort.Slice(ins, func(i, j int) bool { return ins[i].Name < ins[j].Name })
		for _, in := range ins {
			fmt.Fprintf(&b, "input %s %s\n", in.Name, f(in.Cell))
		}
		k := fmt.Sprintf("%x", sha256.Sum256([]byte(b.String())))
		memo[c.ID] = k
		return k
	}
	for _, c := range g.Cells {
		f(c)
	}
	return memo
}

// TestCellKeysPinned: every cell of the smoke and paper profiles that
// existed before the experiment matrix moved into this package keeps its
// structural key (testdata/keys-<profile>.txt, written from the stages
// package's wiring it replaced), so no stored cell reruns. Aggregate,
// render and reproduction cells are left out: they are cheap, and their
// stages' versions move with their layout (render v4 put the bold rule in
// every caption; aggregate v2, render v5 and reproduction v9 took their
// params as lists of records); TestTableOutputsPinned pins their bytes
// instead. Tables whose declaration grows are listed in grown.
//
// The train cells whose network a spike cell reads carry keep_network,
// masked out here: their keys change by design (they store the network
// too, so they rerun once) and so do the keys of the aggregate cells that
// read them (every output of an input enters a key); keep_network leaves
// the result's bytes alone (stages.TestTrainKeepNetwork), so the
// aggregates' outputs, and every key after them, stay. TestKeptNetworks
// pins which train cells those are.
func TestCellKeysPinned(t *testing.T) {
	t.Parallel()
	grown := map[string]bool{}
	for _, profile := range []string{"smoke", "paper"} {
		g := paperGraph(t, profile)
		got := structKeys(g)
		b, err := os.ReadFile("testdata/keys-" + profile + ".txt")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			id, want, _ := strings.Cut(line, " ")
			if grown[id] || id == "reproduction" || strings.HasPrefix(id, "render/") || strings.HasPrefix(id, "aggregate/") {
				continue
			}
			n++
			if got[id] != want {
				t.Errorf("profile %s: cell %s: structural key %.12s, pinned %.12s", profile, id, got[id], want)
			}
		}
		if n < 100 {
			t.Errorf("profile %s: only %d pinned cells", profile, n)
		}
	}
}

// TestKeptNetworks: exactly the train cells a spike cell reads keep their
// network, and those are the static networks of the ablation's full and
// silent rows, every seed ([spike] in pipeline.toml).
func TestKeptNetworks(t *testing.T) {
	t.Parallel()
	for _, profile := range []string{"smoke", "paper"} {
		cfg, err := pipeline.LoadConfig("../pipeline.toml")
		if err != nil {
			t.Fatal(err)
		}
		m, err := Load(cfg)
		if err != nil {
			t.Fatal(err)
		}
		g, err := m.Build(profile)
		if err != nil {
			t.Fatal(err)
		}
		read := map[string]bool{}
		nSpike, nEnergy := 0, 0
		for _, c := range g.Cells {
			switch c.Stage {
			case stages.Spike:
				nSpike++
				read[c.Inputs[0].Cell.ID] = true
			case stages.Energy:
				nEnergy++
			}
		}
		var kept []string
		for _, c := range g.Cells {
			if tp, ok := c.Params.(*stages.TrainParams); ok && tp.KeepNetwork {
				kept = append(kept, c.ID)
				if !read[c.ID] {
					t.Errorf("profile %s: %s keeps a network no spike cell reads", profile, c.ID)
				}
				if !strings.HasPrefix(c.ID, "train/full/static/") && !strings.HasPrefix(c.ID, "train/silent/static/") {
					t.Errorf("profile %s: %s keeps its network", profile, c.ID)
				}
			}
		}
		prof := m.Profiles[profile]
		if want := len(m.byName["full"].seeds(prof)) + len(m.byName["silent"].seeds(prof)); len(kept) != want || len(kept) != len(read) || nSpike != 4*len(kept) || nEnergy != len(kept) {
			t.Errorf("profile %s: %d kept networks, %d read, %d spike and %d energy cells", profile, len(kept), len(read), nSpike, nEnergy)
		}
	}
}

// TestStageHistoriesAsSwitches: the train and figure stages' versions, once
// first-match switches (train) and hand-kept maxima (figure) whose answers
// hung on the order of their cases, are lists of pipeline.Bump whose
// largest applicable entry wins. Restricted to the entries that existed
// when they became lists (train 7, figure 6), the lists give every cell of
// every profile the version the switches gave, which keeps every key; the
// switches stay here, frozen, as the oracle.
func TestStageHistoriesAsSwitches(t *testing.T) {
	t.Parallel()
	upTo := func(s *pipeline.Stage, last int) *pipeline.Stage {
		r := &pipeline.Stage{Name: s.Name, Version: s.Version}
		for _, b := range s.History {
			if b.Version <= last {
				r.History = append(r.History, b)
			}
		}
		return r
	}
	train, figure := upTo(stages.Train, 7), upTo(stages.Figure, 6)
	seen := map[string]map[int]int{"train": {}, "figure": {}}
	for _, profile := range []string{"paper", "smoke", "devphase", "substrate"} {
		for _, c := range paperGraph(t, profile).Cells {
			var got, want int
			switch c.Stage {
			case stages.Train:
				got, want = train.CellVersion(c.Params), trainVersionSwitch(c.Params.(*stages.TrainParams))
			case stages.Figure:
				got, want = figure.CellVersion(c.Params), figureVersionSwitch(t, c.Params.(*stages.FigureParams))
			default:
				continue
			}
			seen[c.Stage.Name][want]++
			if got != want {
				t.Errorf("profile %s: %s: version %d from the history, %d from the switch", profile, c.ID, got, want)
			}
		}
	}
	// Every version of the switches occurs in the profiles, so each of
	// their cases was compared.
	for name, last := range map[string]int{"train": 7, "figure": 6} {
		for v := 1; v <= last; v++ {
			if seen[name][v] == 0 && !(name == "figure" && (v == 2 || v == 3)) {
				t.Errorf("no %s cell at version %d in any profile: %v", name, v, seen[name])
			}
		}
	}
}

// trainVersionSwitch is trainVersion of stages/train.go before the train
// stage's history became data (at train version 7), frozen.
func trainVersionSwitch(p *stages.TrainParams) int {
	switch {
	case p.Learner == stages.LearnerBP && p.BP != nil && p.BP.Method == backprop.MethodLocal && p.BP.Rotate && p.Protocol != "static":
		return 3
	case p.Learner == stages.LearnerBP:
		return 2
	case p.Learner != stages.LearnerLocal || p.Local == nil:
		return 1
	case p.Local.GatedRotation():
		return 7
	case p.Local.KPAdapt > 0:
		return 6
	case p.Local.Mask == "mirror":
		return 5
	case p.Local.Opt == "adam":
		return 4
	case p.Local.LeakMoments || len(p.Local.Anchor) == 2:
		return 2
	}
	return 1
}

// figureVersionSwitch is figureVersion of stages/figure_stage.go before the
// figure stage's history became data (at figure version 6), frozen.
func figureVersionSwitch(t *testing.T, p *stages.FigureParams) int {
	var lay stages.FigLayout
	if err := json.Unmarshal([]byte(p.Layout), &lay); err != nil {
		t.Fatalf("figure %s: %v", p.Name, err)
	}
	v := 1
	if strings.Contains(lay.Caption, "[[") {
		v = 5
	}
	if strings.Contains(lay.Caption, "[[ours:") {
		v = 6
	}
	for _, pn := range lay.Panels {
		for _, sr := range pn.Series {
			if sr.Select != "" {
				v = max(v, 2)
			}
			if pn.XLog && sr.Offset != 0 {
				v = max(v, 3)
			}
			if sr.ShowLabels {
				v = max(v, 4)
			}
		}
	}
	return v
}
