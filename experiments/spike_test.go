package experiments

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"repro/pipeline"
)

// TestSpikeConfigErrors: a bad [spike] table is an error naming the file,
// the line and the key, before any cell exists.
func TestSpikeConfigErrors(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../pipeline.toml")
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
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
		{`experiments = ["full", "silent"]`, `experiments = ["bp-er"]`, "spike conversion needs a local-learner network on mnist"},
		{`experiments = ["full", "silent"]`, `experiments = ["night"]`, `experiment night has no protocol "static"`},
		{"steps = [4, 8, 16, 32]", "steps = [4, 8, 16, 32]\nthreshold = 1", "spike.threshold: unknown key"},
	}
	for _, tc := range tests {
		cfg, err := pipeline.ParseConfig("../pipeline.toml", strings.Replace(src, tc.old, tc.new, 1))
		if err == nil {
			_, err = Build(cfg, "paper")
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.new, err, tc.want)
		}
	}
}
