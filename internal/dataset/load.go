package dataset

import (
	"context"
	"fmt"

	"repro/core"
)

// Load reads and prepares a data set from dir (a folder like
// /work/shared/data holding the release files, see LoadMNIST): "mnist",
// "cifar10" (luminance), "cifar100" (luminance, fine labels), or "cifar10f"
// / "cifar100f" (the V1 features of V1CIFAR10 / V1CIFAR100, computed with
// workers goroutines). It is the convenience behind the stages for callers
// that want arrays, not artifacts.
func Load(ctx context.Context, dir, name string, workers int) (*Prepared, error) {
	var train, test *Raw
	var err error
	switch name {
	case "mnist":
		train, test, err = LoadMNIST(dir)
	case "cifar10", "cifar10f":
		train, test, err = LoadCIFAR10(dir)
	case "cifar100", "cifar100f":
		train, test, err = LoadCIFAR100(dir)
	default:
		return nil, fmt.Errorf("unknown data set %q (want mnist, cifar10, cifar100, cifar10f or cifar100f)", name)
	}
	if err != nil {
		return nil, err
	}
	switch name {
	case "cifar10f":
		cfg := V1CIFAR10()
		cfg.Workers = workers
		return V1Prepare(ctx, train, test, cfg)
	case "cifar100f":
		cfg := V1CIFAR100()
		cfg.Workers = workers
		return V1Prepare(ctx, train, test, cfg)
	}
	return Prepare(train, test), nil
}

// LoadHeldout is Load followed by Prepared.Heldout(splitSeed): the training
// stream and the held-out tenth of the held-out protocol.
func LoadHeldout(ctx context.Context, dir, name string, splitSeed int64, workers int) (stream, eval *core.Dataset, err error) {
	p, err := Load(ctx, dir, name, workers)
	if err != nil {
		return nil, nil, err
	}
	stream, eval = p.Heldout(splitSeed)
	return stream, eval, nil
}
