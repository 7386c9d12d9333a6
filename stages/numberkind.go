package stages

import "repro/verdict"

// MetricKind is the kind of number a cell's metric is (Metric "" is the
// final accuracy): energies and counts are relative, accuracies, shares
// and duties points. The reproduction report judges with it; so does
// `repro diff` when it asks whether a number moved beyond its seed noise.
func MetricKind(metric string) verdict.Kind { return metricKind(metric) }
