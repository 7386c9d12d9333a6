package refdump

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	var data []byte
	for _, x := range []float32{1.5, -2} {
		data = binary.LittleEndian.AppendUint32(data, math.Float32bits(x))
	}
	data = binary.LittleEndian.AppendUint32(data, uint32(7))
	data = binary.LittleEndian.AppendUint64(data, math.Float64bits(0.25))
	index := `{"meta": {"steps": 3, "draws": {"s0/d0": {"high": 9}}}, "tensors": {
"pre/W1": {"dtype": "f4", "shape": [1, 2], "offset": 0},
"pre/t": {"dtype": "i4", "shape": [1], "offset": 8},
"pre/g": {"dtype": "f8", "shape": [1], "offset": 12}}}`
	if err := os.WriteFile(filepath.Join(dir, "index.json"), []byte(index), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data.bin"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if w := d.Tensors["pre/W1"]; len(w.F32) != 2 || w.F32[1] != -2 || w.Shape[1] != 2 {
		t.Errorf("pre/W1 = %+v", w)
	}
	if d.Tensors["pre/t"].I32[0] != 7 || d.Tensors["pre/g"].F64[0] != 0.25 {
		t.Errorf("pre/t, pre/g = %+v, %+v", d.Tensors["pre/t"], d.Tensors["pre/g"])
	}
	if d.Num("steps") != 3 || d.Entry("draws", "s0/d0")["high"] != 9.0 {
		t.Errorf("meta = %v", d.Meta)
	}
	// A tensor past the end of data.bin is an error naming it.
	bad := strings.Replace(index, `"offset": 12`, `"offset": 16`, 1)
	if err := os.WriteFile(filepath.Join(dir, "index.json"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "pre/g") {
		t.Errorf("Load of a tensor past data.bin: %v, want an error naming pre/g", err)
	}
}

func TestCompare(t *testing.T) {
	ref := Tensor{Shape: []int{2, 2}, F32: []float32{1, -0.5, 0.25, 0}}
	near := Tensor{Shape: []int{2, 2}, F32: []float32{1, -0.5, 0.25, 1e-5}} // within 1024 u
	far := Tensor{Shape: []int{2, 2}, F32: []float32{1, -0.5, 0.2502, 0}}   // beyond it
	if v := Compare("W", near, ref, false, nil); v != "" {
		t.Errorf("within tolerance: %s", v)
	}
	if v := Compare("W", near, ref, true, nil); !strings.HasPrefix(v, "W[1,1]: ours 9.99") {
		t.Errorf("exact: %q, want W[1,1]", v)
	}
	if v := Compare("W", far, ref, false, nil); !strings.HasPrefix(v, "W[1,0]: ours 0.2502") {
		t.Errorf("beyond tolerance: %q, want W[1,0]", v)
	}
	if v := Compare("W", far, ref, false, []bool{false, false, true, false}); v != "" {
		t.Errorf("skipped entry compared: %s", v)
	}
	if v := Compare("W", Tensor{F32: []float32{1}}, ref, false, nil); v == "" {
		t.Error("a length mismatch passed")
	}
}

func TestCompareActivity(t *testing.T) {
	ref := Tensor{Shape: []int{1, 4}, F32: []float32{0, 2, 1, 0}}
	// Unit 3 kept instead of unit 2, at the threshold within rounding: a near-tie.
	tie := Tensor{Shape: []int{1, 4}, F32: []float32{0, 2, 0, 1.0000001}}
	if v, isTie := CompareActivity("a1", tie, ref); v == "" || !isTie {
		t.Errorf("near-tie: %q, tie %v", v, isTie)
	}
	// Unit 0 kept far above the threshold: a difference.
	diff := Tensor{Shape: []int{1, 4}, F32: []float32{3, 2, 0, 0}}
	if v, isTie := CompareActivity("a1", diff, ref); !strings.HasPrefix(v, "a1[0,0]") || isTie {
		t.Errorf("difference: %q, tie %v", v, isTie)
	}
	if v, _ := CompareActivity("a1", ref, ref); v != "" {
		t.Errorf("identical: %s", v)
	}
	// Unit 3 kept instead of unit 2, each at its own run's threshold, but
	// the thresholds 2e-3 apart (the tolerance is 1.2e-4): a difference
	// (the multiplicative-coding control once passed as a tie this way).
	apart := Tensor{Shape: []int{1, 4}, F32: []float32{0, 2, 0, 1.002}}
	if v, isTie := CompareActivity("a1", apart, ref); v == "" || isTie {
		t.Errorf("swap with thresholds apart: %q, tie %v", v, isTie)
	}
	// A swap at the threshold, but unit 1, active in both, 0.01 away.
	drift := Tensor{Shape: []int{1, 4}, F32: []float32{0, 2.01, 0, 1.0000001}}
	if v, isTie := CompareActivity("a1", drift, ref); v == "" || isTie {
		t.Errorf("swap with a drifted unit: %q, tie %v", v, isTie)
	}
}

