// Package judge judges the paper: every number it publishes and every
// claim it states, against ours, by the rule of package verdict
// (docs/verdicts.md). The reproduction stage (stages/reproduction_stage.go)
// reads its inputs and calls Reproduce; `repro show reproduction` calls
// it on the committed tables and figures and prints the Report; the report
// site shows it; `repro diff` (package numdiff) takes the kind of each
// number from it (MetricKind).
//
// Nouns, by file:
//
//   - judge.go: Params, what the paper is judged on (the reproduction
//     cell's params: the published values, claims, restatements and
//     numbers not run of package published, the disputed rows, the input
//     names); Reproduce, which judges each value by its published shape
//     (judgeValue; one of the paper's runs, judgeSeed; one end of a range
//     over named rows, judgeExtreme) and each claim condition by
//     condition (judgeClaim),
//     the numbers and the claims each one family (verdict.Family).
//   - ours.go: our numbers by ID (a table cell, its forgetting, replay
//     updates, syn-ops and count of failed seeds, a comparison), each
//     with the quantity it measures (a number restated under another ID
//     is one comparison) and its kind of number (MetricKind); the
//     disputed rows' runs pooled into them.
//   - report.go: Report, the reproduction cell's "report" (JSON): a Row
//     per published number, a ClaimResult per claim (its
//     ConditionResults), the Tally of numbers and claims, per group
//     (GroupTally) and of the distinct comparisons (ComparisonTally), the
//     numbers not run by category (CategoryCounts); Summary, its one line.
//   - disputed.go: the disputed rows (DisputedRow: a published number
//     settled by more seeds on both codes), judged paper against the
//     authors' code against ours (DisputedResult, DisputedSide,
//     DisputedPair), one family of their own. Ours are a table's
//     aggregate like any other (input DisputedInput, built by package
//     experiments through the tables' path).
//   - tex.go: the report as LaTeX (Report.TeX, paper/reproduction.tex)
//     with its table of disputed rows, that table as text for `repro show
//     reproduction` (DisputedText, DisputedResult.Notes), and the rule in
//     one paragraph (RuleText).
//
// It reads no file and imports no stage: our numbers come as the records
// of package numbers, the paper's as those of package published.
package judge
