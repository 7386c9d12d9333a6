package stages

import (
	"context"
	"fmt"
	"strconv"

	"repro/artifacts"
	"repro/internal/dataset"
	"repro/pipeline"
)

// V1Params are the params of a v1 cell (the frozen feature front-end).
type V1Params struct {
	Dataset string `toml:"dataset"` // "cifar10" or "cifar100"
	Filters int    `toml:"filters"`
	Patch   int    `toml:"patch"`
	Stride  int    `toml:"stride"`
	Seed    int64  `toml:"seed"`
	// ThresholdImages and Float16 apply to CIFAR-10 only: the CIFAR-100
	// variant always thresholds each map at its own spatial mean and keeps
	// float32. See dataset.V1Config for the float16
	// decision.
	ThresholdImages int  `toml:"threshold_images"`
	Float16         bool `toml:"float16"`
}

// SettingV1Workers is the host-local setting giving the v1 stage's
// goroutine count (default 1); the features are bit-identical for every
// value, so it is not part of the key.
const SettingV1Workers = "v1.workers"

// V1 computes the frozen V1-like features (dataset.V1Prepare) from input
// "prepare" (train_raw, train_y, test_raw, test_y of cifar10 or cifar100)
// and writes the same outputs as prepare (doc.go): 1,024 standardised
// features per image on a fake 32x32 sheet, the labels, the raw RGB planes
// and the feature statistics.
//
// Version history:
//
//   - 1: gonum's Sgemm.
//   - 2: our own GEMM (no FMA, ascending k), identical on every CPU.
//   - 3: float32 pooling sums.
var V1 = &pipeline.Stage{
	Name:    "v1",
	Version: 3,
	NewParams: func() any {
		c := dataset.V1CIFAR10()
		return &V1Params{Dataset: "cifar10", Filters: c.Filters, Patch: c.Patch, Stride: c.Stride,
			Seed: c.Seed, ThresholdImages: c.ThresholdImages, Float16: c.Float16}
	},
	Run: runV1,
}

func runV1(ctx context.Context, rc *pipeline.RunContext) error {
	p := rc.Params.(*V1Params)
	var cfg dataset.V1Config
	switch p.Dataset {
	case "cifar10":
		cfg = dataset.V1CIFAR10()
		cfg.ThresholdImages, cfg.Float16 = p.ThresholdImages, p.Float16
		if cfg.ThresholdImages <= 0 {
			return fmt.Errorf("v1: threshold_images = %d, want > 0 for cifar10", p.ThresholdImages)
		}
	case "cifar100":
		cfg = dataset.V1CIFAR100()
	default:
		return fmt.Errorf("v1: unknown data set %q (want cifar10 or cifar100)", p.Dataset)
	}
	cfg.Filters, cfg.Patch, cfg.Stride, cfg.Seed = p.Filters, p.Patch, p.Stride, p.Seed
	cfg.Workers = 1
	if w := rc.Settings[SettingV1Workers]; w != "" {
		n, err := strconv.Atoi(w)
		if err != nil || n < 1 {
			return fmt.Errorf("v1: setting %s = %q is not a positive integer", SettingV1Workers, w)
		}
		cfg.Workers = n
	}
	info, _, err := readInt32s(ctx, rc, "prepare", "info", 1)
	if err != nil {
		return err
	}
	if len(info) != 3 {
		return fmt.Errorf("input prepare info: %d values, want 3", len(info))
	}
	train, err := readRaw(ctx, rc, "train", info)
	if err != nil {
		return err
	}
	test, err := readRaw(ctx, rc, "test", info)
	if err != nil {
		return err
	}
	pr, err := dataset.V1Prepare(ctx, train, test, cfg)
	if err != nil {
		return err
	}
	putPrepared(rc, pr)
	fmt.Fprintf(rc.Log, "v1 %s: %d filters, %d features, %d training and %d test images, float16 %v\n", p.Dataset, cfg.Filters, pr.D, train.N, test.N, cfg.Float16)
	return nil
}

// readRaw rebuilds a dataset.Raw of RGB images from prepare's <set>_raw
// and <set>_y outputs.
func readRaw(ctx context.Context, rc *pipeline.RunContext, set string, info []int32) (*dataset.Raw, error) {
	b, err := rc.Input("prepare").Read(ctx, set+"_raw")
	if err != nil {
		return nil, fmt.Errorf("read input prepare %s_raw: %w", set, err)
	}
	px, shape, err := artifacts.Uint8s(b)
	if err != nil {
		return nil, fmt.Errorf("input prepare %s_raw: %w", set, err)
	}
	h, w := int(info[0]), int(info[1])
	if len(shape) != 2 || shape[1] != 3*h*w {
		return nil, fmt.Errorf("input prepare %s_raw: shape %v, want [N %d] (RGB planes of %dx%d)", set, shape, 3*h*w, h, w)
	}
	y, _, err := readInt32s(ctx, rc, "prepare", set+"_y", 1)
	if err != nil {
		return nil, err
	}
	if len(y) != shape[0] {
		return nil, fmt.Errorf("input prepare: %d %s labels for %d images", len(y), set, shape[0])
	}
	return &dataset.Raw{Pixels: px, Labels: y, N: shape[0], R: shape[1], Height: h, Width: w, Channels: 3, Classes: int(info[2])}, nil
}
