package dataset

import (
	"context"
	"math"
	"os"
	"slices"
	"testing"
	"time"

	"repro/internal/data"
)

// randomCIFAR returns n RGB images with uniform random bytes and labels i%10.
func randomCIFAR(n int, seed int64) *Raw {
	r := newCIFARRaw(n, 10)
	g := data.NewRNG(seed, 99)
	for i := range r.Pixels {
		r.Pixels[i] = uint8(g.Uint64())
	}
	for i := range r.Labels {
		r.Labels[i] = int32(i % 10)
	}
	return r
}

func TestV1BankFilters(t *testing.T) {
	t.Parallel()
	train := randomCIFAR(40, 1)
	cfg := V1CIFAR10()
	cfg.Filters = 32
	b := NewV1Bank(train, cfg)
	for f := range b.Filters {
		if b.Image[f] < 0 || b.Image[f] >= 40 || b.Row[f] < 0 || b.Row[f] >= 26 || b.Col[f] < 0 || b.Col[f] >= 26 {
			t.Fatalf("filter %d cut at image %d (%d, %d)", f, b.Image[f], b.Row[f], b.Col[f])
		}
		var s, ss float64
		for _, v := range b.W[f*b.K : (f+1)*b.K] {
			s += float64(v)
			ss += float64(v) * float64(v)
		}
		// Tolerance: float32 storage of 108 values, and the 1e-6 epsilon.
		if math.Abs(s) > 1e-5 || math.Abs(math.Sqrt(ss)-1) > 1e-5 {
			t.Errorf("filter %d: sum %g, norm %g; want 0 and 1", f, s, math.Sqrt(ss))
		}
	}
	// Same seed, same bank; the draws are in the documented order.
	b2 := NewV1Bank(train, cfg)
	if !slices.Equal(b.W, b2.W) {
		t.Error("same seed gave different filters")
	}
	r := data.NewRNG(7, data.StreamV1)
	if first := intN(r, 40); first != b.Image[0] {
		t.Errorf("first image %d, want the stream's first draw %d", b.Image[0], first)
	}
}

// naiveFeatures computes one image's pooled features directly in float64.
func naiveFeatures(b *V1Bank, img []uint8, thr []float32) []float64 {
	o := (32-b.Patch)/b.Stride + 1
	z := make([][]float64, b.Filters)
	for f := range b.Filters {
		z[f] = make([]float64, o*o)
		for y := range o {
			for x := range o {
				s := 0.0
				k := 0
				for c := range 3 {
					for dy := range b.Patch {
						for dx := range b.Patch {
							s += float64(img[c*1024+(b.Stride*y+dy)*32+b.Stride*x+dx]) / 255 * float64(b.W[f*b.K+k])
							k++
						}
					}
				}
				z[f][y*o+x] = s
			}
		}
	}
	out := make([]float64, 4*b.Filters)
	h := o / 2
	for f := range b.Filters {
		t := 0.0
		if thr != nil {
			t = float64(thr[f])
		} else {
			for _, v := range z[f] {
				t += v
			}
			t /= float64(o * o)
		}
		for y := range o {
			for x := range o {
				q := 0
				if y >= h {
					q = 2
				}
				if x >= h {
					q++
				}
				out[4*f+q] += math.Max(z[f][y*o+x]-t, 0) / float64(h*h)
			}
		}
	}
	return out
}

