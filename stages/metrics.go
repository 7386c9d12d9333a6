package stages

import (
	"fmt"
	"regexp"
	"strconv"

	"repro/core"
)

// A table cell's metric names one number of a train record's result, per
// seed: the aggregate summarises it over seeds (mean, sample s.d.) like the
// final accuracy. Indexed metrics take a hidden layer (0 = the first) or a
// row and column of the accuracy matrix:
//
//	acc                  final accuracy x100 (the default)
//	forgetting           forgetting x100
//	task_acc[i][j]       accuracy after task i on task j's classes, x100
//	replay_updates, replay_samples, waking_batches
//	gate_duty            fraction of waking batches with rotation on x100 (gated variants)
//	synops, synops_frac, dense_macs
//	rho[l], asleep[l], overlap[l], lambda[l]   per hidden layer (lambda: layer l+2's realised decay)
//	pr[l]                participation ratio (0 = the input, l = hidden layer l)
//	drift.code_change, drift.pred_change   share x100 of the waking samples whose top hidden
//	                     code (prediction) an isolated replay update changes, mean over updates
//	drift.margin[l], drift.max_logit_mean, drift.max_logit_p99   (fractions, logit units)
//	channel[c]           share x100 of the masked synapses entering through consolidation
//	                     channel c (0 presynaptic silent, 1 postsynaptic asleep, 2 suppressed;
//	                     needs train.local.diag_channels)
//
// A metric read from another stage's record (an energy table, say) is a
// name this function does not know: such a stage adds its own extractor
// beside this one and experiments wires its cells as the table's inputs.
var metricRe = regexp.MustCompile(`^([a-z][a-z0-9_.]*)(?:\[(\d+)\])?(?:\[(\d+)\])?$`)

// MetricValue returns metric of a result, and false with the reason when
// the record does not have it (a layer it lacks, a diagnostic not
// recorded). It is long because it is the one list of metric names, one
// case each, kept whole so a new metric goes beside its peers.
func MetricValue(r *core.Result, metric string) (float64, error) {
	m := metricRe.FindStringSubmatch(metric)
	if m == nil {
		return 0, fmt.Errorf("metric %q: not a metric name", metric)
	}
	name, nidx := m[1], 0
	var idx [2]int
	for k, s := range m[2:] {
		if s != "" {
			idx[k], _ = strconv.Atoi(s)
			nidx++
		}
	}
	want := map[string]int{"task_acc": 2, "rho": 1, "asleep": 1, "overlap": 1, "lambda": 1, "pr": 1, "drift.margin": 1, "channel": 1}[name]
	if nidx != want {
		return 0, fmt.Errorf("metric %q: %s takes %d index(es)", metric, name, want)
	}
	layer := func(xs []float64) (float64, error) {
		if idx[0] >= len(xs) {
			return 0, fmt.Errorf("metric %s: the record has %d value(s)", metric, len(xs))
		}
		return xs[idx[0]], nil
	}
	drift := func() (*core.Drift, error) {
		if r.Drift == nil {
			return nil, fmt.Errorf("metric %s: the run recorded no drift diagnostic", metric)
		}
		return r.Drift, nil
	}
	switch name {
	case "acc":
		return 100 * r.FinalAcc, nil
	case "forgetting":
		return 100 * r.Forgetting, nil
	case "task_acc":
		if idx[0] >= len(r.Acc) || idx[1] >= len(r.Acc[idx[0]]) {
			return 0, fmt.Errorf("metric %s: the accuracy matrix has no such entry", metric)
		}
		return 100 * r.Acc[idx[0]][idx[1]], nil
	case "replay_updates":
		return float64(r.ReplayUpdates), nil
	case "replay_samples":
		return float64(r.ReplaySamples), nil
	case "waking_batches":
		return float64(r.WakingBatches), nil
	case "gate_duty":
		return 100 * r.GateDuty, nil
	case "synops":
		return r.SynOps, nil
	case "synops_frac":
		return r.SynOpsFrac, nil
	case "dense_macs":
		return r.DenseMACs, nil
	case "rho":
		return layer(r.Rho)
	case "asleep":
		return layer(r.AsleepFrac)
	case "overlap":
		return layer(r.Overlap)
	case "lambda":
		return layer(r.KPLambda)
	case "pr":
		return layer(r.PR)
	case "channel":
		if idx[0] >= 3 {
			return 0, fmt.Errorf("metric %s: the channels are 0, 1 and 2", metric)
		}
		if r.MaskChannels == nil {
			return 0, fmt.Errorf("metric %s: the run recorded no channel shares (train.local.diag_channels)", metric)
		}
		v, err := layer(r.MaskChannels)
		return 100 * v, err
	case "drift.code_change", "drift.pred_change", "drift.max_logit_mean", "drift.max_logit_p99", "drift.margin":
		d, err := drift()
		if err != nil {
			return 0, err
		}
		switch name {
		case "drift.code_change":
			return 100 * d.CodeChange, nil
		case "drift.pred_change":
			return 100 * d.PredChange, nil
		case "drift.max_logit_mean":
			return d.MaxLogitMean, nil
		case "drift.max_logit_p99":
			return d.MaxLogitP99, nil
		}
		return layer(d.MarginViolated)
	}
	return 0, fmt.Errorf("metric %q: unknown (see stages/metrics.go)", metric)
}

// ValidMetric reports whether metric is a name MetricValue knows (whatever
// a given record holds).
func ValidMetric(metric string) error {
	_, err := MetricValue(&core.Result{Acc: [][]float64{}, Drift: &core.Drift{}, MaskChannels: []float64{}}, metric)
	if err == nil {
		return nil
	}
	m := metricRe.FindStringSubmatch(metric)
	if m == nil {
		return err
	}
	// Out of range on the empty record means the name and indices are fine.
	if e := err.Error(); regexp.MustCompile(`has no such entry|the record has \d+ value`).MatchString(e) {
		return nil
	}
	return err
}
