// Package published holds what the paper publishes, as
// paper/published.toml transcribes it: the schema of that file and its
// checks. It judges nothing (package judge does) and reads no file (the
// caller reads it and Parse decodes it, naming the file in every error).
//
// Nouns (published.go):
//
//   - File: one published-values file: its values, claims, restatements
//     and the groups of numbers no cell runs, and how many numbers the
//     paper states (PaperNumbers).
//   - Value: one published number, cited to its line of paper.tex: a mean
//     (with its s.d. and n, or its interval for a paired difference), how
//     it is printed (Decimals, Exponent, Text), and what is known of it
//     (Collapsed, NoiseFrom, Kind, Cause); one of the paper's runs
//     (SeedsOf, Rank) or one end of a range over rows it names (Extreme,
//     Over, OverMinus, Spread).
//   - Restatement: a number the paper prints again that a Value names.
//   - Claim: a comparison the paper states, as conditions "ID OP ID"
//     (ParseCondition).
//   - NotRunGroup and NotRunCategory: the paper's numbers no cell of the
//     profile computes, counted and said why.
//
// The tests hold the transcription against paper.tex (paper_test.go):
// every value's printing is on the line it names.
package published
