package backprop

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repro/core"
	"repro/internal/kernelpath/kernelpathtest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// TestGolden pins the digest of tiny deterministic runs of every method
// (final parameters and Result) in testdata/train.golden; rewrite it with
// go test -run Golden -update after an intended change of numbers.
func TestGolden(t *testing.T) {
	train, eval := blobs(240, 12, 4, 21), blobs(80, 12, 4, 22)
	tasks := pairTasks(4)
	cells := []goldenCell{
		{"er-mse", func(c *Config) {}},
		{"none-static", func(c *Config) { c.Method, c.K = MethodNone, 0 }},
		{"derpp-ce", func(c *Config) { c.Method, c.Loss, c.Alpha, c.Beta = MethodDERPP, "ce", 0.03, 1 }},
		{"erace", func(c *Config) { c.Method, c.Loss = MethodERACE, "ce" }},
		{"agem-mse", func(c *Config) { c.Method = MethodAGEM }},
		{"local-interleaved", func(c *Config) { c.Method, c.KWTA, c.Batch, c.ReplayBatch = MethodLocal, 0.1, 16, 16 }},
		{"local-isolated-rotation", func(c *Config) {
			c.Method, c.KWTA, c.Batch, c.ReplayBatch, c.Isolate, c.Rotate = MethodLocal, 0.1, 16, 16, true, true
		}},
		{"er-conn30-kwta10", func(c *Config) { c.Conn, c.KWTA = 0.3, 0.1 }},
	}
	// The same methods on inputs with a per-pixel background, which take
	// the input layer's offset path.
	bgTrain, bgEval := backgroundSet(240, 6, 6, 4, 21), backgroundSet(80, 6, 6, 4, 22)
	bgCells := []goldenCell{
		{"background/er-mse", func(c *Config) {}},
		{"background/derpp-ce", func(c *Config) { c.Method, c.Loss, c.Alpha, c.Beta = MethodDERPP, "ce", 0.03, 1 }},
		{"background/agem-mse", func(c *Config) { c.Method = MethodAGEM }},
		{"background/local-isolated-rotation", func(c *Config) {
			c.Method, c.KWTA, c.Batch, c.ReplayBatch, c.Isolate, c.Rotate = MethodLocal, 0.1, 16, 16, true, true
		}},
	}
	got := goldenDigests(t, cells, train, eval, tasks) + goldenDigests(t, bgCells, bgTrain, bgEval, tasks)
	// The portable kernels give the same bits as the vector ones:
	// TestGoldenOnEveryKernelPath reruns this test under each
	// REPRO_KERNELS cap, and go test -tags purego without the assembly.
	path := filepath.Join("testdata", "train.golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("digests differ from %s (rerun with -update if intended):\ngot:\n%swant:\n%s", path, got, want)
	}
}

type goldenCell struct {
	name string
	edit func(*Config)
}

func goldenDigests(t *testing.T, cells []goldenCell, train, eval *core.Dataset, tasks []core.Task) string {
	var b strings.Builder
	for _, cell := range cells {
		cfg := DefaultConfig()
		cfg.Hidden, cfg.K, cfg.Epochs, cfg.Batch, cfg.ReplayBatch = []int{20, 10}, 30, 2, 32, 32
		cell.edit(&cfg)
		tk := tasks
		if cfg.Method == MethodNone {
			tk = []core.Task{{0, 1, 2, 3}}
		}
		r := newRunner(cfg, train, eval, tk, 5, core.Hooks{})
		if err := r.run(); err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		for _, v := range r.net.Params {
			binary.Write(h, binary.LittleEndian, math.Float32bits(v))
		}
		js, err := json.Marshal(r.res)
		if err != nil {
			t.Fatal(err)
		}
		h.Write(js)
		fmt.Fprintf(&b, "%s %x final=%.4f\n", cell.name, h.Sum(nil), r.res.FinalAcc)
	}
	return b.String()
}

// TestGoldenOnEveryKernelPath runs TestGolden again with the vector kernels
// capped by REPRO_KERNELS (portable; avx2 on an AVX-512 host), the switch
// a record's recompute uses.
func TestGoldenOnEveryKernelPath(t *testing.T) {
	kernelpathtest.RerunOnEveryPath(t, "^TestGolden$")
}
