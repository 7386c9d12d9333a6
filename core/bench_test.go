package core

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"io"
	"math"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// loadMNISTTrain reads the official MNIST training set from
// $REPRO_DATA/mnist (or $REPRO_DATA_MIRROR/mnist, which make test sets)
// and standardises it per pixel (population s.d., s.d. < 1e-6 -> 1), as
// the reference does. It skips the test or benchmark when neither is set.
// (The core package cannot import internal/dataset, which imports core.)
func loadMNISTTrain(b testing.TB) *Dataset {
	dir := os.Getenv("REPRO_DATA")
	if dir == "" {
		dir = os.Getenv("REPRO_DATA_MIRROR")
	}
	if dir == "" {
		b.Skip("neither REPRO_DATA nor REPRO_DATA_MIRROR is set")
	}
	read := func(name string) []byte {
		f, err := os.ReadFile(filepath.Join(dir, "mnist", name))
		if err != nil {
			b.Fatal(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(f))
		if err != nil {
			b.Fatal(err)
		}
		out, err := io.ReadAll(zr)
		if err != nil {
			b.Fatal(err)
		}
		return out
	}
	img, lab := read("train-images-idx3-ubyte.gz"), read("train-labels-idx1-ubyte.gz")
	n := int(binary.BigEndian.Uint32(img[4:]))
	const d = 784
	ds := &Dataset{X: make([]float32, n*d), Y: make([]int32, n), N: n, D: d, Classes: 10, Height: 28, Width: 28}
	mean := make([]float64, d)
	sq := make([]float64, d)
	for i := range n {
		ds.Y[i] = int32(lab[8+i])
		for j := range d {
			v := float32(img[16+i*d+j]) / 255
			ds.X[i*d+j] = v
			mean[j] += float64(v)
		}
	}
	for j := range mean {
		mean[j] /= float64(n)
	}
	for i := range n {
		for j := range d {
			e := float64(ds.X[i*d+j]) - mean[j]
			sq[j] += e * e
		}
	}
	for j := range d {
		sd := float32(math.Sqrt(sq[j] / float64(n)))
		if sd < 1e-6 {
			sd = 1
		}
		for i := range n {
			ds.X[i*d+j] = (ds.X[i*d+j] - float32(mean[j])) / sd
		}
	}
	return ds
}

// BenchmarkWakingStep times one waking step of the default system (forward
// and sweep of 16, unmasked update, reservoir write, replay forward and
// sweep of 16, masked update) on MNIST, after a warm-up of 500 steps, and
// reports the split between the phases.
func BenchmarkWakingStep(b *testing.B) {
	ds := loadMNISTTrain(b)
	cfg := DefaultLocalConfig()
	tasks := []Task{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}}
	r, err := newLocalRun(&cfg, ds, ds.Subset([]int{0, 1, 2}), tasks, 0, Hooks{})
	if err != nil {
		b.Fatal(err)
	}
	etaW, etaR := cfg.Eta*16/256, cfg.Eta*cfg.NremGain
	var idx []int
	for i, y := range ds.Y {
		if y < 2 {
			idx = append(idx, i)
		}
	}
	batch := make([]int, 16)
	next := func(step int) []int {
		for k := range batch {
			batch[k] = idx[(step*16+k*7919)%len(idx)]
		}
		return batch
	}
	for s := range 500 {
		r.wakingStep(next(s), etaW, etaR)
	}
	var tFwd, tSweep, tUpd, tMask, tRepFwd, tRepUpd time.Duration
	nt := r.nt
	step := 500
	c0 := processCPU()
	for b.Loop() {
		step++
		p := r.wake
		t0 := time.Now()
		p.load(ds, next(step))
		nt.forward(p, r.sup)
		t1 := time.Now()
		nt.sweep(p, 1)
		t2 := time.Now()
		r.sup = r.nextSuppression(p, 0)
		for l := 1; l < nt.L; l++ {
			clear(r.awake[l])
			for _, i := range p.act[l] {
				r.awake[l][i] = true
			}
		}
		masks := r.replayMasks()
		for bb := range p.n {
			r.buf.Offer(p.x[bb*784:(bb+1)*784], p.y[bb], nil, r.rng)
		}
		t3 := time.Now()
		nt.update(&cfg, p, etaW, nil, false)
		t4 := time.Now()
		rp := r.rep
		sample := r.buf.Sample(nil, 16, r.rng)
		rp.n = len(sample)
		for bb, j := range sample {
			copy(rp.x[bb*784:(bb+1)*784], r.buf.Row(j))
			rp.y[bb] = r.buf.Label(j)
		}
		nt.forward(rp, nil)
		nt.sweep(rp, 1)
		t5 := time.Now()
		nt.update(&cfg, rp, etaR, masks, masks != nil)
		t6 := time.Now()
		tFwd += t1.Sub(t0)
		tSweep += t2.Sub(t1)
		tMask += t3.Sub(t2)
		tUpd += t4.Sub(t3)
		tRepFwd += t5.Sub(t4)
		tRepUpd += t6.Sub(t5)
	}
	n := float64(b.N)
	// Process CPU time: less sensitive than wall time to a loaded machine.
	b.ReportMetric((processCPU()-c0)*1e9/n, "cpu-ns/op")
	b.ReportMetric(float64(tFwd.Nanoseconds())/n, "fwd-ns/op")
	b.ReportMetric(float64(tSweep.Nanoseconds())/n, "sweep-ns/op")
	b.ReportMetric(float64(tMask.Nanoseconds())/n, "masks+buffer-ns/op")
	b.ReportMetric(float64(tUpd.Nanoseconds())/n, "wake-update-ns/op")
	b.ReportMetric(float64(tRepFwd.Nanoseconds())/n, "replay-fwd+sweep-ns/op")
	b.ReportMetric(float64(tRepUpd.Nanoseconds())/n, "replay-update-ns/op")
}

// BenchmarkShortRun times a whole run of the default system on the first
// 6,000 MNIST training samples (one epoch per task, evaluation on 1,000).
func BenchmarkShortRun(b *testing.B) {
	ds := loadMNISTTrain(b)
	idx := make([]int, 6000)
	for i := range idx {
		idx[i] = i
	}
	train := ds.Subset(idx)
	ev := make([]int, 1000)
	for i := range ev {
		ev[i] = 50000 + i
	}
	eval := ds.Subset(ev)
	cfg := DefaultLocalConfig()
	cfg.Epochs = 1
	tasks := []Task{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}}
	for b.Loop() {
		res, err := TrainLocal(cfg, train, eval, tasks, 0, Hooks{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.WakingBatches), "batches/op")
	}
}

// processCPU is the process's user+system CPU time in seconds.
func processCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
