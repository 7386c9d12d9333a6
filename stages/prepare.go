package stages

import (
	"context"
	"fmt"

	"repro/artifacts"
	"repro/internal/dataset"
	"repro/pipeline"
)

// PrepareParams are the params of a prepare cell.
type PrepareParams struct {
	Dataset string `toml:"dataset"` // "mnist", "cifar10" or "cifar100"
}

// Prepare decodes a data set's release files (input "download") and writes
// the standardised inputs, labels, raw intensities and statistics listed in
// doc.go. MNIST: pixels /255; CIFAR: luminance 0.299R + 0.587G + 0.114B on
// [0, 1]; then per-dimension standardisation with the mean and population
// s.d. of the whole official training set (s.d. < 1e-6 becomes 1), applied
// to both sets. CIFAR-100 uses the fine labels.
//
// Version history:
//
//   - 1: the standardisation above.
var Prepare = &pipeline.Stage{
	Name:      "prepare",
	Version:   1,
	NewParams: func() any { return &PrepareParams{Dataset: "mnist"} },
	Run:       runPrepare,
}

func runPrepare(ctx context.Context, rc *pipeline.RunContext) error {
	p := rc.Params.(*PrepareParams)
	train, test, err := decodeDownload(ctx, rc, p.Dataset)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	pr := dataset.Prepare(train, test)
	putPrepared(rc, pr)
	fmt.Fprintf(rc.Log, "%s: %d training and %d test samples, D = %d, %d classes\n", p.Dataset, len(pr.TrainY), len(pr.TestY), pr.D, pr.Classes)
	return nil
}

// decodeDownload reads every output of input "download" and decodes it as
// ds's release.
func decodeDownload(ctx context.Context, rc *pipeline.RunContext, ds string) (train, test *dataset.Raw, err error) {
	in := rc.Input("download")
	files := map[string][]byte{}
	for _, name := range in.Outputs() {
		b, err := in.Read(ctx, name)
		if err != nil {
			return nil, nil, fmt.Errorf("read input download %s: %w", name, err)
		}
		files[name] = b
	}
	return decodeRelease(files, ds)
}

// decodeRelease decodes ds's release files, keyed by their output names.
func decodeRelease(files map[string][]byte, ds string) (train, test *dataset.Raw, err error) {
	switch ds {
	case "mnist":
		return dataset.DecodeMNISTFiles(files)
	case "cifar10":
		return dataset.DecodeCIFAR10Files(files)
	case "cifar100":
		return dataset.DecodeCIFAR100Files(files)
	}
	return nil, nil, fmt.Errorf("unknown data set %q (want mnist, cifar10 or cifar100)", ds)
}

// putPrepared writes the prepare contract of doc.go (shared with v1).
func putPrepared(rc *pipeline.RunContext, p *dataset.Prepared) {
	n, m := len(p.TrainY), len(p.TestY)
	rc.Put("train_x", artifacts.EncodeFloat32(p.TrainX, n, p.D))
	rc.Put("train_y", artifacts.EncodeInt32(p.TrainY, n))
	rc.Put("test_x", artifacts.EncodeFloat32(p.TestX, m, p.D))
	rc.Put("test_y", artifacts.EncodeInt32(p.TestY, m))
	rc.Put("train_raw", artifacts.EncodeUint8(p.Train.Pixels, n, p.Train.R))
	rc.Put("test_raw", artifacts.EncodeUint8(p.Test.Pixels, m, p.Test.R))
	rc.Put("mean", artifacts.EncodeFloat32(p.Mean, p.D))
	rc.Put("std", artifacts.EncodeFloat32(p.Std, p.D))
	rc.Put("info", artifacts.EncodeInt32([]int32{int32(p.Height), int32(p.Width), int32(p.Classes)}, 3))
}

// readInt32s reads an int32 tensor output of an input and checks its rank.
func readInt32s(ctx context.Context, rc *pipeline.RunContext, input, output string, rank int) ([]int32, []int, error) {
	b, err := rc.Input(input).Read(ctx, output)
	if err != nil {
		return nil, nil, fmt.Errorf("read input %s %s: %w", input, output, err)
	}
	v, shape, err := artifacts.Int32s(b)
	if err != nil {
		return nil, nil, fmt.Errorf("input %s %s: %w", input, output, err)
	}
	if len(shape) != rank {
		return nil, nil, fmt.Errorf("input %s %s: shape %v, want rank %d", input, output, shape, rank)
	}
	return v, shape, nil
}
