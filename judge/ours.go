package judge

import (
	"cmp"
	"slices"
	"strings"

	"repro/numbers"
	"repro/verdict"
)

// ours is what the report knows of one number of ours.
type ours struct {
	cell  *numbers.AggCell // a table or figure cell (nil for a comparison)
	stat  *numbers.Stat    // the number's mean and s.d. over cell.N seeds
	kind  verdict.Kind
	cmp   *numbers.Comparison // a paired difference
	diffs []float64           // its per-seed differences
	// expected is a comparison's seed count as its table runs it.
	expected int
	// failures: the number is the cell's count of severe failures.
	failures bool
	// key names the quantity: the same metric of the same runs, whatever
	// table or figure shows it (a restatement of one number is one
	// comparison).
	key string
	// pooled says the values are the disputed rows' seeds, not the
	// table's.
	pooled bool
}

// quantityKey names what a cell measures: its metric (or its other
// number's) over its runs, by their result digests.
func quantityKey(x *numbers.AggCell, what string) string {
	runs := x.Results
	if len(runs) == 0 {
		runs = x.TrainCells
	}
	if len(runs) == 0 {
		runs = []string{"cell " + x.ID}
	}
	return what + "|" + x.Metric + "|" + strings.Join(runs, ",")
}

// ourNumbers indexes every number of recs by ID: each cell's main metric, its
// forgetting, replay updates, syn-ops fraction and count of failed seeds
// (<cell>/forgetting, <cell>/replay_updates, <cell>/synops_frac,
// <cell>/collapsed), and each comparison.
func ourNumbers(recs []*numbers.AggregateRecord) map[string]*ours {
	out := map[string]*ours{}
	for _, rec := range recs {
		byCell := map[string]*numbers.AggCell{}
		for r := range rec.Rows {
			for c := range rec.Rows[r] {
				x := &rec.Rows[r][c]
				byCell[x.ID] = x
				if x.Experiment != "" {
					byCell[x.Experiment+" "+x.Protocol] = x
				}
				out[x.ID] = &ours{cell: x, stat: &x.Acc, kind: metricKind(x.Metric), key: quantityKey(x, "")}
				if x.Status.Kind != numbers.StatusOK {
					continue
				}
				out[x.ID+"/collapsed"] = &ours{cell: x, stat: &x.Acc, failures: true, key: quantityKey(x, "failures")}
				out[x.ID+"/forgetting"] = &ours{cell: x, stat: &x.Forgetting, kind: verdict.Points, key: quantityKey(x, "forgetting")}
				out[x.ID+"/replay_updates"] = &ours{cell: x, stat: &x.Replay, kind: verdict.Relative, key: quantityKey(x, "replay_updates")}
				if x.SynOps != nil {
					out[x.ID+"/synops_frac"] = &ours{cell: x, stat: x.SynOps, kind: verdict.Relative, key: quantityKey(x, "synops")}
				}
			}
		}
		for i := range rec.Comparisons {
			c := &rec.Comparisons[i]
			a, b := byCell[c.A], byCell[c.B]
			if a == nil || b == nil {
				a, b = byCell[c.A+" "+c.Protocol], byCell[c.B+" "+c.Protocol]
			}
			o := &ours{cmp: c, diffs: seedDiffs(a, b), kind: verdict.Points, key: "compare|" + c.ID}
			if a != nil {
				o.kind = metricKind(a.Metric) // a difference is of its operands' kind
			}
			if a != nil && b != nil {
				o.expected = min(a.Expected, b.Expected)
				o.key = "compare|" + quantityKey(a, "") + "|" + quantityKey(b, "")
			}
			out[c.ID] = o
		}
	}
	return out
}

// pool replaces, for each disputed row, the number of ours it judges (and
// every other ID of the same quantity) by the row's runs at every seed of
// [disputed] (docs/disputed.md): the table's seeds and the added ones,
// one sample.
func pool(ns map[string]*ours, rows []DisputedRow, rec *numbers.AggregateRecord) {
	if rec == nil {
		return
	}
	pooled := map[string]*ours{} // by quantity key
	for _, row := range rows {
		o := ns[row.ID]
		if o == nil {
			continue
		}
		col := cmp.Or(row.Column, row.Protocol)
		a := rec.Find(row.Experiment, col)
		if a == nil || a.Status.Kind != numbers.StatusOK {
			continue
		}
		if row.Minus != "" {
			b := rec.Find(row.Minus, col)
			if b == nil || o.cmp == nil || b.Status.Kind != numbers.StatusOK {
				continue
			}
			d, seeds := numbers.PairedDiffs(a, b)
			cmp := *o.cmp
			cmp.Seeds, cmp.N = seeds, len(d)
			cmp.Diff, _ = verdict.MeanSD(d)
			pooled[o.key] = &ours{cmp: &cmp, diffs: d, kind: o.kind, expected: o.expected, key: o.key, pooled: true}
			continue
		}
		if o.cell == nil || o.stat != &o.cell.Acc {
			continue
		}
		x := *a
		pooled[o.key] = &ours{cell: &x, stat: &x.Acc, kind: o.kind, key: o.key, pooled: true}
	}
	for id, o := range ns {
		p := pooled[o.key]
		if o.failures {
			// A count of failures pools with the accuracies it counts.
			p = pooled[strings.TrimPrefix(o.key, "failures")]
		}
		if p == nil || p.cell == nil && o.failures {
			continue
		}
		q := *p
		q.failures, q.key = o.failures, o.key
		if q.cmp != nil {
			c := *q.cmp
			c.ID = id
			q.cmp = &c
		} else {
			x := *q.cell
			x.ID = id
			q.cell, q.stat = &x, &x.Acc
		}
		ns[id] = &q
	}
}

// seedDiffs is a - b seed by seed over the seeds both have (nil when
// either is missing).
func seedDiffs(a, b *numbers.AggCell) []float64 {
	if a == nil || b == nil || len(a.Values) != len(a.Seeds) || len(b.Values) != len(b.Seeds) {
		return nil
	}
	var d []float64
	for i, s := range a.Seeds {
		if j := slices.Index(b.Seeds, s); j >= 0 {
			d = append(d, a.Values[i]-b.Values[j])
		}
	}
	return d
}

// MetricKind is the kind of number a cell's metric is (Metric "" is the
// final accuracy): energies and counts are relative, accuracies, shares
// and duties points. The reproduction report judges with it; so does
// `repro diff` when it asks whether a number moved beyond its seed noise.
func MetricKind(metric string) verdict.Kind { return metricKind(metric) }

// metricKind is the kind of number a metric is: energies and counts are
// relative, and so are the mechanism diagnostics (channel widths, asleep
// fractions, overlaps, realised decays, participation ratios, drift rates),
// whose published values are small fractions or rates that a margin of one
// point would never tell apart; accuracies, shares and duties (x100) are
// points. A count that no randomness touches is declared exact by its
// published entry (kind = "exact").
func metricKind(metric string) verdict.Kind {
	for _, p := range []string{"energy.nj", "replay_updates", "replay_samples", "waking_batches", "synops", "dense_macs",
		"rho[", "asleep[", "overlap[", "lambda[", "pr[", "drift."} {
		if strings.HasPrefix(metric, p) {
			return verdict.Relative
		}
	}
	return verdict.Points
}

// group is the table or figure a number ID belongs to.
func group(id string) string {
	parts := strings.SplitN(id, "/", 3)
	if parts[0] == "fig" && len(parts) > 1 {
		return "fig/" + parts[1]
	}
	return parts[0]
}
