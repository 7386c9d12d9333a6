// Package verdict decides whether a number we compute agrees with the one a
// paper publishes, by a rule fixed before any number is looked at
// (docs/verdicts.md says the same in prose, with the measured calibration
// of every path). It knows statistics only: no stage, table or matrix.
//
// Files:
//
//   - verdict.go: Outcome, Aspect (what a differs is about), Reason (why
//     an inconclusive is one), Sample (one side: mean, per-run s.d., its
//     degrees of freedom, the printing's half unit, a lent s.d.), Printed,
//     Borrow, PairedInterval, Judgement, and the tests: Welch (a mean
//     against a published one), Paired and PairedKind (per-seed
//     differences against a published difference, a claimed sign shown),
//     exact (a deterministic count against its printing).
//   - kind.go: Kind (Points, Relative, Exact) and Margin, the one place
//     the margins are chosen (never narrower than a printed unit).
//   - stats.go: Welch-Satterthwaite degrees of freedom over the estimated
//     variances (the known ones add nothing to the denominator), t
//     quantiles, the two-sided F test of the spreads, MeanSD.
//   - failures.go: severe failures by the paper's definition (a final
//     accuracy below FailureBelow, 60%), the count implied by a mean and
//     s.d., Fisher's exact test, FailureCount.
//   - family.go: Family, Benjamini-Hochberg over every test of a report
//     (means, spreads, failure counts), and the final outcome.
//   - settle.go: the seeds of ours that would settle an inconclusive
//     comparison, the other side held as printed, at the same degrees of
//     freedom as the judgement; none when the published value's own
//     uncertainty is too wide.
//   - claim.go: Claim (a > b, a >= b within the margin, a ~= b) and
//     ClaimFailures.
//   - order.go: OrderStat, one of the paper's runs printed by itself (the
//     rank-th lowest of its n) against the normal fitted to our runs, by
//     the exact distribution of its pivot (quadrature).
//   - extreme.go: ExtremeStat, one end of a range the paper states over
//     rows it names (the lowest or highest of their means or seed s.d.s)
//     against the same end of ours, the paper's rows ours shifted (s.d.s:
//     scaled), by a parametric bootstrap of ours at the paper's n; End,
//     Extreme.
//   - string.go: a judgement in one line, its reason, and Certificate, the
//     tightest margin its data certify ("agrees within ±0.4").
//
// The rule, in order:
//
//  1. differs: the test rejects equal means at 5% after the family's
//     Benjamini-Hochberg adjustment, or the spreads' F test or the failure
//     counts' Fisher test does (said as such: differs in spread, in
//     failures);
//  2. agrees: otherwise, when the 90% interval of ours - published lies
//     inside the margin (two one-sided tests at 5%) and, for a published
//     difference that claims a sign, ours shows it;
//  3. inconclusive: otherwise, with the seeds of ours that would settle it,
//     or the statement that none would.
//
// An equivalent interval agrees even when the test also rejects equality:
// a difference inside the margin is no finding.
package verdict
