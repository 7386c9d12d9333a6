package stages

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"repro/artifacts"
	"repro/internal/dataset"
	"repro/pipeline"
)

// update rewrites testdata/*.golden. It is the stages package's one
// -update flag: other test files use it rather than defining their own.
var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// outputs is one cell's outputs by name.
type outputs = map[string][]byte

// givenParams name the upstream cell a given stage's cell stands for.
type givenParams struct {
	Name string `toml:"name"`
}

// execStage runs one cell of st as repro run does (runCells). Its inputs
// are the outputs of upstream cells named by the input names, which write
// the given bytes. It returns the cell's outputs in the order of its
// manifest, or the cell's failure.
func execStage(t testing.TB, st *pipeline.Stage, params any, inputs map[string]outputs, settings map[string]string) (outputs, []string, error) {
	t.Helper()
	given := &pipeline.Stage{Name: "given", Version: 1, NewParams: func() any { return &givenParams{} },
		Run: func(_ context.Context, rc *pipeline.RunContext) error {
			outs := inputs[rc.Params.(*givenParams).Name]
			for _, name := range slices.Sorted(maps.Keys(outs)) {
				rc.Put(name, outs[name])
			}
			return nil
		}}
	c := &pipeline.Cell{ID: st.Name + "/test", Stage: st, Params: params}
	cells := []*pipeline.Cell{c}
	for _, name := range slices.Sorted(maps.Keys(inputs)) {
		in := &pipeline.Cell{ID: name, Stage: given, Params: &givenParams{Name: name}}
		c.Inputs = append(c.Inputs, pipeline.CellInput{Name: name, Cell: in})
		cells = append(cells, in)
	}
	store, err := runCells(t, settings, cells...)
	if err != nil {
		return nil, nil, err
	}
	out, order := cellOutputs(t, store, c)
	return out, order, nil
}

// runGraph runs the graph of cells as repro run does: pipeline.Run with opt
// on a new store, through the local executor with opt's settings (wrapped
// by wrap, if not nil), so params go through each cell's spec and inputs
// through the store.
func runGraph(tb testing.TB, cells []*pipeline.Cell, opt pipeline.RunOptions, wrap func(*pipeline.LocalExecutor) pipeline.Executor) (*artifacts.Store, *pipeline.RunReport) {
	tb.Helper()
	g, err := pipeline.NewGraph(cells)
	if err != nil {
		tb.Fatal(err)
	}
	store, err := artifacts.Open(tb.TempDir(), artifacts.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	local := &pipeline.LocalExecutor{Store: store, Stages: g.Stages, Settings: opt.Settings}
	opt.Executor = local
	if wrap != nil {
		opt.Executor = wrap(local)
	}
	rep, err := pipeline.Run(context.Background(), store, g, opt)
	if err != nil {
		tb.Fatal(err)
	}
	return store, rep
}

// runCells runs the graph of cells (runGraph) under profile "test" with
// settings, and returns the store and the run's first failure.
func runCells(tb testing.TB, settings map[string]string, cells ...*pipeline.Cell) (*artifacts.Store, error) {
	tb.Helper()
	store, rep := runGraph(tb, cells, pipeline.RunOptions{Profile: "test", Settings: settings}, nil)
	if len(rep.Failures) > 0 {
		return store, rep.Failures[0].Err
	}
	return store, nil
}

// cellOutputs reads the outputs of c, run by runCells, from store in the
// order of its manifest.
func cellOutputs(t testing.TB, store *artifacts.Store, c *pipeline.Cell) (outputs, []string) {
	t.Helper()
	k, err := store.GetRef("test", c.ID)
	if err != nil {
		t.Fatal(err)
	}
	m, err := store.Lookup(k)
	if err != nil {
		t.Fatal(err)
	}
	out := outputs{}
	var order []string
	for _, o := range m.Outputs {
		if out[o.Name], err = store.Get(o.Digest); err != nil {
			t.Fatal(err)
		}
		order = append(order, o.Name)
	}
	return out, order
}

// runStage runs one cell of st (execStage) and fails the test on error.
func runStage(t *testing.T, st *pipeline.Stage, params any, inputs map[string]outputs, settings map[string]string) (outputs, []string) {
	t.Helper()
	out, order, err := execStage(t, st, params, inputs, settings)
	if err != nil {
		t.Fatal(err)
	}
	return out, order
}

// digestLines renders outputs as "name sha256" lines in output order.
func digestLines(out outputs, order []string) string {
	var b strings.Builder
	for _, name := range order {
		s := sha256.Sum256(out[name])
		fmt.Fprintf(&b, "%s %s\n", name, hex.EncodeToString(s[:]))
	}
	return b.String()
}

// checkGolden compares got with testdata/<name>.golden, rewriting it under
// -update. A mismatch means an output changed: bump the stage's Version and
// rerun with -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s: output digests changed (bump the stage Version, then go test -update)\n%s", path, lineDiff(string(want), got))
	}
}

