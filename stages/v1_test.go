package stages

import (
	"testing"

	"repro/artifacts"
)

func TestV1Golden(t *testing.T) {
	t.Parallel()
	for _, ds := range []string{"cifar10", "cifar100"} {
		t.Run(ds, func(t *testing.T) {
			prep, _ := prepareTiny(t, ds)
			p := V1.NewParams().(*V1Params)
			p.Dataset, p.Filters, p.ThresholdImages = ds, 8, 10
			var first string
			for _, w := range []string{"1", "3"} {
				out, order := runStage(t, V1, p, map[string]outputs{"prepare": prep}, map[string]string{SettingV1Workers: w})
				if _, shape, err := artifacts.Float32s(out["train_x"]); err != nil || shape[1] != 32 {
					t.Fatalf("train_x shape %v, err %v", shape, err)
				}
				got := digestLines(out, order)
				if first == "" {
					first = got
					checkGolden(t, "v1-"+ds, got)
				} else if got != first {
					t.Errorf("%s workers changed the outputs:\n%s", w, lineDiff(first, got))
				}
			}
		})
	}
}

func TestV1Errors(t *testing.T) {
	t.Parallel()
	prep, _ := prepareTiny(t, "cifar10")
	mn, _ := prepareTiny(t, "mnist")
	for _, c := range []struct {
		name     string
		mutate   func(*V1Params)
		prep     outputs
		settings map[string]string
	}{
		{"mnist input", func(*V1Params) {}, mn, nil},
		{"bad dataset", func(p *V1Params) { p.Dataset = "svhn" }, prep, nil},
		{"no threshold", func(p *V1Params) { p.ThresholdImages = 0 }, prep, nil},
		{"bad workers", func(*V1Params) {}, prep, map[string]string{SettingV1Workers: "zero"}},
		{"patch too big", func(p *V1Params) { p.Patch = 40 }, prep, nil},
	} {
		p := V1.NewParams().(*V1Params)
		p.Filters = 4
		c.mutate(p)
		if _, _, err := execStage(t, V1, p, map[string]outputs{"prepare": c.prep}, c.settings); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}
