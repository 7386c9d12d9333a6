// Package pipeline is the engine of repro: it turns a graph of cells into
// stored, content-addressed outputs, running only what is not stored yet.
//
// Its nouns:
//
//   - Stage: one kind of computation (download, split, train, ...): a name,
//     a version, a params type and a Run function that is pure in its params
//     and input artifacts (same inputs, same bytes out, on any host and at
//     any -j). Stages are defined in package stages.
//   - Cell: one node of the DAG, a stage applied to resolved params and to
//     named input cells. Its ID ("train/full/sequential/split1234/seed3") is
//     for humans and is not part of its key.
//   - Graph: a validated, topologically ordered set of cells (NewGraph).
//   - Key: the SHA-256 of a cell's key text (KeyDesc.Text; `repro key CELL`
//     prints it): the key format, the stage name and version, the canonical
//     params (EncodeParams, one "name value" line each) and the digests of
//     its inputs' outputs. Nothing else enters: no path, time, host or
//     worker count. KeyDesc is the one definition; plan, run, exec-cell and
//     the remote check all build one.
//   - Plan: for each cell of a graph, whether the store already holds a
//     manifest under its key, and if not why it must run (MakePlan).
//   - Reason: why a planned cell must run, a ReasonKind (new, config
//     changed, failed last time, ...) and a detail; callers branch on the
//     kind, String is for display (docs/plan-reasons.md).
//   - Spec: what a cell needs to run anywhere (stage, version, params text,
//     input digests), written to the store under the key before the cell
//     runs, so that another process or host can execute it by key alone.
//   - Job and Executor: the scheduler hands an Executor one Job (a key and
//     where to log) per cell to run; the local executor runs it in-process,
//     the Slurm executor (package pipeline/slurm) as a batch job running
//     `repro exec-cell`.
//   - RunContext: what a stage's Run sees: its params, its inputs by name
//     (read lazily from the store, verified against their digests) and a
//     sink for its named outputs.
//   - Manifest: the record of a finished cell (outputs with digests, params,
//     provenance: code revision, host, times, CPU), written last, so its
//     presence means the cell is complete.
//
// The life of a cell: plan (is its key in the store?) -> resolve (its key is
// computable once every input's manifest is known) -> spec (written to the
// store) -> execute (an executor runs the stage, outputs are stored as blobs
// named by their digest) -> manifest (written last, atomically). A run killed
// at any point loses at most the cells in flight; the next run resumes.
//
// What the paper's config means (profiles, experiments, tables) is not this
// package's business: pipeline knows the strict-TOML helper that reads
// pipeline.toml with file:line errors, the engine's own settings, and
// nothing about learners, protocols or data sets.
package pipeline
