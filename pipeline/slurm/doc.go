// Package slurm is the engine's executor for a Slurm cluster: each cell
// becomes one batch job that runs `repro exec-cell --store DIR KEY` on a
// node sharing the store's filesystem, and the driver learns the outcome
// from Slurm and from the store.
//
// Nouns:
//
//   - A job is one Slurm batch job running one cell. Its name is
//     "repro-<run>-<short key>" (run: the driver's RunID, sanitized), its
//     comment "repro cell <full key>". Its stdout and stderr go to
//     "<key>.slurm.log" next to the cell's log (pipeline.Job.LogPath, which
//     exec-cell writes itself); errors name both files.
//   - The batch script is fixed text that runs its arguments with
//     `exec "$@"`; the repro binary, the store and the key are passed to it as
//     argv by sbatch, never spliced into a shell string.
//   - The poller is one goroutine per Executor, alive while jobs are being
//     waited on, that asks Slurm about all of them with a single squeue call
//     per tick (ticks back off from Options.PollMin to Options.PollMax).
//     For jobs that left the queue it asks sacct, or, when accounting is
//     disabled (no slurmdbd), `scontrol show job`, and finally the store.
//   - Adoption: before submitting, the executor looks (once, on its first
//     Execute) for live jobs of this user whose comment names a cell key;
//     a cell whose job is still queued or running is waited on, not
//     resubmitted. This is what makes a driver restart after a crash cheap.
//
// The store is shared through the filesystem: the node writes blobs and the
// manifest with atomic renames, and the driver reads them. Nothing here
// locks across hosts; content addressing makes concurrent writers safe.
package slurm
