package stages

import (
	"context"
	"fmt"

	"repro/core"
	"repro/internal/dataset"
)

// HeldoutSets is, for callers that want arrays rather than cells (long
// tests, benchmarks), what a train cell of the held-out sequential protocol
// sees with stream_stride = eval_stride = 1, computed by the stages' own
// functions in process: the download stage's fetch from the mirror dir
// (checksums verified), the prepare stage's decoding and standardisation
// (for "cifar10f" the v1 stage's front-end at dataset.V1CIFAR10's
// configuration, workers goroutines), the split stage's stratified tenth for
// splitSeed and the streams stage's orders. So stream holds the tasks'
// samples task after task (ascending within a task) and eval the held-out
// tenth grouped by class, shuffled within a class.
func HeldoutSets(ctx context.Context, dir, ds string, splitSeed int64, workers int) (stream, eval *core.Dataset, tasks []core.Task, err error) {
	base := ds
	if ds == "cifar10f" {
		base = "cifar10"
	}
	rel, err := dataset.ReleaseFor(base)
	if err != nil {
		return nil, nil, nil, err
	}
	files, err := (&dataset.Fetcher{Mirror: dir}).Fetch(ctx, rel)
	if err != nil {
		return nil, nil, nil, err
	}
	train, test, err := decodeRelease(files, base)
	if err != nil {
		return nil, nil, nil, err
	}
	var p *dataset.Prepared
	if ds == "cifar10f" {
		cfg := dataset.V1CIFAR10()
		cfg.Workers = workers
		if p, err = dataset.V1Prepare(ctx, train, test, cfg); err != nil {
			return nil, nil, nil, err
		}
	} else {
		p = dataset.Prepare(train, test)
	}
	if tasks, err = dataset.Tasks(p.Classes, dataset.Sequential); err != nil {
		return nil, nil, nil, err
	}
	if splitSeed < 0 || splitSeed > 1<<32-1 {
		return nil, nil, nil, fmt.Errorf("split seed %d is outside [0, 2^32)", splitSeed)
	}
	held, rest := dataset.StratifiedHoldout(p.TrainY, dataset.HeldoutFrac, splitSeed)
	per := flattenTasks(p.TrainY, rest, tasks)
	idx := make([]int, len(per.idx))
	for i, j := range per.idx {
		idx[i] = int(j)
	}
	all := &core.Dataset{X: p.TrainX, Y: p.TrainY, N: len(p.TrainY), D: p.D, Classes: p.Classes, Height: p.Height, Width: p.Width}
	return all.Subset(idx), all.Subset(held), tasks, nil
}
