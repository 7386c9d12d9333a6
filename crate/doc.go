// Package crate builds the reproduction as an RO-Crate: the JSON-LD graph
// of ro-crate-metadata.json, conforming to RO-Crate 1.1 and to the
// Workflow Run RO-Crate profiles (Process, Workflow and Provenance Run
// Crate 0.5, on Workflow RO-Crate 1.0), from typed inputs, and the folder
// that carries it.
//
// Its nouns, as the profiles name them:
//
//   - the workflow is the project: pipeline.toml as a ComputationalWorkflow
//     (and HowTo), at the commit of the binary that exports it, with the
//     README as its description;
//   - a step (HowToStep) is a stage; its tool (SoftwareApplication) is the
//     stage at one version, so two versions of a stage are two tools;
//   - an action (CreateAction) is one record of a cell: its inputs' output
//     files and its configuration (PropertyValue per param) as object, its
//     output files as result, the stage's tool as instrument, the record's
//     times, and the build that computed it (commit, Go version, host, CPU,
//     kernel path) as additionalProperty; prov:wasInformedBy names the
//     records whose outputs it read, exactly (two records may write the
//     same bytes, so a file alone does not say which one a cell read);
//   - a file is named by its content: the path in the crate of a file
//     copied into it, the canonical URL of a data release file, else
//     ni:///sha-256;… (RFC 6920), and carries its SHA-256 (sha256) and
//     size; a file is one entity however many cells read or write it;
//   - a number is a PropertyValue: ours as printed, the paper's value and
//     the verdict (valueReference), the records of its seeds
//     (prov:wasInfluencedBy) and their result files (isBasedOn).
//
// The package reads no store and no file but those it copies: Write copies
// the files a Crate lists into the crate's folder.
package crate
