package dataset_test

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"testing"

	"repro/core"
	"repro/core/backprop"
	"repro/stages"
)

// BenchmarkLearnerCost times a short run of every learner kind of the
// paper on every 9th sample of the held-out stream (split 1234, about
// 6,000), five class-pair tasks of one epoch each, evaluation on every 6th
// held-out sample (about 1,000), and reports the CPU cost per stream sample (cpu-us/sample: the
// process's CPU time, so GC included) and its
// ratio to the default system's on MNIST measured in the same process
// (x-full; run the whole benchmark so "mnist/full" comes first). MNIST
// inputs are sparse; CIFAR raw luminance and the V1 features are dense
// 1,024-vectors. Needs REPRO_DATA (the release files):
//
//	REPRO_DATA=$PWD/../shared/data go test -run '^$' -bench LearnerCost -benchtime 1x ./internal/dataset/
func BenchmarkLearnerCost(b *testing.B) {
	dir := os.Getenv("REPRO_DATA")
	if dir == "" {
		b.Skip("REPRO_DATA is not set")
	}
	type kind struct {
		name  string
		local string // a core preset, or
		bp    string // a backprop preset
		data  string
	}
	kinds := []kind{
		{"full", "g16_sgd_refr_s10_w512", "", "mnist"},
		{"anchor", "g17_sgd_anchor_s10", "", "mnist"},
		{"masked-adam", "g17_adam_refr_s10", "", "mnist"},
		{"mirror", "g17_mirror_s10", "", "mnist"},
		{"soft-rotation", "g17_soft_s10", "", "mnist"},
		{"controller", "g19b_mnist", "", "mnist"},
		{"deep-skip", "g20b_d4_skip", "", "mnist"},
		{"bp-er", "", "bp_er_1000", "mnist"},
		{"bp-kwta", "", "bpk_iso_rot_lr1e4", "mnist"},
		{"derpp", "", "bp_derpp_a0.03_b1.0_w512_ce", "mnist"},
		{"er-ace", "", "bp_erace_1000", "mnist"},
		{"agem", "", "bp_agem_1000_w512", "mnist"},
		{"full", "g16_sgd_refr_s10_w512", "", "cifar10"},
		{"full", "g16_sgd_refr_s10_w512", "", "cifar10f"},
	}
	type data struct {
		train, eval *core.Dataset
		tasks       []core.Task
	}
	sets := map[string]data{}
	load := func(name string) data {
		if d, ok := sets[name]; ok {
			return d
		}
		stream, eval, tasks, err := stages.HeldoutSets(context.Background(), dir, name, 1234, 2)
		if err != nil {
			b.Fatal(err)
		}
		// Every 9th stream sample (about 6,000, every task represented,
		// as a train cell's stream_stride takes them) and every 6th
		// held-out sample (about 1,000, every class: the held-out tenth
		// is grouped by class).
		d := data{stream.Subset(stride(stream.N, 9)), eval.Subset(stride(eval.N, 6)), tasks}
		sets[name] = d
		return d
	}
	var fullPerSample float64
	for _, k := range kinds {
		b.Run(k.data+"/"+k.name, func(b *testing.B) {
			d := load(k.data)
			run := func() error {
				if k.local != "" {
					cfg, err := core.LocalPreset(k.local)
					if err != nil {
						return err
					}
					cfg.Epochs = 1
					_, err = core.TrainLocal(cfg, d.train, d.eval, d.tasks, 0, core.Hooks{})
					return err
				}
				cfg, ok := backprop.Preset(k.bp)
				if !ok {
					return fmt.Errorf("no backprop preset %s", k.bp)
				}
				cfg.Epochs = 1
				_, err := backprop.Train(cfg, d.train, d.eval, d.tasks, 0, core.Hooks{})
				return err
			}
			cpu0 := processCPU()
			for b.Loop() {
				if err := run(); err != nil {
					b.Fatal(err)
				}
			}
			// CPU time, not wall: the machine may be shared.
			us := (processCPU() - cpu0) * 1e6 / float64(b.N) / float64(d.train.N)
			b.ReportMetric(us, "cpu-us/sample")
			if k.data == "mnist" && k.name == "full" {
				fullPerSample = us
			}
			if fullPerSample > 0 {
				b.ReportMetric(us/fullPerSample, "x-full")
			}
		})
	}
}

// stride lists 0, k, 2k, ... below n.
func stride(n, k int) []int {
	var idx []int
	for i := 0; i < n; i += k {
		idx = append(idx, i)
	}
	return idx
}

// processCPU is the process's user+system CPU time in seconds.
func processCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