func TestCompareActiveSet(t *testing.T) {
	// Scale 2: the tolerance is 1024 * 2^-24 * 2 = 1.2e-4.
	ref := Tensor{Shape: []int{2, 3}, F32: []float32{2, 0, 1, 0, 1e-5, 0.5}}
	same := Tensor{Shape: []int{2, 3}, F32: []float32{2.01, 0, 1, 0, 2e-5, 0.5}}
	if v, tie := CompareActiveSet("a1", same, ref); v != "" || tie {
		t.Errorf("same set: %q, tie %v", v, tie)
	}
	// Unit 1 of row 1 off in ours, at 1e-5 in the reference: a near-tie.
	tie := Tensor{Shape: []int{2, 3}, F32: []float32{2, 0, 1, 0, 0, 0.5}}
	if v, isTie := CompareActiveSet("a1", tie, ref); !strings.HasPrefix(v, "a1[1,1]") || !isTie {
		t.Errorf("near-tie: %q, tie %v", v, isTie)
	}
	// Unit 2 of row 0 off in ours and at 1 in the reference: a difference,
	// even where it is the row's smallest active value (no k-WTA threshold
	// under a plain rectifier).
	diff := Tensor{Shape: []int{2, 3}, F32: []float32{2, 0, 0, 0, 1e-5, 0.5}}
	if v, isTie := CompareActiveSet("a1", diff, ref); !strings.HasPrefix(v, "a1[0,2]") || isTie {
		t.Errorf("difference: %q, tie %v", v, isTie)
	}
	// A near-tie and a real difference in one pass: a difference.
	both := Tensor{Shape: []int{2, 3}, F32: []float32{2, 0, 0, 0, 0, 0.5}}
	if _, isTie := CompareActiveSet("a1", both, ref); isTie {
		t.Error("a near-tie with a real difference passed as a near-tie")
	}
}

func TestCompareActiveSetValues(t *testing.T) {
	ref := Tensor{Shape: []int{2, 3}, F32: []float32{2, 0, 1, 0, 1e-5, 0.5}}
	// The near-tie of unit [1,1], but unit [0,0] is 0.01 away: a difference.
	drift := Tensor{Shape: []int{2, 3}, F32: []float32{2.01, 0, 1, 0, 0, 0.5}}
	if v, isTie := CompareActiveSet("a1", drift, ref); !strings.HasPrefix(v, "a1[0,0]") || isTie {
		t.Errorf("near-tie with drifted values: %q, tie %v", v, isTie)
	}
}

// A control that reads identical is a failure (the check went blind), a
// control that differs is not, and a real path fails unless identical.
func TestTally(t *testing.T) {
	var tl Tally
	for _, c := range []struct {
		line    string
		control bool
		suffix  string
		failed  int
	}{
		{"a: identical through 3 steps", false, "steps", 0},
		{"b: differs at step 1, tensor W[0]: ours 1, reference 2", false, "2", 1},
		{"c: differs at step 0, tensor W[0]: ours 1, reference 2", true, "(as it must)", 1},
		{"d: identical through 1 steps", true, "(a wrong port that passed: the check is blind)", 2},
		{"e: not run: refstep.py: exit status 1", false, "exit status 1", 3},
	} {
		if got := tl.Line(c.line, c.control); !strings.HasSuffix(got, c.suffix) || tl.Failed != c.failed {
			t.Errorf("%q (control %v): %q, %d failed; want suffix %q, %d failed", c.line, c.control, got, tl.Failed, c.suffix, c.failed)
		}
	}
}
