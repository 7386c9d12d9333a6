// Package experiments owns what pipeline.toml means for the paper: the
// profiles, the experiments and the tables, their validation, the wiring
// of experiments to cells, the naming of cell IDs and aggregate inputs
// (package cellid, one function each and its inverse) and the staleness
// check of the committed tables. It sits between cmd/repro and stages:
// pipeline/ knows only the engine's own settings and a strict TOML helper,
// stages/ only how each stage computes.
//
// The schema (besides the engine's [settings] and [executor]):
//
//	[profile.NAME]                  # a scale of the whole matrix; NAME as experiment names
//	seeds = [0, 1, 2]               # run seeds of every experiment (unless it sets its own)
//	split_seeds = [1234]            # held-out splits
//	stamp = "..."                   # printed on every rendered table
//	[profile.NAME.train]            # param overrides for every train cell (part of their keys)
//	[profile.NAME.local]            # ...for every local-learner config
//	[profile.NAME.bp]               # ...for every backprop config
//
//	[[experiment]]                  # one row of the paper: a learner config
//	name = "full"                   # unique; cell IDs are train/<name>/<protocol>/<eval>/seed<s>
//	learner = "local"               # a stages.LearnerKind: local | bp
//	dataset = "mnist"               # mnist | cifar10 | cifar10f | cifar100 | cifar100f
//	protocols = ["sequential", "static", "single_pass"]
//	eval = "heldout"                # heldout (the split's tenth) | test (development)
//	max_seeds = 3                   # optional: only the profile's first 3 seeds
//	profiles = ["paper"]            # optional: only in these profiles
//	preset = "g17_sgd_none_s10"     # optional: start from a reference config (presets/presets.toml)
//	[experiment.local]              # the learner config (fields of core.LocalConfig)
//	[experiment.bp]                 # or of backprop.Config
//
//	[[table]]                       # a rendered table of the paper (TableSpec): its columns
//	[[table.column]]                #   ([[table.column]], the one form; a matrix is expanded
//	[[table.row]]                   #   into it) and rows; its cells merge the two selections
//	[[figure]]                      # a rendered figure of the paper (FigureSpec)
//	                                # (both declared one way: docs/declarations.md)
//
//	[release.cifar100]              # optional: a release other than the published one,
//	sha256 = {"train.bin" = "...", "test.bin" = "..."}  # read from the data mirror only
//	                                # (a small subset for tests); the digests are in the keys
//
//	[spike]                         # the stages' own sections (sections, in matrix.go), each
//	[disputed]                      # documented in its file: spike.go (SpikeConfig), disputed.go
//	                                # (Disputed; docs/disputed.md: ours are one more table's
//	                                # cells, built in code, Matrix.disputedTable)
//
// Load decodes and validates all of it before any cell exists: every
// learner config an experiment resolves to, under every profile it runs
// in, passes the learner's own Validate, and every error names the file,
// the line and the key (inside the n-th [[experiment]], the line of that
// experiment's key). Matrix.Build then turns one profile into the DAG.
package experiments
