package experiments

import (
	"fmt"
	"strings"
	"testing"

	"repro/core"
	"repro/pipeline"
	"repro/stages"
)

// TestTrainMemDefaultSystem: the estimate of the paper's default system is
// near the ~0.3 GB a train cell was measured to add in flight.
func TestTrainMemDefaultSystem(t *testing.T) {
	t.Parallel()
	lc := core.DefaultLocalConfig()
	got := trainMem(&stages.TrainParams{Learner: "local", Local: &lc}, "mnist")
	if got < 150<<20 || got > 400<<20 {
		t.Fatalf("default system estimate %s, want 0.15-0.4 GiB", GiB(got))
	}
}

// TestCheckMemory: every cell of pipeline.toml's profiles fits a 16 GiB
// machine; a width that would need more than the machine is refused at the
// line that set it.
func TestCheckMemory(t *testing.T) {
	t.Parallel()
	load := func(src string) *Matrix {
		cfg, err := pipeline.ParseConfig("../pipeline.toml", src)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Load(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	src := readPipelineTOML(t)
	m := load(src)
	var most int64
	for _, e := range m.Experiments {
		for _, pp := range e.params {
			for _, p := range pp {
				most = max(most, trainMem(p, e.Dataset))
			}
		}
	}
	t.Logf("largest train cell estimate: %s", GiB(most))
	for _, prof := range []string{"paper", "smoke", "substrate"} {
		if err := m.CheckMemory(prof, 16<<30); err != nil {
			t.Errorf("profile %s on 16 GiB: %v", prof, err)
		}
	}
	big := load(strings.Replace(src, "[experiment.local]\nbuffer = 200\n", "[experiment.local]\nbuffer = 200\nhidden = [65536, 65536]\n", 1))
	err := big.CheckMemory("smoke", 24<<30)
	// The error names the line of the hidden the edit added (after the
	// table header and its buffer).
	line := strings.Count(src[:strings.Index(src, "[experiment.local]\nbuffer = 200\n")], "\n") + 3
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("pipeline.toml:%d: experiment night-narrow-k200.local.hidden: a train cell would need about 131.8 GiB", line)) {
		t.Fatalf("err = %v", err)
	}
}
