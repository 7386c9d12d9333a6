package dataset

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"repro/internal/refdump"
)

// The differential check of the frozen V1 front-end for CIFAR-10 against
// the authors' load_cifar10_feat (run_seq.py; make reference-check; opt-in,
// REPRO_REFCHECK=1; docs/reference-check.md). tools/refcheck/refv1.py runs
// their function on the first 1,000 training and 200 test images, taping
// the torch.randint draws that place the filter patches, and writes their
// filters, threshold, pooled features (float32, then the float16 cache) and
// standardised features (of the run that built the cache, and of a second
// run that read it back). This test builds our bank from the taped draws
// (newV1BankAt), computes our threshold and features on the same images
// with the product's code (the threshold over the first 500 training
// images) and compares, in this order: the filters, the threshold, the
// pooled features image by image, then the standardised features image by
// image.
//
// Tolerances (u = 2^-24, K = 3*6*6 = 108 values per patch):
//
//   - filters: refdump's 1024 u max|W| (their normalisation in float32
//     against ours in float64);
//   - a response z = sum_k w_k x_k (x in [0, 1], ||w||_2 <= 1, so
//     sum |w_k x_k| <= ||w||_1 <= sqrt K): a float32 sum of K terms in
//     another order is within K u sqrt K, and filters whose K-term
//     normalisation rounds differently move it by as much again:
//     tauZ = 2 K sqrt(K) u (1.3e-4);
//   - the threshold (a mean of responses): tauZ + 1024 u |thr|;
//   - a pooled feature (the mean of 49 values of relu(z - thr)): both
//     operands move by tauZ, the 49-term float32 sum and the division by
//     51 u |p|: tauP = 2 tauZ + 51 u |p|;
//   - the float16 cache: our RoundFloat16 of the reference's float32 must
//     give its cache bit for bit (numpy's astype rule); ours and theirs are
//     each their float32 value rounded to the nearest float16, so they
//     agree within tauP plus one float16 unit (half a unit of rounding on
//     each side). "Within one float16 unit" alone is not a bound: the
//     float32 difference is absolute (a threshold a few 1e-6 apart shifts
//     every active position), so at small features it spans several
//     float16 units; the line counts how many values differ and by how
//     much;
//   - the standardised features: ours computed from the reference's
//     input (the cache for std_*, its float32 features for first_std_*;
//     both inputs were compared above), against theirs, numpy float32
//     means and standard deviations over N = 1,000 rows summed in order:
//     (N + 4) u (M_j / sd_j + |z|), M_j the largest |x| of dimension j.

type v1RefPath struct {
	name      string
	thrImages int  // images the threshold is fitted on (500; a control: another count)
	testOwn   bool // a control: the test images rectified against a threshold fitted on themselves
	control   bool
}

var v1RefPaths = []v1RefPath{
	{name: "V1 features (CIFAR-10, 1,000+200 images)", thrImages: 500},
	{name: "control: V1 features with the threshold taken over 499 images", thrImages: 499, control: true},
	{name: "control: V1 features with the test images rectified against a threshold fitted on themselves", thrImages: 500, testOwn: true, control: true},
}

const (
	v1RefTrain = 1000
	v1RefTest  = 200
)

func TestReferenceCheck(t *testing.T) {
	py := refdump.Python(t)
	ref := refdump.EnvOr("REPRO_REFCHECK_REF", "../../../shared/spec/reference/src")
	cifar := filepath.Join(refdump.EnvOr("REPRO_DATA", "../../../shared/data"), "cifar-10-batches-bin")
	refdump.Need(t, filepath.Join(ref, "run_seq.py"), filepath.Join(cifar, "data_batch_1.bin"), filepath.Join(cifar, "test_batch.bin"))
	refdump.Set(t)
	train, err := readCIFARPrefix(filepath.Join(cifar, "data_batch_1.bin"), v1RefTrain)
	if err != nil {
		t.Fatal(err)
	}
	test, err := readCIFARPrefix(filepath.Join(cifar, "test_batch.bin"), v1RefTest)
	if err != nil {
		t.Fatal(err)
	}
	only := os.Getenv("REPRO_REFCHECK_ONLY")
	var d *refdump.Dump
	var dumpErr string
	var tally refdump.Tally
	for _, p := range v1RefPaths {
		if only != "" && !strings.Contains(p.name, only) {
			continue
		}
		if d == nil && dumpErr == "" {
			dir := filepath.Join(t.TempDir(), "dump")
			cmd := exec.Command(py, "../../tools/refcheck/refv1.py", "--ref", ref, "--cifar", cifar,
				"--train", strconv.Itoa(v1RefTrain), "--test", strconv.Itoa(v1RefTest), "--out", dir)
			cmd.Env = append(os.Environ(), "OMP_NUM_THREADS=1")
			if out, err := cmd.CombinedOutput(); err != nil {
				dumpErr = fmt.Sprintf("not run: refv1.py: %v: %s", err, refdump.LastLine(string(out)))
			} else if d, err = refdump.Load(dir); err != nil {
				dumpErr = "not run: " + err.Error()
			}
		}
		line := dumpErr
		if d != nil {
			line = checkV1Dump(d, train, test, p)
		}
		line = p.name + ": " + line
		tally.Line(line, p.control)
	}
	if tally.Failed > 0 {
		t.Errorf("%d paths differ from the authors' code (lines above)", tally.Failed)
	}
}