// lineDiff lists lines only in want (-) or only in got (+).
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	in := func(s string, set []string) bool {
		for _, x := range set {
			if x == s {
				return true
			}
		}
		return false
	}
	var b strings.Builder
	for _, l := range w {
		if !in(l, g) {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range g {
		if !in(l, w) {
			b.WriteString("+ " + l + "\n")
		}
	}
	return b.String()
}

func idxFile(dims []int, payload []byte) []byte {
	b := []byte{0, 0, 0x08, byte(len(dims))}
	for _, d := range dims {
		b = binary.BigEndian.AppendUint32(b, uint32(d))
	}
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(append(b, payload...))
	w.Close()
	return buf.Bytes()
}

// tinyMNIST is a download/mnist output set with 40 training and 12 test
// images (labels i%10 and 3i%10); pixel 0 of every image is 0, so one
// column is constant.
func tinyMNIST() outputs {
	set := func(n, mul int) (im, lb []byte) {
		im = make([]byte, n*784)
		lb = make([]byte, n)
		for i := range n {
			lb[i] = byte(i * mul % 10)
			for j := 1; j < 784; j++ {
				im[i*784+j] = byte((i*31 + j*7 + (j%28)*(i%5)) % 256)
			}
		}
		return im, lb
	}
	trI, trL := set(40, 1)
	teI, teL := set(12, 3)
	return outputs{
		dataset.MNISTTrainImages: idxFile([]int{40, 28, 28}, trI),
		dataset.MNISTTrainLabels: idxFile([]int{40}, trL),
		dataset.MNISTTestImages:  idxFile([]int{12, 28, 28}, teI),
		dataset.MNISTTestLabels:  idxFile([]int{12}, teL),
	}
}

func cifarPixels(rec []byte, i int) {
	for j := range rec {
		rec[j] = byte((i*13 + j*5 + (j/32)*(i%7)) % 256)
	}
}

// tinyCIFAR10 is a download/cifar10 output set: five batches of 8 records
// (labels i%10) and a test batch of 10.
func tinyCIFAR10() outputs {
	out := outputs{"batches.meta.txt": []byte("airplane\n")}
	rec := func(i, label int) []byte {
		r := make([]byte, 3073)
		r[0] = byte(label)
		cifarPixels(r[1:], i)
		return r
	}
	for b, name := range dataset.CIFAR10TrainFiles {
		var f []byte
		for k := range 8 {
			i := b*8 + k
			f = append(f, rec(i, i%10)...)
		}
		out[name] = f
	}
	var f []byte
	for i := range 10 {
		f = append(f, rec(100+i, 9-i)...)
	}
	out[dataset.CIFAR10TestFile] = f
	return out
}

// tinyCIFAR100 is a download/cifar100 output set in the release's format:
// 30 training records (fine label 7i%100) and 10 test records.
func tinyCIFAR100() outputs {
	rec := func(i, fine int) []byte {
		r := make([]byte, 3074)
		r[0], r[1] = byte(fine/5), byte(fine)
		cifarPixels(r[2:], i)
		return r
	}
	var tr, te []byte
	for i := range 30 {
		tr = append(tr, rec(i, 7*i%100)...)
	}
	for i := range 10 {
		te = append(te, rec(50+i, 11*i%100)...)
	}
	return outputs{dataset.CIFAR100TrainFile: tr, dataset.CIFAR100TestFile: te}
}

var tinyDownloads = map[string]func() outputs{"mnist": tinyMNIST, "cifar10": tinyCIFAR10, "cifar100": tinyCIFAR100}

func prepareTiny(t *testing.T, ds string) (outputs, []string) {
	t.Helper()
	return runStage(t, Prepare, &PrepareParams{Dataset: ds}, map[string]outputs{"download": tinyDownloads[ds]()}, nil)
}

func TestPrepareGolden(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		ds            string
		n, m, d, r    int
		h, w, classes int32
	}{
		{"mnist", 40, 12, 784, 784, 28, 28, 10},
		{"cifar10", 40, 10, 1024, 3072, 32, 32, 10},
		{"cifar100", 30, 10, 1024, 3072, 32, 32, 100},
	} {
		t.Run(c.ds, func(t *testing.T) {
			out, order := prepareTiny(t, c.ds)
			want := []string{"train_x", "train_y", "test_x", "test_y", "train_raw", "test_raw", "mean", "std", "info"}
			if strings.Join(order, " ") != strings.Join(want, " ") {
				t.Fatalf("outputs %v, want %v", order, want)
			}
			x, shape, err := artifacts.Float32s(out["train_x"])
			if err != nil || fmt.Sprint(shape) != fmt.Sprint([]int{c.n, c.d}) {
				t.Fatalf("train_x shape %v, err %v", shape, err)
			}
			if _, shape, _ := artifacts.Float32s(out["test_x"]); fmt.Sprint(shape) != fmt.Sprint([]int{c.m, c.d}) {
				t.Errorf("test_x shape %v", shape)
			}
			if _, shape, _ := artifacts.Uint8s(out["train_raw"]); fmt.Sprint(shape) != fmt.Sprint([]int{c.n, c.r}) {
				t.Errorf("train_raw shape %v", shape)
			}
			info, _, _ := artifacts.Int32s(out["info"])
			if fmt.Sprint(info) != fmt.Sprint([]int32{c.h, c.w, c.classes}) {
				t.Errorf("info %v", info)
			}
			// Standardised: column 5 has mean 0 over the training set.
			s := 0.0
			for i := range c.n {
				s += float64(x[i*c.d+5])
			}
			if s/float64(c.n) > 1e-5 || s/float64(c.n) < -1e-5 {
				t.Errorf("column 5 mean %g after standardisation", s/float64(c.n))
			}
			checkGolden(t, "prepare-"+c.ds, digestLines(out, order))
		})
	}
}

func TestPrepareErrors(t *testing.T) {
	t.Parallel()
	dl := tinyMNIST()
	dl[dataset.MNISTTestLabels] = dl[dataset.MNISTTestLabels][:20]
	_, _, err := execStage(t, Prepare, &PrepareParams{Dataset: "mnist"}, map[string]outputs{"download": dl}, nil)
	if err == nil || !strings.Contains(err.Error(), dataset.MNISTTestLabels) {
		t.Errorf("truncated label file: err = %v, want one naming %s", err, dataset.MNISTTestLabels)
	}
	_, _, err = execStage(t, Prepare, &PrepareParams{Dataset: "svhn"}, map[string]outputs{"download": tinyMNIST()}, nil)
	if err == nil {
		t.Error("unknown data set: no error")
	}
}
