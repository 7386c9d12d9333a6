package refruns

import (
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// converter runs tools/refcheck/reference_runs.py (make reference-runs) on
// a fake reference and fake checkpoints; it needs a Python 3.11 (tomllib),
// nothing of torch.
type converter struct {
	t                        *testing.T
	py, ref, ran, parts, out string
	pipeline                 string
}

func newConverter(t *testing.T) *converter {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3: reference_runs.py not exercised")
	}
	if out, err := exec.Command(py, "-c", "import tomllib, pickle").CombinedOutput(); err != nil {
		t.Skipf("%s has no tomllib (Python >= 3.11 needed): %s", py, out)
	}
	dir := t.TempDir()
	c := &converter{t: t, py: py, ref: filepath.Join(dir, "reference"), ran: filepath.Join(dir, "ran", "src"),
		parts: filepath.Join(dir, "parts"), out: filepath.Join(dir, "out"), pipeline: filepath.Join(dir, "pipeline.toml")}
	var sums, readme strings.Builder
	readme.WriteString("| file | sha | commit |\n")
	for i, f := range []string{"run_seq.py", "models/cortex.py"} {
		body := fmt.Sprintf("# the authors' %s (a stand-in)\n", f)
		c.write(filepath.Join(c.ran, f), body)
		fmt.Fprintf(&sums, "%x  src/%s\n", sha256.Sum256([]byte(body)), f)
		fmt.Fprintf(&readme, "| `src/%s` | `x` | `%s` |\n", f, strings.Repeat(fmt.Sprint(i+1), 40))
	}
	c.write(filepath.Join(c.ref, "SHA256SUMS"), sums.String())
	c.write(filepath.Join(c.ref, "README.md"), readme.String())
	c.write(c.pipeline, "[[disputed.row]]\nreference = \"cfg_a\"\n")
	return c
}

func (c *converter) write(path, body string) {
	c.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		c.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		c.t.Fatal(err)
	}
}

// checkpoint writes the pickle a --val run of cfg_a at seed leaves.
func (c *converter) checkpoint(seed int, acc float64) {
	c.t.Helper()
	if err := os.MkdirAll(c.parts, 0o755); err != nil {
		c.t.Fatal(err)
	}
	script := fmt.Sprintf(`import pickle
pickle.dump(dict(config="cfg_a", seed=%d, run_args=dict(val=True), omp_threads="1", final_acc=%g, forgetting=0.1, replay_used=16885), open(%q, "wb"))`,
		seed, acc, filepath.Join(c.parts, fmt.Sprintf("val_cfg_a_s%d.pkl", seed)))
	if out, err := exec.Command(c.py, "-c", script).CombinedOutput(); err != nil {
		c.t.Fatalf("%v: %s", err, out)
	}
}

func (c *converter) run() (string, error) {
	out, err := exec.Command(c.py, filepath.Join("..", "..", "tools", "refcheck", "reference_runs.py"),
		"--parts", c.parts, "--ran", c.ran, "--reference", c.ref, "--out", c.out, c.pipeline).CombinedOutput()
	return string(out), err
}

func (c *converter) seeds() []Run {
	c.t.Helper()
	f, err := Load(c.out, "cfg_a")
	if err != nil {
		c.t.Fatal(err)
	}
	return f.Runs
}

// TestReferenceRunsMerge: runs made on two machines accumulate in one file;
// a seed rerun must print the same line; a file of another reference is
// not merged into.
func TestReferenceRunsMerge(t *testing.T) {
	t.Parallel()
	c := newConverter(t)
	c.checkpoint(0, 0.9)
	c.checkpoint(1, 0.8)
	if out, err := c.run(); err != nil {
		t.Fatalf("first machine: %v: %s", err, out)
	}
	// A second machine: the checkpoints of seeds 0 and 1 are gone, seed 1
	// is rerun (the same result) and seed 2 is new.
	if err := os.RemoveAll(c.parts); err != nil {
		t.Fatal(err)
	}
	c.checkpoint(1, 0.8)
	c.checkpoint(2, 0.7)
	out, err := c.run()
	if err != nil {
		t.Fatalf("second machine: %v: %s", err, out)
	}
	if !strings.Contains(out, "3 seeds [0, 1, 2] (2 from checkpoints here, 1 kept from the file)") {
		t.Errorf("second machine printed %q", out)
	}
	got := c.seeds()
	if len(got) != 3 || got[0].FinalAcc != 90 || got[1].FinalAcc != 80 || got[2].FinalAcc != 70 {
		t.Fatalf("merged runs = %+v", got)
	}
	// A rerun that disagrees with the file is an error, and the file stays.
	c.checkpoint(2, 0.75)
	if out, err := c.run(); err == nil || !strings.Contains(out, "seed 2: the file says") {
		t.Errorf("a disagreeing rerun: err %v, output %q", err, out)
	}
	if got := c.seeds(); len(got) != 3 || got[2].FinalAcc != 70 {
		t.Errorf("after a refused merge: %+v", got)
	}
	// A file of another reference is not merged into.
	c.checkpoint(2, 0.7)
	body, err := os.ReadFile(filepath.Join(c.out, "cfg_a.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	c.write(filepath.Join(c.out, "cfg_a.tsv"), strings.Replace(string(body), "# reference: src/run_seq.py at 1111", "# reference: src/run_seq.py at 9999", 1))
	if out, err := c.run(); err == nil || !strings.Contains(out, "cfg_a.tsv:3: runs of another reference") {
		t.Errorf("another reference: err %v, output %q", err, out)
	}
}
