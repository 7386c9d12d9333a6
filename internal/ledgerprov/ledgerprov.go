// Package ledgerprov counts which code computed the records of a results
// ledger (provenance.revision) and writes that statement into the ledger's
// README, between two marker lines, so that the README says what the
// records say and a test can hold it to them.
package ledgerprov

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"repro/artifacts"
)

// Unknown is the revision of a record whose binary could not name its
// source (a build without a stamp). Older records may say "" instead.
const Unknown = "unknown"

// Source is the build a record names: its commit and, for a tree with
// uncommitted changes, their digest.
type Source struct {
	Revision  string // commit, or Unknown
	Dirty     bool
	DirtyDiff string
}

// Known reports whether the source names a commit.
func (s Source) Known() bool { return s.Revision != Unknown }

func (s Source) String() string {
	switch {
	case !s.Known():
		return "revision unknown"
	case s.Dirty && s.DirtyDiff != "":
		return fmt.Sprintf("commit %s with uncommitted changes %.12s", s.Revision, s.DirtyDiff)
	case s.Dirty:
		return fmt.Sprintf("commit %s with uncommitted changes", s.Revision)
	}
	return "commit " + s.Revision
}

// SourceOf returns the build a record's provenance names.
func SourceOf(p *artifacts.Provenance) Source {
	rev := p.Revision
	if rev == "" {
		rev = Unknown
	}
	if rev == Unknown {
		return Source{Revision: Unknown}
	}
	return Source{Revision: rev, Dirty: p.Dirty, DirtyDiff: p.DirtyDiff}
}

// Count is the records that name one source.
type Count struct {
	Source     Source
	Records    int
	Recomputed int            // records of a bit-identical recompute (artifacts.ExecutorRecompute)
	Stages     map[string]int // records per stage (the cell's kind)
}

// Computed is the records the source computed (rather than recomputed).
func (c *Count) Computed() int { return c.Records - c.Recomputed }

// Tally is the sources of a set of ledger records.
type Tally struct {
	Profile string  // the profile whose plan reached the records
	Records int     // records counted
	Sources []Count // by records, most first; unknown last
	// Kernels counts the records per kernel path and CPU model they
	// name ("avx512 on AMD EPYC"); records made before provenance named
	// them are counted under "".
	Kernels map[string]int
}

// Of tallies the records ms, those profile's plan reaches in a ledger.
func Of(profile string, ms []*artifacts.Manifest) *Tally {
	t := &Tally{Profile: profile, Records: len(ms), Kernels: map[string]int{}}
	at := map[Source]int{}
	for _, m := range ms {
		s := SourceOf(&m.Provenance)
		i, ok := at[s]
		if !ok {
			i = len(t.Sources)
			at[s] = i
			t.Sources = append(t.Sources, Count{Source: s, Stages: map[string]int{}})
		}
		t.Kernels[machine(&m.Provenance)]++
		c := &t.Sources[i]
		c.Records++
		c.Stages[m.Stage]++
		if m.Provenance.Recomputed() {
			c.Recomputed++
		}
	}
	slices.SortFunc(t.Sources, func(a, b Count) int {
		if a.Source.Known() != b.Source.Known() {
			if a.Source.Known() {
				return -1
			}
			return 1
		}
		return cmp.Or(b.Records-a.Records, strings.Compare(a.Source.Revision, b.Source.Revision),
			strings.Compare(a.Source.DirtyDiff, b.Source.DirtyDiff))
	})
	return t
}

// Unknown is the number of records that name no commit.
func (t *Tally) Unknown() int {
	n := 0
	for _, c := range t.Sources {
		if !c.Source.Known() {
			n += c.Records
		}
	}
	return n
}

// One returns the commit every record names, built from a clean tree, if
// there is one such commit.
func (t *Tally) One() (string, bool) {
	if len(t.Sources) != 1 || !t.Sources[0].Source.Known() || t.Sources[0].Source.Dirty {
		return "", false
	}
	return t.Sources[0].Source.Revision, true
}

// Statement is the tally as the README states it: one sentence naming the
// commit when every record names the same clean one, else a line per
// source; each line gives the records, how many were recomputed
// bit-identically, and the records per stage.
func (t *Tally) Statement() string {
	var b strings.Builder
	if t.Records == 0 {
		return fmt.Sprintf("No record here is of a cell that profile %s reaches.\n", t.Profile)
	}
	if rev, ok := t.One(); ok {
		fmt.Fprintf(&b, "Every record below was computed or recomputed bit-identically by commit %s\n", rev)
		fmt.Fprintf(&b, "(the %s that profile %s reaches):\n\n", plural(t.Records, "record"), t.Profile)
	} else {
		fmt.Fprintf(&b, "The %s that profile %s reaches name %s; no single commit\n", plural(t.Records, "record"), t.Profile, plural(len(t.Sources), "source"))
		b.WriteString("computed or recomputed them all yet ('repro verify --recompute --push' with\none commit makes it one):\n\n")
	}
	for _, c := range t.Sources {
		fmt.Fprintf(&b, "  %s: %s", c.Source, plural(c.Records, "record"))
		switch {
		case !c.Source.Known():
			b.WriteString(" (binaries that could not name their source)")
		case c.Recomputed == c.Records:
			b.WriteString(" (all recomputed bit-identically)")
		case c.Recomputed == 0:
			b.WriteString(" (computed)")
		default:
			fmt.Fprintf(&b, " (%d recomputed bit-identically, %d computed)", c.Recomputed, c.Computed())
		}
		fmt.Fprintf(&b, ": %s\n", stages(c.Stages))
	}
	if n := t.Unknown(); n > 0 {
		fmt.Fprintf(&b, "\n%s name no commit.\n", plural(n, "record"))
	}
	b.WriteString("\nKernel path and CPU:\n")
	for _, k := range byCount(t.Kernels) {
		name := k
		if k == "" {
			name = "not named (records made before provenance named them)"
		}
		fmt.Fprintf(&b, "  %s: %s\n", name, plural(t.Kernels[k], "record"))
	}
	return b.String()
}

// machine is "avx512 on AMD EPYC", the kernel path and CPU model a record
// names, or "" for a record that names neither.
func machine(p *artifacts.Provenance) string {
	switch {
	case p.Kernels == "" && p.CPU == "":
		return ""
	case p.CPU == "":
		return p.Kernels + " kernels on an unnamed CPU"
	case p.Kernels == "":
		return "unnamed kernels on " + p.CPU
	}
	return p.Kernels + " kernels on " + p.CPU
}

// byCount returns m's keys, most counted first, then by name.
func byCount(m map[string]int) []string {
	names := make([]string, 0, len(m))
	for s := range m {
		names = append(names, s)
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(m[b]-m[a], strings.Compare(a, b)) })
	return names
}

// stages is "1305 train, 48 spike, ...": most first, then by name.
func stages(m map[string]int) string {
	names := byCount(m)
	parts := make([]string, len(names))
	for i, s := range names {
		parts[i] = fmt.Sprintf("%d %s", m[s], s)
	}
	return strings.Join(parts, ", ")
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
