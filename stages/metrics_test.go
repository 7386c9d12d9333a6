package stages

import (
	"testing"

	"repro/core"
)

func TestMetricValue(t *testing.T) {
	t.Parallel()
	r := &core.Result{FinalAcc: 0.9, Forgetting: 0.05, Acc: [][]float64{{0.99}, {0.9, 0.95}}, ReplayUpdates: 7, ReplaySamples: 70,
		Rho: []float64{0.25, 0.5}, AsleepFrac: []float64{0.8}, KPLambda: []float64{0.01}, PR: []float64{10, 20}, SynOpsFrac: 0.1, GateDuty: 0.25,
		MaskChannels: []float64{0.5, 0.25, 0.25}, Drift: &core.Drift{CodeChange: 0.3, MarginViolated: []float64{0.01, 0.02}}}
	for metric, want := range map[string]float64{
		"acc": 90, "forgetting": 5, "task_acc[1][0]": 90, "replay_updates": 7, "replay_samples": 70, "rho[1]": 0.5,
		"asleep[0]": 0.8, "lambda[0]": 0.01, "pr[1]": 20, "synops_frac": 0.1, "drift.code_change": 30, "drift.margin[1]": 0.02,
		"channel[1]": 25, "gate_duty": 25,
	} {
		if got, err := MetricValue(r, metric); err != nil || got != want {
			t.Errorf("%s = %v, %v; want %v", metric, got, err, want)
		}
	}
	for _, bad := range []string{"rho[2]", "task_acc[0][1]", "overlap[0]", "rho", "acc[0]", "nope", "lambda[0][0]", "channel[3]", "channel"} {
		if _, err := MetricValue(r, bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	if _, err := MetricValue(&core.Result{}, "channel[0]"); err == nil {
		t.Error("channel[0] of a run without the diagnostic: no error")
	}
	for _, ok := range []string{"acc", "rho[3]", "task_acc[4][4]", "drift.max_logit_p99", "overlap[0]", "channel[2]"} {
		if err := ValidMetric(ok); err != nil {
			t.Errorf("ValidMetric(%s) = %v", ok, err)
		}
	}
	for _, bad := range []string{"rho", "nope", "acc[1]", "channel[3]"} {
		if ValidMetric(bad) == nil {
			t.Errorf("ValidMetric(%s) accepted", bad)
		}
	}
}
