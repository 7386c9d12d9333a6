// Package outdir decides whether a command may write a folder, and writes
// the mark that makes a folder the command's own.
//
// Nouns:
//
//   - Owner: the rule of one kind of output folder (a report site, a
//     crate): the name of its marker file, the marker's first line, and
//     optionally the files a folder written before the marker may hold.
//   - Marker: the file at a folder's root that says which command wrote the
//     folder and lists, one slash path a line, every file it wrote there.
//   - Foreign: a folder that holds anything the marker does not list (a
//     home folder, a store, a repository, a folder with notes in it). No
//     command writes, replaces or removes a foreign folder.
//
// A command that writes a folder calls Owner.Check before any work, writes
// its files with their marker into a new folder beside it, swaps the two
// and removes from the old one only what its marker listed (RemoveOwned).
package outdir
