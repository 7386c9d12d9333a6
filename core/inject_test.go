package core

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestInjectSkipRoundTrip: a state with skip synapses exported and
// injected again exports the same tensors (S, Bs and their velocity
// included), and a twin velocity that differs from S's is refused.
func TestInjectSkipRoundTrip(t *testing.T) {
	cfg, err := testPreset("g20b_d4_skip")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Static = false
	const n, d = 32, 784
	train := &Dataset{D: d, Classes: 10, Height: 28, Width: 28, N: n, X: make([]float32, n*d), Y: make([]int32, n)}
	for i := range train.X {
		train.X[i] = float32(i%97) / 97
	}
	for i := range train.Y {
		train.Y[i] = int32(i % 10)
	}
	all := Task{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	r0, err := newLocalRun(&cfg, train, train, []Task{all}, 0, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	for _, sk := range r0.nt.skip {
		if sk != nil {
			for s := range sk.m1 {
				sk.m1[s] = float32(s%13) * 1e-3
			}
		}
	}
	want := r0.exportState()
	if _, ok := want["S3"]; !ok {
		t.Fatal("exportState wrote no S3")
	}
	ts := Tensors{}
	for k, v := range want {
		ts["pre/"+k] = v
	}
	// The cell types and connectivity, which exportState leaves out.
	nt := r0.nt
	for l := 1; l < nt.L; l++ {
		ts[fmtName("pre/sign", l)] = Tensor{Shape: []int{nt.sizes[l]}, F32: nt.types[l]}
		ly := nt.lay[l]
		m := ly.scatterDense(make([]float32, len(ly.w)), 0)
		for i := range ly.nOut {
			for s := ly.rowPtr[i]; s < ly.rowPtr[i+1]; s++ {
				if ly.absent == nil || !ly.absent[s] {
					m[i*ly.nIn+int(ly.col[s])] = 1
				}
			}
		}
		ts[fmtName("pre/mask", l)] = Tensor{Shape: []int{ly.nOut, ly.nIn}, F32: m}
	}
	r1, err := injectRun(&cfg, ts, "pre", train)
	if err != nil {
		t.Fatal(err)
	}
	got := r1.exportState()
	for _, name := range []string{"S3", "Bs3", "mS3", "mBs3", "S4", "Bs4", "mS4", "W3", "mW3", "B2"} {
		a, b := want[name].F32, got[name].F32
		if len(a) == 0 || len(a) != len(b) {
			t.Fatalf("%s: %d values exported, %d after injection", name, len(a), len(b))
		}
		for i := range a {
			if a[i] != b[i] && !(math.IsNaN(float64(a[i])) && math.IsNaN(float64(b[i]))) {
				t.Fatalf("%s[%d]: %g exported, %g after injection", name, i, a[i], b[i])
			}
		}
	}
	bad := append([]float32(nil), ts["pre/mBs3"].F32...)
	bad[5]++
	ts["pre/mBs3"] = Tensor{Shape: ts["pre/mBs3"].Shape, F32: bad}
	if _, err := injectRun(&cfg, ts, "pre", train); err == nil || !strings.Contains(err.Error(), "mS3 and mBs3 differ at 5") {
		t.Errorf("injectRun with mBs3 unequal to mS3: %v, want a refusal", err)
	}
}

func fmtName(prefix string, l int) string { return fmt.Sprintf("%s%d", prefix, l) }
