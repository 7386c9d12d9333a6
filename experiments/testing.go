package experiments

// Builders of the small pipeline.toml files tests load. They live in a
// non-test file (restic's testing.go pattern) so that this package's tests
// and the end-to-end tests of cmd/repro write an experiment or a table the
// same way, once; nothing else calls them.

import (
	"fmt"
	"strings"
)

// TestExperiment is one [[experiment]] entry of a test config. Learner ""
// is "bp" and Dataset "" is "mnist".
type TestExperiment struct {
	Name, Learner, Dataset string
	// Preset, when set, comes before the protocols.
	Preset    string
	Protocols []string
	// Extra are lines after the protocols ("max_seeds = 2"); Section, the
	// lines of the learner's section ([experiment.bp]), "lr = 3e-3".
	Extra, Section []string
}

// TOML is the entry, ending in a blank line.
func (e TestExperiment) TOML() string {
	learner, dataset := e.Learner, e.Dataset
	if learner == "" {
		learner = "bp"
	}
	if dataset == "" {
		dataset = "mnist"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[[experiment]]\nname = %q\nlearner = %q\ndataset = %q\n", e.Name, learner, dataset)
	if e.Preset != "" {
		fmt.Fprintf(&b, "preset = %q\n", e.Preset)
	}
	fmt.Fprintf(&b, "protocols = %s\n", tomlStrings(e.Protocols))
	for _, l := range e.Extra {
		b.WriteString(l + "\n")
	}
	if len(e.Section) > 0 {
		fmt.Fprintf(&b, "[experiment.%s]\n", learner)
		for _, l := range e.Section {
			b.WriteString(l + "\n")
		}
	}
	b.WriteString("\n")
	return b.String()
}

// TestExperiments is the entries of es, in order.
func TestExperiments(es ...TestExperiment) string {
	var b strings.Builder
	for _, e := range es {
		b.WriteString(e.TOML())
	}
	return b.String()
}

// TestTable is one [[table]] entry of a test config, each part given as
// its keys separated by "; " (`experiment = "x"; label = "X"`): Head the
// table's own keys, then one [[table.column]], [[table.row]] and
// [[table.compare]] entry per element.
type TestTable struct {
	Head                    string
	Columns, Rows, Compares []string
}

// TOML is the entry and its sub-entries, one key a line.
func (t TestTable) TOML() string {
	lines := func(kv string) string { return strings.ReplaceAll(kv, "; ", "\n") + "\n" }
	var b strings.Builder
	b.WriteString("[[table]]\n" + lines(t.Head))
	for _, part := range []struct {
		header string
		list   []string
	}{{"[[table.column]]\n", t.Columns}, {"[[table.row]]\n", t.Rows}, {"[[table.compare]]\n", t.Compares}} {
		for _, kv := range part.list {
			b.WriteString(part.header + lines(kv))
		}
	}
	return b.String()
}

// tomlStrings is a TOML array of strings: ["a", "b"].
func tomlStrings(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
