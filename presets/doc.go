// Package presets reads presets.toml: the paper's named reference
// configurations of each learner, as data.
//
// A preset is a table of learner-config fields under its learner's table
// ([local], [bp]), named by the authors' config name. It may name another
// entry of the same table as its base (`base = "NAME"`): resolving a preset
// starts from the learner's defaults, applies its bases from the root, then
// its own values. The package knows no learner type: its caller registers
// each learner's table with a constructor for the defaults and a check
// (Learner), so that the file is fully validated when it is parsed, every
// error naming the file, line and key. The experiment matrix
// (repro/experiments) resolves the presets its experiments name; docs/presets.md
// says how to add one.
package presets
