package backprop

import (
	"math"
	"testing"

	"repro/core"
	"repro/internal/kernels"
)

// TestUseInputOffset: data with a per-pixel background takes the offset path
// at about the density of its strokes; dense Gaussian data keeps the dense
// path.
func TestUseInputOffset(t *testing.T) {
	bg := backgroundSet(400, 12, 12, 4, 3)
	off, density := UseInputOffset(bg)
	if off == nil || density > offsetMaxDensity || density < 0.05 {
		t.Errorf("background set: offset %v, density %.3f; want the offset path at a density in [0.05, %.3f]", off != nil, density, offsetMaxDensity)
	}
	for j, o := range off {
		if o >= 0 {
			t.Fatalf("offset[%d] = %v, want the (negative) background value", j, o)
		}
	}
	if off, density := UseInputOffset(blobs(400, 12, 4, 3)); off != nil || density < 0.99 {
		t.Errorf("Gaussian blobs: offset %v, density %.3f; want the dense path at density about 1", off != nil, density)
	}
	if off, _ := UseInputOffset(&core.Dataset{D: 4}); off != nil {
		t.Errorf("empty set: want the dense path")
	}
}

// TestOffsetPathMatchesDense: on data with a background, the offset path's
// logits and loss gradient equal the dense path's up to float32 rounding
// (the same sums in another order), for batch sizes that fill and that do
// not fill the last group of four, with and without k-WTA and wiring.
func TestOffsetPathMatchesDense(t *testing.T) {
	const h, w, classes = 9, 9, 4
	ds := backgroundSet(64, h, w, classes, 5)
	off, _ := UseInputOffset(ds)
	if off == nil {
		t.Fatal("background set did not take the offset path")
	}
	nets := []struct {
		name   string
		hidden []int
		kwta   float64
		conn   float64
	}{
		{"relu", []int{24, 12}, 0, 0},
		{"kwta", []int{24, 12}, 0.25, 0},
		{"conn", []int{24}, 0, 0.5},
		{"readout-only", nil, 0, 0},
	}
	for _, nc := range nets {
		for _, rows := range []int{1, 3, 4, 7, 16} {
			t.Run(nc.name+"/rows="+itoa(rows), func(t *testing.T) {
				sizes := append(append([]int{h * w}, nc.hidden...), classes)
				dense := NewNet(sizes, nc.kwta, core.NewRNG(11, core.StreamInit))
				if nc.conn > 0 {
					dense.SetConn(core.ConnMasks(sizes, h, w, nc.conn, 2, core.NewRNG(11, core.StreamConn)))
				}
				sparse := NewNet(sizes, nc.kwta, core.NewRNG(11, core.StreamInit))
				sparse.conn = dense.conn
				copy(sparse.Params, dense.Params)
				sparse.SetInputOffset(off)
				gd, zd := offsetPass(dense, ds, rows)
				gs, zs := offsetPass(sparse, ds, rows)
				// Each value is a sum of at most 81 products of O(1)
				// terms, rounded in float32 (2^-24 relative) in two
				// orders: 1e-4 of the terms' scale bounds the difference.
				const tol = 1e-4
				for i := range zd {
					if math.Abs(float64(zd[i]-zs[i])) > tol*(1+math.Abs(float64(zd[i]))) {
						t.Fatalf("logit %d: dense %v, offset %v", i, zd[i], zs[i])
					}
				}
				for i := range gd {
					if math.Abs(float64(gd[i]-gs[i])) > tol*(1+math.Abs(float64(gd[i]))) {
						t.Fatalf("gradient %d: dense %v, offset %v", i, gd[i], gs[i])
					}
				}
			})
		}
	}
}

// offsetPass forwards the first rows samples of ds through net, takes the
// mean cross-entropy's gradient and returns it with the logits.
func offsetPass(net *Net, ds *core.Dataset, rows int) (grad, logits []float32) {
	p := NewPass(net, rows)
	p.SetRows(rows)
	copy(p.A[0], ds.X[:rows*ds.D])
	net.Forward(p)
	L, C := net.Layers(), net.Classes()
	lossRows(CrossEntropy, p, ds.Y[:rows], L, C)
	grad = make([]float32, len(net.Params))
	net.Backward(p, grad)
	return grad, append([]float32(nil), p.A[L][:rows*C]...)
}

