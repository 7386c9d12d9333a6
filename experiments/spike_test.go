package experiments

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"repro/pipeline"
)

// buildEdited builds the paper profile of pipeline.toml with old replaced
// by new, and returns the error; src is the file's text.
func buildEdited(src, old, new string) error {
	cfg, err := pipeline.ParseConfig("../pipeline.toml", strings.Replace(src, old, new, 1))
	if err == nil {
		_, err = build(cfg, "paper")
	}
	return err
}

// readPipelineTOML returns the project's pipeline.toml.
func readPipelineTOML(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../pipeline.toml")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSpikeConfigErrors: a bad [spike] table is an error naming the file,
// the line and the key, before any cell exists.
func TestSpikeConfigErrors(t *testing.T) {
	t.Parallel()
	src := readPipelineTOML(t)
	line := func(s string) int {
		before, _, ok := strings.Cut(src, s)
		if !ok {
			t.Fatalf("pipeline.toml has no %q", s)
		}
		return strings.Count(before, "\n") + 1
	}
	steps, exps := line("steps = [4, 8, 16, 32]"), line(`experiments = ["full", "silent"]`)
	tests := []struct {
		old, new, want string
	}{
		{"steps = [4, 8, 16, 32]", "steps = [4, 0, 16]", fmt.Sprintf("pipeline.toml:%d: spike.steps: T_s = 0: every time budget must be >= 1", steps)},
		{"steps = [4, 8, 16, 32]", "steps = [4, 4]", fmt.Sprintf("pipeline.toml:%d: spike.steps: T_s = 4 listed twice", steps)},
		{`experiments = ["full", "silent"]`, `experiments = ["full", "silnet"]`, fmt.Sprintf("pipeline.toml:%d: spike.experiments: \"silnet\": no such [[experiment]]", exps)},
		{`experiments = ["full", "silent"]`, `experiments = ["bp-er"]`, "spike conversion needs a kept network (the local learner's) on mnist"},
		{`experiments = ["full", "silent"]`, `experiments = ["night"]`, `experiment night has no protocol "static"`},
		{"steps = [4, 8, 16, 32]", "steps = [4, 8, 16, 32]\nthreshold = 1", "spike.threshold: unknown key"},
	}
	for _, tc := range tests {
		if err := buildEdited(src, tc.old, tc.new); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.new, err, tc.want)
		}
	}
}

// TestEnergyTableErrors: an energy metric needs an inference and the
// reverse; a bad inference names its line and key.
func TestEnergyTableErrors(t *testing.T) {
	t.Parallel()
	src := readPipelineTOML(t)
	tests := []struct {
		old, new, want string
	}{
		{`inference = "spike8"`, `inference = "spike-8"`, `.inference: metric "energy.acc@spike-8": inference "spike-8": want spike<T_s>, dense or event`},
		{`inference = "spike8"`, `metric = "acc"`, "row and column default-acc both set"},
		{`metric = "energy.nj"`, `metric = "energy.watts"`, `quantity "watts": want acc, nj, vs_dense or vs_event`},
	}
	for _, tc := range tests {
		if err := buildEdited(src, tc.old, tc.new); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.new, err, tc.want)
		}
	}
}
