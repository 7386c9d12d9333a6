// Package kernelpath is the one setting that chooses between the vector
// kernels (AVX-512, AVX2) and the portable Go code, for every kernel
// family (core, core/backprop, internal/dataset), and names the host's CPU
// for the records.
//
// Every path gives the same bits (each family's tests and goldens check
// it), so the path is not part of a cell's key; it is recorded in a cell's
// provenance. REPRO_KERNELS=portable forces the Go code, to show that on a
// machine: `REPRO_KERNELS=portable repro verify --recompute --sample N`.
package kernelpath

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strings"

	"golang.org/x/sys/cpu"
)

// Env is the environment variable that caps the kernel path.
const Env = "REPRO_KERNELS"

// Level is a kernel path, in increasing order of the instructions it uses.
type Level int

// The kernel paths.
const (
	Portable Level = iota // Go code only
	AVX2                  // AVX2 (and FMA) kernels
	AVX512                // AVX-512 kernels where a family has them, AVX2 elsewhere
)

var names = [...]string{Portable: "portable", AVX2: "avx2", AVX512: "avx512"}

func (l Level) String() string { return names[l] }

// limit is the cap REPRO_KERNELS sets (AVX512: none); limitErr its error.
//
// Read from the environment at start-up, unlike our other settings (the
// style guide's "no init reads the environment"): the kernel choice is
// fixed for the process before any kernel runs, like GODEBUG, and must be
// in force the same way in the CLI, in `exec-cell` on a Slurm node and in
// a test binary (whose goldens kernelpathtest.RerunOnEveryPath re-runs under each cap),
// none of which shares a configuration path. The CLI reports a bad value
// (Check) before any work.
var limit, limitErr = parse(os.Getenv(Env))

func parse(v string) (Level, error) {
	switch v {
	case "", "auto":
		return AVX512, nil
	case "portable":
		return Portable, nil
	case "avx2":
		return AVX2, nil
	case "avx512":
		return AVX512, nil
	}
	// A bad value runs the portable code (never a path nobody asked for);
	// Check reports it before any work.
	return Portable, fmt.Errorf("%s=%q: want portable, avx2, avx512 or auto (unset: the best the CPU has)", Env, v)
}

// Check returns the error of a bad REPRO_KERNELS value.
func Check() error { return limitErr }

// Allow reports whether kernels of level l may run: each family's switch
// is `the CPU has the instructions && kernelpath.Allow(level)`. A build
// with the purego tag allows only the portable code.
func Allow(l Level) bool { return l <= min(limit, built) }

// Path is the kernel path this process runs: the best level the CPU has
// (as x/sys/cpu sees it, which also checks that the OS saves the vector
// state), capped by REPRO_KERNELS and by the build (purego: portable).
func Path() Level {
	best := Portable
	switch {
	case cpu.X86.HasAVX2 && cpu.X86.HasAVX512F:
		best = AVX512
	case cpu.X86.HasAVX2:
		best = AVX2
	}
	return min(best, limit, built)
}

// CPUModel is the host CPU's model name (Linux /proc/cpuinfo), or the
// architecture where that is not known.
func CPUModel() string { return cpuModel }

var cpuModel = readModel()

func readModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), ":")
			if ok && strings.TrimSpace(k) == "model name" {
				if v = strings.Join(strings.Fields(v), " "); v != "" {
					return v
				}
			}
		}
	}
	return runtime.GOARCH
}