// TestOffsetRowIndependent: on the offset path a row's logits do not
// depend on the rows it is batched with (its zero coefficients in its
// group's other columns add exactly nothing): each row alone gives the
// same bits as in a batch of 7.
func TestOffsetRowIndependent(t *testing.T) {
	const h, w, classes = 9, 9, 4
	ds := backgroundSet(16, h, w, classes, 8)
	off, _ := UseInputOffset(ds)
	net := NewNet([]int{h * w, 20, classes}, 0, core.NewRNG(2, core.StreamInit))
	net.SetInputOffset(off)
	_, batch := offsetPass(net, ds, 7)
	for r := range 7 {
		one := &core.Dataset{X: ds.Row(r), Y: ds.Y[r : r+1], N: 1, D: ds.D, Classes: classes}
		_, z := offsetPass(net, one, 1)
		for c := range classes {
			if math.Float32bits(z[c]) != math.Float32bits(batch[r*classes+c]) {
				t.Fatalf("row %d class %d: alone %v, in a batch %v", r, c, z[c], batch[r*classes+c])
			}
		}
	}
}

// TestSetInputOffsetLength: a wrong-length offset is a programmer error.
func TestSetInputOffsetLength(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("SetInputOffset with a short offset did not panic")
		}
	}()
	NewNet([]int{4, 3, 2}, 0, core.NewRNG(1, core.StreamInit)).SetInputOffset(make([]float32, 3))
}

// TestDiffBits checks the off-background bit sets (the vector kernel on
// whole words where the CPU has it) against a bit-by-bit loop: a NaN
// differs from everything, -0 and +0 do not differ, and the bits past the
// last entry are clear.
func TestDiffBits(t *testing.T) {
	t.Parallel()
	rng := core.NewRNG(15, 0)
	nan := math.Float32frombits(0x7fc0_0001)
	negZero := float32(math.Copysign(0, -1))
	for _, n := range []int{0, 1, 63, 64, 65, 128, 200, 784} {
		x, o := make([]float32, n), make([]float32, n+5)
		for j := range n {
			o[j] = float32(rng.IntN(3))
			switch rng.IntN(6) {
			case 0:
				x[j] = nan
			case 1:
				x[j], o[j] = negZero, 0
			case 2, 3:
				x[j] = o[j]
			default:
				x[j] = float32(rng.IntN(3))
			}
		}
		if n > 0 {
			o[n-1], x[n-1] = nan, nan // NaN against NaN differs too
		}
		nz := make([]uint64, (n+63)/64)
		for k := range nz {
			nz[k] = ^uint64(0) // every bit must be written
		}
		kernels.DiffBits(nz, x, o)
		for j := range 64 * len(nz) {
			got := nz[j/64]>>(j%64)&1 == 1
			want := j < n && x[j] != o[j]
			if got != want {
				t.Fatalf("n=%d: bit %d = %v, want %v (x %v, o %v)", n, j, got, want, x[min(j, n-1)], o[min(j, n-1)])
			}
		}
	}
}

// TestAnyNonZero checks the bitwise column test against v != 0 entry by
// entry, with -0 (zero) and NaN (non-zero) in the rows.
func TestAnyNonZero(t *testing.T) {
	rng := core.NewRNG(7, 0)
	special := []float32{float32(math.Copysign(0, -1)), float32(math.NaN()), 1e-45, -1e-45}
	for _, rows := range []int{1, 3, 16} {
		const n = 37
		a := make([]float32, rows*n)
		for i := range a {
			if r := rng.IntN(8); r == 0 {
				a[i] = special[rng.IntN(len(special))]
			} else if r == 1 {
				a[i] = float32(rng.NormFloat64())
			}
		}
		got := make([]bool, n)
		anyNonZero(got, a, rows, make([]uint32, n))
		for i := range n {
			want := false
			for r := range rows {
				if a[r*n+i] != 0 {
					want = true
				}
			}
			if got[i] != want {
				t.Fatalf("rows=%d column %d: %v, want %v", rows, i, got[i], want)
			}
		}
	}
}
