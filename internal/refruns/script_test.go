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
	mnistParts               string
	pipeline                 string
	// machine is the --machine the conversion says the checkpoints ran on.
	machine string
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
		parts: filepath.Join(dir, "parts"), mnistParts: filepath.Join(dir, "mnist-parts"), out: filepath.Join(dir, "out"), pipeline: filepath.Join(dir, "pipeline.toml"),
		machine: "Test CPU A; AVX2"}
	var sums, readme strings.Builder
	readme.WriteString("| file | sha | commit |\n")
	for i, f := range []string{"run_seq.py", "models/cortex.py", "run_mnist.py", "models/base.py", "models/torch_utils.py", "models/spiking.py"} {
		body := fmt.Sprintf("# the authors' %s (a stand-in)\n", f)
		c.write(filepath.Join(c.ran, f), body)
		fmt.Fprintf(&sums, "%x  src/%s\n", sha256.Sum256([]byte(body)), f)
		fmt.Fprintf(&readme, "| `src/%s` | `x` | `%s` |\n", f, strings.Repeat(fmt.Sprint(i%9+1), 40))
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

// mnistCheckpoint writes the pickle run_mnist.py leaves for cfg at seed.
func (c *converter) mnistCheckpoint(cfg string, seed int, acc float64) {
	c.t.Helper()
	if err := os.MkdirAll(c.mnistParts, 0o755); err != nil {
		c.t.Fatal(err)
	}
	script := fmt.Sprintf(`import pickle
pickle.dump(dict(config=%q, seed=%d, epochs=30, test_acc=%g, test_macro_auc=0.97), open(%q, "wb"))`,
		cfg, seed, acc, filepath.Join(c.mnistParts, fmt.Sprintf("%s_s%d.pkl", cfg, seed)))
	if out, err := exec.Command(c.py, "-c", script).CombinedOutput(); err != nil {
		c.t.Fatalf("%v: %s", err, out)
	}
}

func (c *converter) run() (string, error) {
	out, err := exec.Command(c.py, filepath.Join("..", "..", "tools", "refcheck", "reference_runs.py"),
		"--parts", c.parts, "--mnist-parts", c.mnistParts, "--ran", c.ran, "--reference", c.ref, "--out", c.out, "--machine", c.machine, c.pipeline).CombinedOutput()
	return string(out), err
}

func (c *converter) seeds() []Run {
	c.t.Helper()
	f, err := Load(c.out, "cfg_a", "")
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

// TestReferenceRunsAcrossMachines re-runs the review's finding: the
// authors' code gives another number for the same seed on another CPU
// (90.10 against 90.77). Each seed records its machine; a rerun on another
// machine, or over a file written before machines were recorded, is
// refused with that explanation and exit 0, the file's draw kept; a rerun
// that differs on the machine that wrote the line stays an error.
func TestReferenceRunsAcrossMachines(t *testing.T) {
	t.Parallel()
	c := newConverter(t)
	c.checkpoint(0, 0.9077)
	c.checkpoint(1, 0.8)
	if out, err := c.run(); err != nil {
		t.Fatalf("machine A: %v: %s", err, out)
	}
	c.machine = "Test CPU B; AVX512"
	c.checkpoint(0, 0.9010) // the same seed, another CPU generation
	c.checkpoint(2, 0.7)
	out, err := c.run()
	if err != nil || !strings.Contains(out, "seed 0: kept the file's '0\\t90.77\\t10.00\\t16885' (ran on Test CPU A; AVX2); this machine (Test CPU B; AVX512) gives '0\\t90.10\\t10.00\\t16885': the authors' code is not bit-reproducible across CPUs") ||
		!strings.Contains(out, "1 rerun(s) on another machine refused") {
		t.Fatalf("machine B: err %v, output %q", err, out)
	}
	got := c.seeds()
	want := []Run{{0, 90.77, 10, 16885, "Test CPU A; AVX2"}, {1, 80, 10, 16885, "Test CPU A; AVX2"}, {2, 70, 10, 16885, "Test CPU B; AVX512"}}
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("runs after machine B = %+v, want %+v", got, want)
	}
	// On the machine that wrote it, a differing rerun is an error.
	c.checkpoint(2, 0.71)
	if out, err := c.run(); err == nil || !strings.Contains(out, "seed 2: the file says") || !strings.Contains(out, "both on Test CPU B; AVX512") {
		t.Errorf("a differing rerun on the same machine: err %v, output %q", err, out)
	}
	// A file written before machines were recorded: its seeds read as
	// unrecorded, and a differing rerun is refused, not an error.
	path := filepath.Join(c.out, "cfg_a.tsv")
	old := "# config: cfg_a\n# command: x\n# reference: src/run_seq.py at 1111111111111111111111111111111111111111, src/models/cortex.py at 2222222222222222222222222222222222222222 (SHA-256 as in its SHA256SUMS)\n# split: s\n# source: t\n" + SeqColumns + "\n0\t90.77\t10.00\t16885\n"
	c.write(path, old)
	if err := os.RemoveAll(c.parts); err != nil {
		t.Fatal(err)
	}
	c.checkpoint(0, 0.9010)
	if out, err := c.run(); err != nil || !strings.Contains(out, "(ran on unrecorded)") {
		t.Fatalf("over a file without machines: err %v, output %q", err, out)
	}
	if got := c.seeds(); len(got) != 1 || got[0] != (Run{0, 90.77, 10, 16885, Unrecorded}) {
		t.Fatalf("runs = %+v", got)
	}
}

// TestReferenceRunsMNIST: a row whose reference_script is run_mnist reads
// run_mnist.py's checkpoints into a test_acc file; a configuration named
// under two scripts, an unknown script and a file of the other script's
// columns are errors.
func TestReferenceRunsMNIST(t *testing.T) {
	t.Parallel()
	c := newConverter(t)
	c.write(c.pipeline, "[[disputed.row]]\nreference = \"cfg_a\"\n[[disputed.row]]\nreference = \"cfg_m\"\nreference_script = \"run_mnist\"\n")
	c.checkpoint(0, 0.9)
	c.mnistCheckpoint("cfg_m", 0, 0.7664)
	c.mnistCheckpoint("cfg_m", 3, 0.8191)
	c.mnistCheckpoint("cfg_a", 5, 0.5) // run_mnist checkpoints of a run_seq config are not read
	if out, err := c.run(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	f, err := Load(c.out, "cfg_m", "")
	if err != nil {
		t.Fatal(err)
	}
	if f.Columns != TestColumns+MachineColumn || len(f.Runs) != 2 || f.Runs[0] != (Run{Seed: 0, FinalAcc: 76.64, Machine: c.machine}) || f.Runs[1] != (Run{Seed: 3, FinalAcc: 81.91, Machine: c.machine}) ||
		!strings.Contains(f.Command, "src/run_mnist.py --configs cfg_m") || !strings.Contains(f.Reference, "src/models/spiking.py at") ||
		!strings.Contains(f.Source, "from cfg_m_s<seed>.pkl") {
		t.Fatalf("cfg_m = %+v", f)
	}
	if got := c.seeds(); len(got) != 1 || got[0].Seed != 0 {
		t.Errorf("cfg_a = %+v, want seed 0 only", got)
	}
	body, err := os.ReadFile(filepath.Join(c.out, "cfg_m.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, pipeline, want string }{
		{"two scripts", "[[disputed.row]]\nreference = \"cfg_m\"\n[[disputed.row]]\nreference = \"cfg_m\"\nreference_script = \"run_mnist\"\n", "cfg_m is run by run_seq in another row, run_mnist here"},
		{"unknown script", "[[disputed.row]]\nreference = \"cfg_m\"\nreference_script = \"run_cifar\"\n", "disputed.row[0].reference_script 'run_cifar'"},
		{"other script", "[[disputed.row]]\nreference = \"cfg_m\"\n", "cfg_m.tsv:3: runs of another reference"},
	} {
		c.write(c.pipeline, tc.pipeline)
		if out, err := c.run(); err == nil || !strings.Contains(out, tc.want) {
			t.Errorf("%s: err %v, output %q, want %q", tc.name, err, out, tc.want)
		}
		if after, _ := os.ReadFile(filepath.Join(c.out, "cfg_m.tsv")); string(after) != string(body) {
			t.Errorf("%s: cfg_m.tsv changed:\n%s", tc.name, after)
		}
	}
	// The same reference, another script's column line.
	c.write(c.pipeline, "[[disputed.row]]\nreference = \"cfg_m\"\nreference_script = \"run_mnist\"\n")
	c.write(filepath.Join(c.out, "cfg_m.tsv"), strings.Replace(string(body), TestColumns, SeqColumns, 1))
	if out, err := c.run(); err == nil || !strings.Contains(out, "cfg_m.tsv:6: the columns of another script") {
		t.Errorf("other columns: err %v, output %q", err, out)
	}
}

// TestReferenceRunsTestSet: a row whose reference_script is run_seq_test
// reads run_seq.py's runs without --val (<config>_s<seed>.pkl); a --val
// checkpoint under that name is refused.
func TestReferenceRunsTestSet(t *testing.T) {
	t.Parallel()
	c := newConverter(t)
	c.write(c.pipeline, "[[disputed.row]]\nreference = \"cfg_t\"\nreference_script = \"run_seq_test\"\n")
	ckpt := func(val string) {
		script := fmt.Sprintf(`import pickle
pickle.dump(dict(config="cfg_t", seed=0, run_args=dict(val=%s), omp_threads="1", final_acc=0.9461, forgetting=0.0, replay_used=16885), open(%q, "wb"))`,
			val, filepath.Join(c.parts, "cfg_t_s0.pkl"))
		if err := os.MkdirAll(c.parts, 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(c.py, "-c", script).CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
	}
	ckpt("True")
	if out, err := c.run(); err == nil || !strings.Contains(out, "cfg_t_s0.pkl: --val is True, want False for run_seq_test") {
		t.Errorf("a --val run as run_seq_test: err %v, output %q", err, out)
	}
	ckpt("False")
	if out, err := c.run(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	f, err := Load(c.out, "cfg_t", "")
	if err != nil {
		t.Fatal(err)
	}
	if f.Columns != SeqColumns+MachineColumn || len(f.Runs) != 1 || f.Runs[0].FinalAcc != 94.61 || strings.Contains(f.Command, "--seeds S --val") || !strings.Contains(f.Split, "official MNIST test set") {
		t.Errorf("cfg_t = %+v", f)
	}
}

// TestReferenceRunsSplit: a run_seq row on another held-out split
// (eval = "split4321") reads run_seq.py's --val --val-seed 4321 runs
// (val4321_<config>_s<seed>.pkl) into <config>.split4321.tsv, beside the
// same configuration's split-1234 file; a checkpoint of another split under
// that name is refused, naming the file.
func TestReferenceRunsSplit(t *testing.T) {
	t.Parallel()
	c := newConverter(t)
	c.write(c.pipeline, "[[disputed.row]]\nreference = \"cfg_a\"\n[[disputed.row]]\nreference = \"cfg_a\"\neval = \"split4321\"\n")
	c.checkpoint(0, 0.9)
	ckpt := func(valSeed int) {
		script := fmt.Sprintf(`import pickle
pickle.dump(dict(config="cfg_a", seed=3, run_args=dict(val=True, val_seed=%d), omp_threads="1", final_acc=0.155, forgetting=0.5, replay_used=14075), open(%q, "wb"))`,
			valSeed, filepath.Join(c.parts, "val4321_cfg_a_s3.pkl"))
		if out, err := exec.Command(c.py, "-c", script).CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
	}
	ckpt(999)
	if out, err := c.run(); err == nil || !strings.Contains(out, "val4321_cfg_a_s3.pkl: --val-seed 999, want 4321") {
		t.Errorf("a checkpoint of another split: err %v, output %q", err, out)
	}
	ckpt(4321)
	if out, err := c.run(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got := c.seeds(); len(got) != 1 || got[0].Seed != 0 {
		t.Errorf("cfg_a on split 1234 = %+v, want seed 0 only", got)
	}
	f, err := Load(c.out, "cfg_a", "split4321")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Runs) != 1 || f.Runs[0] != (Run{Seed: 3, FinalAcc: 15.5, Forgetting: 50, ReplayUsed: 14075, Machine: c.machine}) ||
		!strings.Contains(f.Command, "--seeds S --val --val-seed 4321 --resume") || !strings.Contains(f.Split, "seed 4321 (our split4321") ||
		!strings.Contains(f.Source, "from val4321_cfg_a_s<seed>.pkl") {
		t.Errorf("cfg_a on split 4321 = %+v", f)
	}
}
