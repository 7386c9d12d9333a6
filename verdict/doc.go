// Package verdict decides whether a number we compute agrees with the one a
// paper publishes, by a rule fixed before any number is looked at
// (docs/verdicts.md says the same in prose).
//
// Nouns:
//
//   - Sample: one side of a comparison: a mean, its s.d. over N runs (DF
//     degrees of freedom for that s.d.), and the half unit of its last
//     printed digit (Half; 0 for a number we compute).
//   - Kind: what a number measures (accuracy points, a relative quantity
//     such as an energy or a count). It sets the equivalence margin
//     (Margin), the one place the margins are chosen.
//   - Judgement: the typed outcome of one comparison (Agrees, Differs,
//     Inconclusive, NotRun) with the numbers behind it: the difference, its
//     90% interval, the Welch p value (raw and adjusted), the seeds per
//     side that would settle an inconclusive one, the F test of the spreads
//     and the collapse counts with Fisher's exact test.
//   - Family: the tests one report makes, adjusted together for
//     multiplicity (Benjamini-Hochberg) before the outcomes are final.
//
// The rule, in order:
//
//  1. agrees: the 90% confidence interval of (ours - published), with t
//     quantiles at the Welch-Satterthwaite degrees of freedom, lies inside
//     [-margin, +margin] of the number's kind (two one-sided tests at 5%);
//  2. differs: otherwise, when Welch's two-sided t test rejects equal means
//     at 5% after the Benjamini-Hochberg adjustment over the family;
//  3. inconclusive: otherwise, with the seeds per side (the same on both)
//     that would settle it at the observed difference and spreads.
//
// A published value's uncertainty includes its printing: a value printed
// to d decimals is uniform within half a unit of its last digit (variance
// Half^2/3, known exactly, so no degrees of freedom are lost). A printed
// s.d. below that half unit (0.0) is taken as the half unit. A wide spread
// on our side is reported by its own F test; it never borrows the paper's.
package verdict
