// Package refdump reads what the differential check's Python drivers
// (tools/refcheck/refstep.py, refbp.py) write, the authors' learner state
// around recorded steps, and compares one of our tensors with one of
// theirs within float32 rounding. It is test tooling for `make
// reference-check` (docs/reference-check.md); nothing in the product
// imports it.
package refdump

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Tensor is a dense row-major array in the reference's layout; exactly one
// of F32, F64 and I32 holds its values.
type Tensor struct {
	Shape []int
	F32   []float32
	F64   []float64
	I32   []int32
}

// Values returns t's values as float64.
func (t Tensor) Values() []float64 {
	v := make([]float64, 0, len(t.F32)+len(t.I32)+len(t.F64))
	for _, x := range t.F32 {
		v = append(v, float64(x))
	}
	for _, x := range t.I32 {
		v = append(v, float64(x))
	}
	return append(v, t.F64...)
}

// Dump is one driver output: its tensors by name ("<tag>/<name>") and the
// driver's metadata (index.json's "meta").
type Dump struct {
	Tensors map[string]Tensor
	Meta    map[string]any
}

// Load reads dir/index.json and dir/data.bin.
func Load(dir string) (*Dump, error) {
	path := filepath.Join(dir, "index.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var idx struct {
		Meta    map[string]any `json:"meta"`
		Tensors map[string]struct {
			Dtype  string `json:"dtype"`
			Shape  []int  `json:"shape"`
			Offset int64  `json:"offset"`
		} `json:"tensors"`
	}
	if err := json.Unmarshal(raw, &idx); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "data.bin"))
	if err != nil {
		return nil, err
	}
	d := &Dump{Tensors: map[string]Tensor{}, Meta: idx.Meta}
	for name, e := range idx.Tensors {
		n := 1
		for _, s := range e.Shape {
			n *= s
		}
		size := map[string]int{"f4": 4, "i4": 4, "f8": 8}[e.Dtype]
		if size == 0 || e.Offset < 0 || e.Offset+int64(n*size) > int64(len(data)) {
			return nil, fmt.Errorf("%s: tensor %s: dtype %q, %d values at %d do not fit data.bin (%d bytes)", path, name, e.Dtype, n, e.Offset, len(data))
		}
		b := data[e.Offset : e.Offset+int64(n*size)]
		t := Tensor{Shape: e.Shape}
		switch e.Dtype {
		case "f4":
			t.F32 = make([]float32, n)
			for i := range n {
				t.F32[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
			}
		case "i4":
			t.I32 = make([]int32, n)
			for i := range n {
				t.I32[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
			}
		case "f8":
			t.F64 = make([]float64, n)
			for i := range n {
				t.F64[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
			}
		}
		d.Tensors[name] = t
	}
	return d, nil
}

// Num returns the number meta[key] (0 if absent or not a number).
func (d *Dump) Num(key string) float64 {
	f, _ := d.Meta[key].(float64)
	return f
}

// Entry returns meta[group][key] as a map (nil if absent).
func (d *Dump) Entry(group, key string) map[string]any {
	g, _ := d.Meta[group].(map[string]any)
	e, _ := g[key].(map[string]any)
	return e
}

// U is float32's unit roundoff.
const U = 1.0 / (1 << 24)

// ToleranceFactor is the factor of U on a tensor's largest magnitude within
// which two float32 computations that sum the same terms in another order
// agree: the longest sum of one value (784 inputs, plus the batch and the
// few operations around it) bounds its rounding error by n U sum|terms|
// (Higham's gamma_n), the terms being of the tensor's own scale.
const ToleranceFactor = 1024

// Compare compares ours with ref, bit for bit when exact, else within
// ToleranceFactor U max|ref|, skipping the entries where skip (when
// non-nil) is true. It returns the first difference as
// "name[i]: ours x, reference y (tolerance t)", or "".
func Compare(name string, ours, ref Tensor, exact bool, skip []bool) string {
	o, r := ours.Values(), ref.Values()
	if len(o) != len(r) {
		return fmt.Sprintf("%s: ours %d values, reference %d", name, len(o), len(r))
	}
	tol := 0.0
	if !exact {
		scale := 0.0
		for i, x := range r {
			if skip == nil || !skip[i] {
				scale = max(scale, math.Abs(x))
			}
		}
		tol = ToleranceFactor * U * scale
	}
	for i := range o {
		if skip != nil && skip[i] {
			continue
		}
		if math.IsNaN(o[i]) != math.IsNaN(r[i]) || math.Abs(o[i]-r[i]) > tol {
			return fmt.Sprintf("%s%s: ours %.9g, reference %.9g (tolerance %.3g)", name, Index(ref.Shape, i), o[i], r[i], tol)
		}
	}
	return ""
}

// Index formats flat index i of an array of shape as "[i]" or "[i,j,...]".
func Index(shape []int, i int) string {
	if len(shape) <= 1 {
		return fmt.Sprintf("[%d]", i)
	}
	idx := make([]string, len(shape))
	for k := len(shape) - 1; k >= 0; k-- {
		idx[k] = strconv.Itoa(i % shape[k])
		i /= shape[k]
	}
	return "[" + strings.Join(idx, ",") + "]"
}

// CompareActivity compares one pass's activities (rows x width, after
// k-WTA). Where one run has a unit active and the other not, it reports
// the first such entry and whether it is a near-tie: in its row, every unit
// active in one run only sits within the tolerance of that run's k-WTA
// threshold (its smallest kept value) or of 0 (the rectifier), the two
// runs' thresholds agree within the tolerance, and so does every unit
// active in both, so the runs part as they would at another thread count.
// (Without the last two conditions a real difference that first shows as
// one unit swapped, thresholds apart, passed as a tie.) Otherwise it
// compares the values as Compare does.
func CompareActivity(name string, ours, ref Tensor) (msg string, tie bool) {
	if len(ours.F32) != len(ref.F32) || len(ref.Shape) != 2 {
		return fmt.Sprintf("%s: ours %d values, reference %d", name, len(ours.F32), len(ref.F32)), false
	}
	n, width := ref.Shape[0], ref.Shape[1]
	scale := 0.0
	for _, x := range ref.F32 {
		scale = max(scale, math.Abs(float64(x)))
	}
	tol := ToleranceFactor * U * scale
	minKept := func(row []float32) float64 {
		m := math.Inf(1)
		for _, x := range row {
			if x > 0 {
				m = min(m, float64(x))
			}
		}
		return m
	}
	for b := range n {
		o, r := ours.F32[b*width:(b+1)*width], ref.F32[b*width:(b+1)*width]
		to, tr := minKept(o), minKept(r)
		first, tie := -1, true
		for i := range width {
			if (o[i] > 0) == (r[i] > 0) {
				continue
			}
			if first < 0 {
				first = i
			}
			v, thr := float64(o[i]), to
			if r[i] > 0 {
				v, thr = float64(r[i]), tr
			}
			if v-thr > tol && v > tol {
				tie = false
			}
		}
		if first < 0 {
			continue
		}
		if tie && !math.IsInf(to, 1) && !math.IsInf(tr, 1) && math.Abs(to-tr) > tol {
			tie = false
		}
		for i := range width {
			if tie && o[i] > 0 && r[i] > 0 && math.Abs(float64(o[i])-float64(r[i])) > tol {
				tie = false
			}
		}
		return fmt.Sprintf("%s[%d,%d]: ours %.9g, reference %.9g (thresholds %.9g, %.9g; tolerance %.3g)",
			name, b, first, o[first], r[first], to, tr, tol), tie
	}
	return Compare(name, ours, ref, false, nil), false
}

// CompareActiveSet compares which units a rectifier (ReLU) left active in
// one pass (rows x width): where one run has a unit active and the other
// not, it reports the first such entry and whether it is a near-tie: every
// unit active in one run only has a value within the tolerance (1024 u
// max|a|) of 0, so its pre-activation sat at 0 within float32 rounding and
// the runs part as they would at another thread count, and every unit
// active in both agrees within the tolerance (a near-tie in a pass that
// differs elsewhere is a difference). A set that differs otherwise is
// reported at its first entry that is no near-tie. Where the sets agree
// the values are left to the state comparisons and it returns "".
func CompareActiveSet(name string, ours, ref Tensor) (msg string, tie bool) {
	if len(ours.F32) != len(ref.F32) || len(ref.Shape) != 2 {
		return fmt.Sprintf("%s: ours %d values, reference %d", name, len(ours.F32), len(ref.F32)), false
	}
	scale := 0.0
	for _, x := range ref.F32 {
		scale = max(scale, math.Abs(float64(x)))
	}
	tol := ToleranceFactor * U * scale
	at := func(i int) string {
		return fmt.Sprintf("%s%s: ours %.9g, reference %.9g (tolerance %.3g)", name, Index(ref.Shape, i), ours.F32[i], ref.F32[i], tol)
	}
	first := -1
	for i, o := range ours.F32 {
		if r := ref.F32[i]; (o > 0) != (r > 0) {
			if float64(max(o, r)) > tol {
				return at(i), false
			}
			if first < 0 {
				first = i
			}
		}
	}
	if first < 0 {
		return "", false
	}
	for i, o := range ours.F32 {
		if r := ref.F32[i]; o > 0 && r > 0 && math.Abs(float64(o)-float64(r)) > tol {
			return at(i), false
		}
	}
	return at(first), true
}

// EnvOr returns the environment variable k, or def when it is unset or
// empty (the REPRO_REFCHECK_* variables the Makefile passes).
func EnvOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// LastLine returns the last line of a driver's output (its error).
func LastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// Tally counts the paths of a reference check that fail: a path whose
// line does not read "identical through", and a control (a deliberately
// wrong port) whose line does, since then the check has gone blind.
type Tally struct{ Failed int }

// Line completes a path's line ("NAME: identical through ..." or "NAME:
// differs at ..."), counts it, prints it on standard output and returns it.
func (t *Tally) Line(line string, control bool) string {
	same := strings.Contains(line, ": identical through")
	switch {
	case control && same:
		line += " (a wrong port that passed: the check is blind)"
		t.Failed++
	case control && strings.Contains(line, ": differs at"):
		line += " (as it must)"
	case !same:
		t.Failed++
	}
	fmt.Println(line)
	return line
}

// Python returns the interpreter a reference check runs the authors' code
// with (REPRO_REFCHECK_PYTHON), skipping t unless the check is asked for
// (REPRO_REFCHECK, which make reference-check sets) and that interpreter
// imports torch and pandas.
func Python(t testing.TB) string {
	t.Helper()
	if os.Getenv("REPRO_REFCHECK") == "" {
		t.Skip("the differential check against the authors' code is opt-in: make reference-check")
	}
	py := EnvOr("REPRO_REFCHECK_PYTHON", "/usr/bin/python3")
	if out, err := exec.Command(py, "-c", "import torch, pandas").CombinedOutput(); err != nil {
		t.Skipf("reference check skipped: %s cannot import torch and pandas (apt-get install python3-torch python3-pandas): %s", py, LastLine(string(out)))
	}
	return py
}

// Need fails t unless every path exists: the authors' files and the data
// the check reads.
func Need(t testing.TB, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("reference check: %v (set REPRO_REFCHECK_REF to the authors' src and REPRO_DATA to the data mirror)", err)
		}
	}
}

// Set returns the set of paths asked for (REPRO_REFCHECK_SET: all, the
// default, step or ci), failing t on any other.
func Set(t testing.TB) string {
	t.Helper()
	set := EnvOr("REPRO_REFCHECK_SET", "all")
	if set != "all" && set != "step" && set != "ci" {
		t.Fatalf("REPRO_REFCHECK_SET=%q: want all, step or ci", set)
	}
	return set
}
