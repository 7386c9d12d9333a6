package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeMarker precedes every README transcript TestReadmeExamples runs.
const readmeMarker = "<!-- README test:"

// readmeStep is one command of a README transcript and the lines it shows.
type readmeStep struct {
	cmd  string
	want []string
}

// readmeSteps returns the steps of the marked transcripts, in README order.
func readmeSteps(readme string) ([]readmeStep, error) {
	return readmeStepsMarked(readme, readmeMarker)
}

// readmeStepsMarked returns the steps of the transcripts marked with marker.
func readmeStepsMarked(readme, marker string) ([]readmeStep, error) {
	var steps []readmeStep
	lines := strings.Split(readme, "\n")
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], marker) {
			continue
		}
		if i+1 >= len(lines) || lines[i+1] != "```" {
			return nil, fmt.Errorf("README.md:%d: a marked transcript must start with ``` on the next line", i+1)
		}
		for i += 2; i < len(lines) && lines[i] != "```"; i++ {
			if cmd, ok := strings.CutPrefix(lines[i], "$ "); ok {
				steps = append(steps, readmeStep{cmd: cmd})
				continue
			}
			if len(steps) == 0 {
				return nil, fmt.Errorf("README.md:%d: output before any $ command", i+1)
			}
			steps[len(steps)-1].want = append(steps[len(steps)-1].want, lines[i])
		}
	}
	return steps, nil
}

// durationRe matches the durations a run prints (3.007s, 1m55.077s, 22ms).
var durationRe = regexp.MustCompile(`\b\d+(h\d+)?(m\d+)?(\.\d+)?(ms|s)\b`)

func normLine(s string) string { return durationRe.ReplaceAllString(strings.TrimRight(s, " "), "DUR") }

// matchTranscript reports how got differs from the README's lines: each
// must match the next output line (durations aside); "..." stands for any
// number of lines. It returns "" when they agree.
func matchTranscript(want []string, got string) string {
	var out []string
	if got = strings.TrimRight(got, "\n"); got != "" {
		out = strings.Split(got, "\n")
	}
	i, skip := 0, false
	for _, w := range want {
		if w == "..." {
			skip = true
			continue
		}
		j := i
		for j < len(out) && normLine(out[j]) != normLine(w) && skip {
			j++
		}
		if j >= len(out) || normLine(out[j]) != normLine(w) {
			near := "(end of output)"
			if i < len(out) {
				near = out[i]
			}
			return fmt.Sprintf("README line %q: output has %q", w, near)
		}
		i, skip = j+1, false
	}
	if !skip && i < len(out) {
		return fmt.Sprintf("output goes on where the README stops: %q", out[i])
	}
	return ""
}

func TestMatchTranscript(t *testing.T) {
	for _, tc := range []struct {
		name string
		want []string
		got  string
		ok   bool
	}{
		{"same", []string{"a", "ran 1 cell in 3.2s"}, "a\nran 1 cell in 1m2.5s\n", true},
		{"elided", []string{"a", "...", "d"}, "a\nb\nc\nd\n", true},
		{"trailing", []string{"a", "..."}, "a\nb\n", true},
		{"differs", []string{"a", "b"}, "a\nc\n", false},
		{"longer", []string{"a"}, "a\nb\n", false},
		{"shorter", []string{"a", "b"}, "a\n", false},
		{"silent", nil, "", true},
	} {
		if msg := matchTranscript(tc.want, tc.got); (msg == "") != tc.ok {
			t.Errorf("%s: matchTranscript = %q, want ok %v", tc.name, msg, tc.ok)
		}
	}
}

// TestReadmeExamples runs every marked README transcript, in order, on a
// fresh clone (pipeline.toml and paper/, an empty store) with the project's
// data mirror, and checks that each command prints what the README shows.
func TestReadmeExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 2 smoke cells of real MNIST (and downloads, prepares, splits); about a minute")
	}
	data := mnistMirror(t)
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	steps, err := readmeSteps(string(readme))
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) < 5 {
		t.Fatalf("README.md has %d marked transcript steps; want the examples marked with %q", len(steps), readmeMarker)
	}
	dir := freshClone(t)
	os.MkdirAll(filepath.Join(dir, "bin"), 0o755)
	if err := os.Symlink(reproBin, filepath.Join(dir, "bin", "repro")); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "REPRO_") {
			env = append(env, kv)
		}
	}
	env = append(env, "REPRO_DATA_MIRROR="+data)
	for _, st := range steps {
		cmd := exec.Command("sh", "-c", st.cmd)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("$ %s: %v\n%s", st.cmd, err, out)
		}
		if msg := matchTranscript(st.want, string(out)); msg != "" {
			t.Errorf("$ %s: %s\nfull output:\n%s", st.cmd, msg, out)
		}
	}
}
