// Package numdiff compares two builds of the paper number by number: which
// numbers moved, from what to what, and whether the move is beyond the
// seeds' noise, judged by the statistics of the reproduction verdicts
// (package verdict: Welch's test with its equivalence margin, adjusted over
// the moved numbers by Benjamini-Hochberg).
//
// Nouns:
//
//   - Build: the numbers of one build (the committed sidecars of a commit,
//     or the sidecars a store holds), by number ID, with the tables and
//     figures they came from.
//   - Number: one table cell, figure point or seed-paired difference: its
//     mean, s.d. and per-seed values, and its kind (verdict.Kind, as
//     judge.MetricKind decides it), read from the sidecars of package
//     numbers.
//   - Move: a number that differs between two builds, with the judgement
//     of after against before.
package numdiff
