package main

import (
	"context"
	"fmt"

	"repro/artifacts"
	"repro/pipeline"
	"repro/stages"
)

func cmdExecCell() *command {
	var store string
	fs := newFlags("exec-cell", nil)
	nonEmptyVar(fs, &store, "store", "", "store `directory` (required)")
	executor := nonEmpty(fs, "executor", "local", "executor `name` recorded in provenance")
	return &command{
		name: "exec-cell", usage: "--store DIR <key>...",
		short: "run cells from their specs in the store (what cluster jobs run)",
		long: `Exec-cell runs the cell whose spec is stored under <key> and publishes its
manifest; it exits 0 only when the manifest is in the store. Given several
keys (a Slurm batch) it runs them in turn, goes on after a failed cell, writes
each failure on a line naming its key, and exits 0 only if all succeeded. It is
idempotent (a finished cell returns at once) and waits if another process is
computing the same cell. REPRO_DATA_MIRROR overrides the data mirror.`,
		flags: fs, maxArgs: -1,
		run: func(ctx context.Context, e *env, args []string) error {
			if store == "" || len(args) == 0 {
				return usageErr("exec-cell needs --store DIR and a key")
			}
			keys := make([]artifacts.Key, len(args))
			for i, a := range args {
				k, err := artifacts.ParseKey(a)
				if err != nil {
					return usageErr("%v", err)
				}
				keys[i] = k
			}
			st, err := artifacts.Open(store, artifacts.Options{})
			if err != nil {
				return err
			}
			settings := map[string]string{"data.mirror": e.getenv("REPRO_DATA_MIRROR")}
			opt := pipeline.ExecOptions{Stages: stages.Stages(), Settings: settings, Executor: *executor,
				Waiting: func(holder string) {
					fmt.Fprintf(e.stderr, "waiting: another process holds the cell's lock (%s)\n", holder)
				}}
			if len(keys) == 1 {
				_, err = pipeline.ExecuteCell(ctx, st, keys[0], opt)
				return err
			}
			failed := 0
			for _, k := range keys {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if _, err := pipeline.ExecuteCell(ctx, st, k, opt); err != nil {
					failed++
					fmt.Fprintf(e.stderr, "repro exec-cell: cell %s: %v\n", k, err)
				}
			}
			if failed > 0 {
				return fmt.Errorf("%d of %d cells failed", failed, len(keys))
			}
			return nil
		},
	}
}
