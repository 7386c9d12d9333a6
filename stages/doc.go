// Package stages holds every stage of the paper's DAG, one file per stage
// (download.go, prepare.go, ..., synth.go: synthetic cells that exercise
// the engine without data), all listed in registry.go. A stage's doc
// comment states its contract: its inputs, its outputs and its version
// history. Beside them, what several stages share:
// learner.go (the learner kinds' registry: each kind's defaults, version
// history, cost, bounds, footprint and metrics, in learner_<kind>.go),
// metrics.go (the numbers a table cell reads from a train record),
// render_card.go (a printed number's link to its card in the report site),
// figure_spec.go (a figure's layout), network.go (a kept network's
// tensors) and registry.go (every stage by name, for exec-cell).
//
// What the stages hand on, and what they call, lives below them: the
// records the table and figure stages write (a table cell's numbers, the
// sidecars, the statuses) are package numbers'; the paper's published
// values and claims package published's; the judging of the paper, which
// the reproduction stage runs, package judge's. Which cells exist, and how
// they are wired from pipeline.toml, is decided by package experiments.
//
// Every stage's doc comment ends with a "Version history:" block, one item
// per version: what changed in the outputs. A change of a stage's outputs
// for unchanged params bumps its Version and adds an item there; a change
// that touches some cells only adds an entry to the stage's History
// (pipeline.Bump: the version, which params it applies to, why; for train,
// the learner's History in learner_<kind>.go; for figure, figureHistory),
// and a cell's version is the largest that applies, whatever the entries'
// order.
//
// The artifact contracts between the stages, gathered (names are output
// names; every output is an artifacts tensor unless said otherwise). A
// stage's own doc comment is its contract: a new stage states its outputs
// there and needs no line here (the lines of spike and energy only point
// to theirs):
//
// download/<dataset>: the release files, verified against their published
// SHA-256, one output per file, named by the file's base name
// ("train-images-idx3-ubyte.gz", "data_batch_1.bin", ...). Archives are
// extracted in Go, so CIFAR outputs are the extracted .bin files.
//
// prepare/<dataset> (and v1/<dataset> for the feature front-end), the same
// outputs so that train does not care which produced them:
//
//	train_x    float32 [N, D]  standardised inputs, official training set
//	train_y    int32   [N]     labels
//	test_x     float32 [M, D]  official test set, standardised with training stats
//	test_y     int32   [M]
//	train_raw  uint8   [N, R]  raw intensities, for spike conversion: MNIST pixels
//	test_raw   uint8   [M, R]  (R = 784); CIFAR the R, G, B planes (R = 3072)
//	mean, std  float32 [D]     the standardisation statistics
//	info       int32   [3]     sheet height, sheet width, number of classes
//
// split/<dataset>-<seed>: the stratified held-out tenth of the official
// training set.
//
//	heldout_idx int32 [H]  indices into train_x, grouped by class ascending
//	stream_idx  int32 [N-H] the rest, likewise
//
// streams/<dataset>-<protocol>-<eval>: what one training run consumes.
//
//	task_classes int32 [T, C]   classes of each task, in presentation order
//	task_offsets int32 [T+1]    task t's training samples are
//	task_idx     int32 [S]      task_idx[task_offsets[t]:task_offsets[t+1]] (into train_x)
//	eval_idx     int32 [E]      evaluation samples, into eval_set's array (held-out:
//	                            the split's order, grouped by class as the reference's)
//	eval_set     uint8 [1]      0: eval_idx indexes train_x (held-out tenth), 1: test_x
//
// train/<row>/<protocol>/<eval>/seed<s>: one run; output "result" is the
// JSON TrainRecord (small, human-auditable); with train.keep_network (set by
// the DAG on the cells whose network a later stage reads) also the trained
// network, network_* (network.go).
//
// spike/... and energy/...: the spiking conversion of a kept network and its
// energy proxy, JSON records (spike.go, energy.go).
//
// synth/l<layer>/c<index>: a synthetic cell; output "out", a hash chain over
// its params and its inputs' bytes (synth.go).
//
// aggregate/<table>: the table's train records summarised per cell
// (numbers.AggregateRecord JSON); render/<table>: the LaTeX table ("tex")
// and its number-ID sidecar ("ids", numbers.Sidecar); reproduction: every
// number against the paper ("tex", "report": judge.Report); figure/<name>:
// "pdf", "png", "tex" and the point sidecar "ids" (numbers.FigureSidecar).
package stages
