package stages

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"repro/core"
	"repro/core/backprop"
)

// TestLearnerRegistrations: every registered learner is whole: a unique
// kind, a default config that validates and that its default preset
// resolves to, config accessors that round-trip, bounds on fields its
// config has, valid metric names, a positive cost and a footprint.
func TestLearnerRegistrations(t *testing.T) {
	t.Parallel()
	kinds := map[LearnerKind]bool{}
	for _, l := range Learners() {
		t.Run(string(l.Kind), func(t *testing.T) {
			if l.Kind == "" || kinds[l.Kind] {
				t.Fatalf("kind %q empty or registered twice", l.Kind)
			}
			kinds[l.Kind] = true
			if got, ok := LearnerOf(l.Kind); !ok || got.Kind != l.Kind {
				t.Errorf("LearnerOf(%q) = %v, %v", l.Kind, got.Kind, ok)
			}
			def := l.NewConfig()
			if err := l.Validate(def); err != nil {
				t.Errorf("default config: %v", err)
			}
			preset, err := testPreset(l.Kind, l.DefaultPreset)
			if err != nil {
				t.Fatalf("default preset %q: %v", l.DefaultPreset, err)
			}
			if !reflect.DeepEqual(preset, def) {
				t.Errorf("default preset %q is not NewConfig's config:\n%+v\n%+v", l.DefaultPreset, preset, def)
			}
			var p TrainParams
			if l.Config(&p) != nil {
				t.Error("Config of empty params is not nil")
			}
			l.SetConfig(&p, def)
			if l.Config(&p) != def {
				t.Error("Config does not return what SetConfig installed")
			}
			// The config's field is the kind's TOML table.
			f, ok := reflect.TypeFor[TrainParams]().FieldByNameFunc(func(n string) bool {
				sf, _ := reflect.TypeFor[TrainParams]().FieldByName(n)
				return sf.Tag.Get("toml") == string(l.Kind)
			})
			if !ok || f.Type != reflect.TypeOf(def) {
				t.Errorf("TrainParams has no field %q of type %T", l.Kind, def)
			}
			fields := map[string]bool{}
			ct := reflect.TypeOf(def).Elem()
			for i := range ct.NumField() {
				name, _, _ := strings.Cut(ct.Field(i).Tag.Get("toml"), ",")
				fields[name] = true
			}
			for k, b := range l.Bounds {
				if !fields[k] || b.Max <= 0 || b.Why == "" {
					t.Errorf("bound %s = %+v: not a field of %T, or no maximum or reason", k, b, def)
				}
			}
			for _, m := range l.Metrics {
				if ValidMetric(m) != nil && ValidMetric(m+"[0]") != nil && ValidMetric(m+"[0][0]") != nil {
					t.Errorf("metric %q is no metric name", m)
				}
				if !l.Records(m) || !l.Records(m+"[1]") {
					t.Errorf("Records(%q) = false", m)
				}
			}
			if l.Records("no_such_metric") {
				t.Error("Records of an unknown metric")
			}
			if c := l.Cost(def); !(c.PerEpoch > 0) || c.Epochs < 1 || c.PerEpochFixed < 0 {
				t.Errorf("cost of the default config = %+v", c)
			}
			if fp := l.Footprint(def); len(fp.Hidden) == 0 || fp.Copies < 1 || fp.Batch < 1 {
				t.Errorf("footprint of the default config = %+v", fp)
			}
			for _, b := range l.History {
				if b.Applies == nil || b.Why == "" || b.Version <= Train.Version {
					t.Errorf("history entry %+v", b)
				}
			}
		})
	}
}

// TestTrainHistoryByKind: a learner's history entries apply to its own
// cells only, whatever the other kind's config holds.
func TestTrainHistoryByKind(t *testing.T) {
	t.Parallel()
	lc := core.DefaultLocalConfig()
	lc.KPAdapt = 0.25 // local version 6
	bc := backprop.DefaultConfig()
	for _, tc := range []struct {
		p    *TrainParams
		want int
	}{
		{&TrainParams{Learner: LearnerLocal, Local: &lc, BP: &bc}, 6},
		{&TrainParams{Learner: LearnerBP, Local: &lc, BP: &bc}, 2},
		{&TrainParams{Learner: "other", Local: &lc, BP: &bc}, 1},
	} {
		if got := Train.CellVersion(tc.p); got != tc.want {
			t.Errorf("learner %s: version %d, want %d", tc.p.Learner, got, tc.want)
		}
	}
}

// TestLearnerMetricsRecorded: what a backprop record holds is what its
// registration says: every listed metric is read from a run of the local
// schedule, and every other metric the local learner lists is absent
// (an error) or zero.
func TestLearnerMetricsRecorded(t *testing.T) {
	t.Parallel()
	bp := backprop.DefaultConfig()
	bp.Hidden, bp.Epochs, bp.Batch, bp.ReplayBatch, bp.K = []int{16, 8}, 1, 4, 4, 8
	bp.Method, bp.KWTA, bp.Rotate = backprop.MethodLocal, 0.25, true
	out, _ := runStage(t, Train, &TrainParams{Learner: LearnerBP, Protocol: "sequential", Seed: 1, StreamStride: 1, EvalStride: 1, BP: &bp},
		tinyTrainInputs(t, "sequential"), nil)
	var rec TrainRecord
	if err := json.Unmarshal(out["result"], &rec); err != nil {
		t.Fatal(err)
	}
	l, _ := LearnerOf(LearnerBP)
	local, _ := LearnerOf(LearnerLocal)
	indexed := func(m string) string {
		for _, s := range []string{m, m + "[0]", m + "[0][0]"} {
			if ValidMetric(s) == nil {
				return s
			}
		}
		return m
	}
	for _, m := range local.Metrics {
		v, err := MetricValue(rec.Result, indexed(m))
		switch recorded := slices.Contains(l.Metrics, m); {
		case recorded && err != nil:
			t.Errorf("metric %s: listed for bp, not in its record: %v", m, err)
		case !recorded && err == nil && v != 0:
			t.Errorf("metric %s = %v in a bp record, but not listed for bp", m, v)
		}
	}
}

// TestCloneParams: a clone's learner config is its own.
func TestCloneParams(t *testing.T) {
	t.Parallel()
	lc, bc := core.DefaultLocalConfig(), backprop.DefaultConfig()
	p := &TrainParams{Learner: LearnerLocal, Seed: 3, Local: &lc, BP: &bc}
	c := p.Clone()
	c.Local.Eta, c.BP.LR, c.Seed = 9, 9, 4
	if p.Local.Eta == 9 || p.BP.LR == 9 || p.Seed != 3 || c.Local == p.Local || c.BP == p.BP {
		t.Errorf("the clone shares its configs: %+v", p)
	}
	if !reflect.DeepEqual((&TrainParams{Learner: LearnerBP}).Clone(), &TrainParams{Learner: LearnerBP}) {
		t.Error("a clone of params without configs has one")
	}
}
