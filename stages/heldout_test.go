package stages

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"repro/core"
	"repro/internal/dataset"
	"repro/pipeline"
)

// dataChain is the data cells of a release as the experiments wire them:
// download, prepare and, per split seed, the split and the held-out
// sequential streams.
type dataChain struct {
	download, prepare *pipeline.Cell
	split, streams    []*pipeline.Cell
}

func newDataChain(release string, splitSeeds ...int64) *dataChain {
	dl := &pipeline.Cell{ID: "download/" + release, Stage: Download, Params: &DownloadParams{Dataset: release}}
	c := &dataChain{download: dl, prepare: &pipeline.Cell{ID: "prepare/" + release, Stage: Prepare,
		Params: &PrepareParams{Dataset: release}, Inputs: []pipeline.CellInput{{Name: "download", Cell: dl}}}}
	for _, seed := range splitSeeds {
		sp := Split.NewParams().(*SplitParams)
		sp.Dataset, sp.Seed = release, seed
		split := &pipeline.Cell{ID: fmt.Sprintf("split/%s-%d", release, seed), Stage: Split, Params: sp,
			Inputs: []pipeline.CellInput{{Name: "prepare", Cell: c.prepare}}}
		c.split = append(c.split, split)
		c.streams = append(c.streams, &pipeline.Cell{ID: fmt.Sprintf("streams/%s-%d", release, seed), Stage: Streams,
			Params: &StreamsParams{Dataset: release, Protocol: dataset.Sequential, Eval: "heldout"},
			Inputs: []pipeline.CellInput{{Name: "prepare", Cell: c.prepare}, {Name: "split", Cell: split}}})
	}
	return c
}

// cells lists the chain's cells.
func (c *dataChain) cells() []*pipeline.Cell {
	return append(append([]*pipeline.Cell{c.download, c.prepare}, c.split...), c.streams...)
}

// heldoutSets is what a train cell of the held-out sequential protocol with
// stream_stride = eval_stride = 1 sees, computed as repro run computes it
// (runCells, the data releases read from the mirror dir): the download,
// prepare, split and streams cells of data set ds, wired as the experiments
// wire a train cell's inputs ("cifar10f": CIFAR-10 through the v1 stage, on
// workers goroutines), and the train stage's own loader on top. So stream
// holds the tasks' samples task after task (ascending within a task) and
// eval the held-out tenth grouped by class, shuffled within a class.
func heldoutSets(t testing.TB, dir, ds string, splitSeed int64, workers int) (stream, eval *core.Dataset, tasks []core.Task, err error) {
	t.Helper()
	release := ds
	if ds == "cifar10f" {
		release = "cifar10"
	}
	chain := newDataChain(release, splitSeed)
	cells := chain.cells()
	data := chain.prepare
	if ds == "cifar10f" {
		p := V1.NewParams().(*V1Params)
		p.Dataset = release
		data = &pipeline.Cell{ID: "v1/" + release, Stage: V1, Params: p, Inputs: []pipeline.CellInput{{Name: "prepare", Cell: chain.prepare}}}
		cells = append(cells, data)
	}
	load := &pipeline.Stage{Name: "load", Version: 1, NewParams: func() any { return &struct{}{} },
		Run: func(ctx context.Context, rc *pipeline.RunContext) error {
			var err error
			stream, eval, tasks, err = loadStream(ctx, rc, &TrainParams{StreamStride: 1, EvalStride: 1})
			return err
		}}
	loader := &pipeline.Cell{ID: "load", Stage: load, Params: &struct{}{},
		Inputs: []pipeline.CellInput{{Name: "data", Cell: data}, {Name: "stream", Cell: chain.streams[0]}}}
	cells = append(cells, loader)
	settings := map[string]string{SettingDataMirror: dir, SettingV1Workers: strconv.Itoa(workers)}
	if _, err := runCells(t, settings, cells...); err != nil {
		return nil, nil, nil, err
	}
	return stream, eval, tasks, nil
}

// TestHeldoutSetsMNIST: the held-out sets a train cell sees have the
// split's sizes, the stream is the tasks' samples task after task and the
// evaluation set is the held-out tenth grouped by class ascending, as the
// streams stage orders them.
func TestHeldoutSetsMNIST(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes and standardises all of MNIST")
	}
	dir := mirrorDir(t)
	stream, eval, tasks, err := heldoutSets(t, dir, "mnist", dataset.SplitSeed1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if stream.N != 54001 || eval.N != 5999 || stream.D != 784 || stream.Height != 28 || eval.Classes != 10 {
		t.Fatalf("stream %d, eval %d samples, D %d, height %d, %d classes", stream.N, eval.N, stream.D, stream.Height, eval.Classes)
	}
	if len(tasks) != 5 {
		t.Fatalf("%d tasks, want 5", len(tasks))
	}
	taskOf := map[int32]int{}
	for ti, task := range tasks {
		for _, c := range task {
			taskOf[int32(c)] = ti
		}
	}
	if !slices.IsSortedFunc(stream.Y, func(a, b int32) int { return taskOf[a] - taskOf[b] }) {
		t.Error("stream is not grouped task after task")
	}
	if !slices.IsSorted(eval.Y) {
		t.Error("evaluation set is not grouped by class ascending")
	}
	if _, _, _, err := heldoutSets(t, dir, "svhn", dataset.SplitSeed1, 1); err == nil {
		t.Error("unknown data set: no error")
	}
}