// readCIFARPrefix decodes the first n records of a CIFAR-10 binary batch.
func readCIFARPrefix(path string, n int) (*Raw, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, n*cifar10Record)
	if _, err := f.ReadAt(b, 0); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return DecodeCIFAR10(b)
}

// checkV1Dump computes our front-end on the dump's draws and images and
// returns the path's verdict.
func checkV1Dump(d *refdump.Dump, train, test *Raw, p v1RefPath) (line string) {
	cfg := V1CIFAR10()
	F, K := cfg.Filters, 3*cfg.Patch*cfg.Patch
	ints := func(name string) []int {
		v := make([]int, 0, F)
		for _, x := range d.Tensors[name].I32 {
			v = append(v, int(x))
		}
		return v
	}
	img, row, col := ints("idx_img"), ints("idx_y"), ints("idx_x")
	if len(img) != F || len(row) != F || len(col) != F {
		return fmt.Sprintf("not run: the tape holds %d, %d and %d draws, want %d each", len(img), len(row), len(col), F)
	}
	for name, n := range map[string]int{"train": train.N, "test": test.N} {
		y := d.Tensors["y_"+name].I32
		if len(y) != n {
			return fmt.Sprintf("not run: the reference's %s set has %d images, ours %d", name, len(y), n)
		}
		lab := map[string][]int32{"train": train.Labels, "test": test.Labels}[name]
		for i := range y {
			if y[i] != lab[i] {
				return fmt.Sprintf("not run: %s label %d: ours %d, reference %d (not the same images)", name, i, lab[i], y[i])
			}
		}
	}
	defer func() {
		if r := recover(); r != nil {
			line = fmt.Sprintf("not run: %v", r)
		}
	}()
	bank := newV1BankAt(train, cfg, img, row, col)
	if v := refdump.Compare("W", refdump.Tensor{Shape: d.Tensors["W"].Shape, F32: bank.W}, d.Tensors["W"], false, nil); v != "" {
		return "differs at the filter bank (before the first image), tensor " + v
	}

	const u = refdump.U
	tauZ := 2 * float64(K) * math.Sqrt(float64(K)) * u
	thr := bank.Threshold(train, p.thrImages)
	rthr := d.Tensors["thr"].F32
	maxThr := 0.0
	for f := range F {
		maxThr = max(maxThr, math.Abs(float64(thr[f])-float64(rthr[f])))
		tol := tauZ + 1024*u*math.Abs(float64(rthr[f]))
		if math.Abs(float64(thr[f])-float64(rthr[f])) > tol {
			return fmt.Sprintf("differs at the threshold (before the first image), tensor thr[%d]: ours %.9g, reference %.9g (tolerance %.3g)", f, thr[f], rthr[f], tol)
		}
	}

	D := 4 * F
	ctx := context.Background()
	type split struct {
		name string
		r    *Raw
		ours []float32
	}
	splits := []*split{{name: "train", r: train}, {name: "test", r: test}}
	for _, s := range splits {
		t := thr
		if p.testOwn && s.name == "test" {
			t = bank.Threshold(s.r, p.thrImages)
		}
		var err error
		if s.ours, err = bank.Features(ctx, s.r, t, 1); err != nil {
			return "not run: " + err.Error()
		}
	}
	// The pooled features, image by image: float32, then float16.
	image, n16, maxUnits, maxDiff, maxRatio := 0, 0, 0.0, 0.0, 0.0
	nMulti, maxMulti := 0, 0.0 // differences of more than one float16 unit, and the largest value among them
	var first16 string
	for _, s := range splits {
		ref32, ref16 := d.Tensors["pooled_"+s.name], d.Tensors["cache_"+s.name]
		if len(ref32.F32) != s.r.N*D || len(ref16.F32) != s.r.N*D {
			return fmt.Sprintf("not run: the reference's %s features are %v, want [%d %d]", s.name, ref32.Shape, s.r.N, D)
		}
		for i := range s.r.N {
			for j := range D {
				k := i*D + j
				o, r := s.ours[k], ref32.F32[k]
				diff := math.Abs(float64(o) - float64(r))
				tol := 2*tauZ + 51*u*math.Abs(float64(r))
				maxDiff, maxRatio = max(maxDiff, diff), max(maxRatio, diff/tol)
				if diff > tol {
					return fmt.Sprintf("differs at image %d, tensor pooled_%s[%d,%d]: ours %.9g, reference %.9g (tolerance %.3g)", image, s.name, i, j, o, r, tol)
				}
				r16 := ref16.F32[k]
				if RoundFloat16(r) != r16 {
					return fmt.Sprintf("differs at image %d, tensor cache_%s[%d,%d]: our float16 rounding of the reference's %.9g gives %.9g, its cache holds %.9g", image, s.name, i, j, r, RoundFloat16(r), r16)
				}
				o16 := RoundFloat16(o)
				if o16 == r16 {
					continue
				}
				// Each side rounds its float32 value to the nearest float16,
				// moving it by at most half a float16 unit.
				unit := float16Unit(max(math.Abs(float64(o16)), math.Abs(float64(r16))))
				d16 := math.Abs(float64(o16) - float64(r16))
				if d16 > tol+unit {
					return fmt.Sprintf("differs at image %d, tensor cache_%s[%d,%d]: ours %.9g, reference %.9g (tolerance %.3g)", image, s.name, i, j, o16, r16, tol+unit)
				}
				n16++
				maxUnits = max(maxUnits, d16/unit)
				if d16 > unit {
					nMulti++
					maxMulti = max(maxMulti, math.Abs(float64(r)))
				}
				if first16 == "" {
					first16 = fmt.Sprintf("cache_%s[%d,%d]: ours %.9g, reference %.9g, float32 ours %.9g, reference %.9g", s.name, i, j, o16, r16, o, r)
				}
			}
			image++
		}
	}
	// The standardised features, ours computed from the reference's input:
	// the float16 cache read back (std_*, what every run but the first saw,
	// and what V1CIFAR10's Float16 reproduces), and the float32 features
	// the run that built the cache standardised (first_std_*, Float16
	// false).
	for _, v := range []struct{ in, out string }{{"cache_", "std_"}, {"pooled_", "first_std_"}} {
		x := append([]float32(nil), d.Tensors[v.in+"train"].F32...)
		mean, std := FitStandardize(x, D)
		M := make([]float64, D)
		for i, v := range x {
			M[i%D] = max(M[i%D], math.Abs(float64(v)))
		}
		image = 0
		for _, s := range splits {
			x := append([]float32(nil), d.Tensors[v.in+s.name].F32...)
			ApplyStandardize(x, mean, std)
			rs := d.Tensors[v.out+s.name].F32
			if len(rs) != len(x) {
				return fmt.Sprintf("not run: the reference's %s%s has %d values, want %d", v.out, s.name, len(rs), len(x))
			}
			for k, o := range x {
				j := k % D
				r := rs[k]
				tol := (v1RefTrain + 4) * u * (M[j]/float64(std[j]) + math.Abs(float64(r)))
				if math.Abs(float64(o)-float64(r)) > tol {
					return fmt.Sprintf("differs at image %d, tensor %s%s[%d,%d]: ours %.9g, reference %.9g (tolerance %.3g)", image+k/D, v.out, s.name, k/D, j, o, r, tol)
				}
			}
			image += s.r.N
		}
	}
	line = fmt.Sprintf("identical through %d images (the filter bank and threshold, then each image's pooled and standardised features; threshold within %.2g, pooled float32 within %.2g, %.2g of the tolerance at most", image, maxThr, maxDiff, maxRatio)
	if n16 > 0 {
		line += fmt.Sprintf("; float16 cache: %d of %d values differ, %d by one float16 unit, %d by up to %.0f units (all at values below %.2g), first: %s", n16, image*D, n16-nMulti, nMulti, maxUnits, maxMulti, first16)
	} else {
		line += "; the float16 cache bit for bit"
	}
	return line + ")"
}

// float16Unit returns the spacing of float16 values at magnitude a (the
// unit in the last place of a float16 value of that size).
func float16Unit(a float64) float64 {
	if a < 1.0/(1<<14) {
		return 1.0 / (1 << 24) // subnormal
	}
	_, e := math.Frexp(a) // a = m 2^e, m in [0.5, 1)
	return math.Ldexp(1, e-11)
}
