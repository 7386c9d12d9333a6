// Package artifacts is the content-addressed store under every run of repro.
//
// Nouns:
//
//   - A blob is an immutable byte string named by the SHA-256 of its
//     uncompressed content (a Digest). Blobs are stored zstd-compressed in a
//     fan-out directory, blobs/<first hex byte>/<digest>.zst.
//   - A cell is one unit of work of the pipeline (one stage applied to one
//     resolved config and one set of inputs). Its Key is the SHA-256 of a
//     canonical text naming the stage, its version, every resolved param and
//     the digest of every input artifact, and nothing else.
//   - A Spec is what a process needs to run a cell anywhere: the stage, the
//     canonical params and the keys of the input cells. It is stored before
//     the cell runs, under specs/.
//   - A Manifest is a finished cell's record: its output digests and its
//     provenance (code revision, host, times). It is written last, atomically,
//     under cells/, so a reader sees either nothing or a complete result.
//   - A Ref remembers, per (profile, cell ID), the key last planned, so that
//     a plan can say why a cell must run again.
//
// Every file is written by writeFile: a temporary file in the target's
// directory, written, length-checked, fsynced, closed, renamed, and the
// directory fsynced. Safety across processes and hosts sharing the
// directory rests on that rename and on content addressing (two writers of
// one blob write the same bytes), not on locks; the per-cell locks only
// avoid running one cell twice at once.
//
// This package imports nothing else of the project.
package artifacts