func TestV1FeaturesMatchDirect(t *testing.T) {
	t.Parallel()
	train := randomCIFAR(37, 2) // not a multiple of the batch
	for _, variant := range []string{"cifar10", "cifar100"} {
		cfg := V1CIFAR10()
		if variant == "cifar100" {
			cfg = V1CIFAR100()
		}
		cfg.Filters = 16
		b := NewV1Bank(train, cfg)
		var thr []float32
		if cfg.ThresholdImages > 0 {
			thr = b.Threshold(train, 20)
		}
		got, err := b.Features(context.Background(), train, thr, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range []int{0, 17, 36} {
			want := naiveFeatures(b, train.Row(i), thr)
			if len(want) != 4*b.Filters {
				t.Fatalf("%s image %d: %d direct features, want %d", variant, i, len(want), 4*b.Filters)
			}
			for j, w := range want {
				// Tolerance: float32 GEMM over 108 terms of size <= 1.
				if d := math.Abs(float64(got[i*4*b.Filters+j]) - w); d > 2e-5 {
					t.Fatalf("%s image %d feature %d: %g, direct %g", variant, i, j, got[i*4*b.Filters+j], w)
				}
			}
		}
		for _, w := range []int{2, 3, 8} {
			again, _ := b.Features(context.Background(), train, thr, w)
			if !slices.Equal(got, again) {
				t.Errorf("%s: %d workers changed the features", variant, w)
			}
		}
	}
}

func TestV1Prepare(t *testing.T) {
	t.Parallel()
	train, test := randomCIFAR(50, 3), randomCIFAR(10, 4)
	cfg := V1CIFAR10()
	cfg.Filters, cfg.ThresholdImages = 8, 20
	p, err := V1Prepare(context.Background(), train, test, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if p.D != 32 || len(p.TrainX) != 50*32 || len(p.TestX) != 10*32 || p.Height != 1 {
		t.Errorf("D %d, %d train values, sheet %dx%d", p.D, len(p.TrainX), p.Height, p.Width)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := V1Prepare(ctx, train, test, cfg); err == nil {
		t.Error("cancelled context: no error")
	}
}

// TestV1LinearProbe trains a ridge-regression probe on the full CIFAR-10
// features (about 2 minutes; set REPRO_V1_PROBE=1). The paper quotes a
// linear probe of about 49%.
func TestV1LinearProbe(t *testing.T) {
	if os.Getenv("REPRO_V1_PROBE") == "" {
		t.Skip("set REPRO_V1_PROBE=1 to run the V1 linear probe on CIFAR-10")
	}
	train, test := loadCIFAR10(t)
	for _, f16 := range []bool{true, false} {
		cfg := V1CIFAR10()
		cfg.Float16 = f16
		start := time.Now()
		p, err := V1Prepare(context.Background(), train, test, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("float16 %v: V1Prepare of 60,000 images, 1 worker: %.1f s", f16, time.Since(start).Seconds())
		probe(t, p)
	}
}

func probe(t *testing.T, p *Prepared) {
	lambdas := []float64{1, 100, 1000}
	for i, acc := range RidgeProbe(p.TrainX, p.TrainY, p.TestX, p.TestY, p.D, p.Classes, lambdas) {
		t.Logf("V1 features, ridge probe lambda=%g: test accuracy %.2f%%", lambdas[i], 100*acc)
		if acc < 0.40 {
			t.Errorf("probe accuracy %.3f, paper says about 0.49", acc)
		}
	}
}

// TestV1RealCIFAR10 checks, on the first 300 real CIFAR-10 images, that
// the features do not depend on the worker count and are non-degenerate
// (about half of the rectified responses are positive, so few pooled
// features are exactly 0).
func TestV1RealCIFAR10(t *testing.T) {
	train, _ := loadCIFAR10(t)
	sub := *train
	sub.N = 300
	bank := NewV1Bank(train, V1CIFAR10())
	thr := bank.Threshold(train, 500)
	one, err := bank.Features(context.Background(), &sub, thr, 1)
	if err != nil {
		t.Fatal(err)
	}
	two, _ := bank.Features(context.Background(), &sub, thr, 2)
	if !slices.Equal(one, two) {
		t.Error("1 and 2 workers gave different features")
	}
	zeros := 0
	for _, v := range one {
		if v == 0 {
			zeros++
		}
	}
	if frac := float64(zeros) / float64(len(one)); frac > 0.5 {
		t.Errorf("%.0f%% of pooled features are 0", 100*frac)
	}
}

func TestRidgeProbeSeparable(t *testing.T) {
	t.Parallel()
	// Two classes told apart by the sign of feature 0: a linear probe is
	// perfect; feature 1 is noise.
	g := data.NewRNG(3, 3)
	mk := func(n int) ([]float32, []int32) {
		x, y := make([]float32, 2*n), make([]int32, n)
		for i := range n {
			y[i] = int32(i % 2)
			x[2*i] = float32(2*float64(y[i])-1) * float32(1+g.Float64())
			x[2*i+1] = float32(g.NormFloat64())
		}
		return x, y
	}
	trX, trY := mk(200)
	teX, teY := mk(50)
	accs := RidgeProbe(trX, trY, teX, teY, 2, 2, []float64{0.1, 10})
	if len(accs) != 2 {
		t.Fatalf("%d accuracies for 2 lambdas", len(accs))
	}
	for i, a := range accs {
		if a != 1 {
			t.Errorf("lambda index %d: accuracy %g, want 1", i, a)
		}
	}
}
