// Package numbers holds our numbers as the table and figure stages write
// them, for every reader: the stages that write them, the judging of the
// paper (package judge), the report site, `repro diff` and the commands.
// It imports nothing of the project.
//
// Nouns, by file:
//
//   - status.go: Status, what a table cell or figure point is (to be run,
//     ok, n/a, empty, not run or missing, with why), typed, with the text
//     that params, and so cell keys, and outputs hold.
//   - record.go: AggCell, one number of a table (its seeds, their values
//     and their mean and s.d., Stat); Comparison, a seed-paired
//     difference of two cells with its CompareStatus; AggregateRecord, the
//     "aggregate" output of an aggregate cell (rows of cells and the
//     comparisons); MeanSD and PairedDiffs.
//   - sidecar.go: Sidecar and its NumberRef, the "ids" output of a render
//     cell (every printed number with its row, column and provenance);
//     FigureSidecar and its FigurePoint (FigSelection, FigCandidate), the
//     "ids" output of a figure cell; FigureRecord, a figure's points as an
//     aggregate record, so that a figure's numbers are judged as a table's.
//   - print.go: how a number prints (Fixed, Signed) and the name of its
//     card in the report site (CardName).
//
// Every type here is the JSON of a stage's output: a change of its fields
// or their encoding is a change of that stage's outputs (its Version).
package numbers
