// Package ledgertrust checks the records of a results ledger kept in git
// (paper/cells) against the ledger's history, so that a record edited in a
// clone is not taken for the one the project committed.
//
// Nouns:
//
//   - Committed record: a record file whose bytes are those of HEAD's tree
//     (git's own content hash, the blob ID, is the committed manifest of
//     every record's digest).
//   - Rewritten record: a record whose outputs or key differ from those of
//     an earlier committed version of the same file. The ledger's rules
//     never do that (a push keeps the first record of a key, a refresh or a
//     recompute changes provenance only, a recompute that differs keeps the
//     old record), so a rewrite is a tamper or a bug.
//
// Check reads HEAD's tree and the history of the records' folder once (two
// git commands and one git cat-file for the changed versions: under a
// second for the 2,300 records and 3,300 changes of paper/cells); Vet then
// judges one record's bytes. What a clone cannot detect (a history
// rewritten as a whole, a forged repository) is in docs/audit.md.
package ledgertrust
