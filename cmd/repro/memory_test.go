package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestJobsCappedByMemory: a local run's -j is lowered so that the cells
// in flight fit in the memory cells may use (REPRO_MEMORY here), and says so.
func TestJobsCappedByMemory(t *testing.T) {
	t.Parallel()
	dir := workdir(t, tinyDAG)
	cmd := exec.Command(reproBin, "run", "-q", "-j", "100000")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "REPRO_MEMORY=1G")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "-j 100000 lowered to 2: a cell of this run may need up to 0.5 GiB and the machine has 1.0 GiB") || !strings.Contains(string(out), "ran 6 cells") {
		t.Fatalf("run -j 100000: %v\n%s", err, out)
	}
	cmd = exec.Command(reproBin, "plan")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "REPRO_MEMORY=lots")
	if out, err := cmd.CombinedOutput(); exitCode(t, err) != 1 || !strings.Contains(string(out), `REPRO_MEMORY="lots": want a positive size such as 16G`) {
		t.Fatalf("REPRO_MEMORY=lots: %v\n%s", err, out)
	}
}

func TestParseBytes(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{"123": 123, "512M": 512 << 20, "16G": 16 << 30, "16GiB": 16 << 30, "1t": 1 << 40, "2k": 2048} {
		if got, err := parseBytes(in); err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1G", "G", "1.5G", "99999999999T"} {
		if _, err := parseBytes(in); err == nil {
			t.Errorf("parseBytes(%q): no error", in)
		}
	}
}
