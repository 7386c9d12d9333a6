package numbers

import (
	"fmt"
	"strings"
)

// StatusKind is what a table cell or figure point is: to be computed,
// computed, or why it shows no number. Code branches on the kind, never on
// a status's text. docs/plan-reasons.md lists the kinds.
type StatusKind int

// The status kinds. The zero value is not a kind.
const (
	// StatusRun: the cell is computed from its train cells (params only).
	StatusRun StatusKind = iota + 1
	// StatusOK: the cell has a result (outputs only).
	StatusOK
	// StatusNA: the cell does not apply (rendered "---").
	StatusNA
	// StatusEmpty: the cell is blank by the table's layout.
	StatusEmpty
	// StatusNotRun: no cell of this run computes it; Why says why (a row
	// declared not run, an experiment not in the profile, a data set
	// blocked on this machine).
	StatusNotRun
	// StatusMissing: its cells ran but left no result; Why says which.
	StatusMissing
)

// statusWords are the kinds' text: the whole text of a kind without a
// reason, the text before ": <why>" of one with a reason.
var statusWords = [...]struct {
	word   string
	hasWhy bool
}{
	StatusRun:     {"run", false},
	StatusOK:      {"ok", false},
	StatusNA:      {"n/a", false},
	StatusEmpty:   {"empty", false},
	StatusNotRun:  {"not run", true},
	StatusMissing: {"missing", true},
}

func (k StatusKind) valid() bool { return k > 0 && int(k) < len(statusWords) }

// String returns the kind's word ("not run").
func (k StatusKind) String() string {
	if !k.valid() {
		return fmt.Sprintf("StatusKind(%d)", int(k))
	}
	return statusWords[k].word
}

// Status is a table cell's or figure point's status: its kind, and for
// StatusNotRun and StatusMissing why. Its text ("run", "n/a", "not run:
// <why>", "missing: <why>") is what params, and so cell keys, and outputs
// hold: MarshalText and UnmarshalText keep those bytes, so a Status can
// replace the string it was without moving a key. Why enters keys, so it
// must be a stable cause (a config fact, or "blocked by <cell>"), never an
// error's text.
type Status struct {
	Kind StatusKind
	Why  string
}

// NotRun is the status of a cell nothing computes, for why.
func NotRun(why string) Status { return Status{Kind: StatusNotRun, Why: why} }

// Missing is the status of a cell whose runs left no result, for why.
func Missing(why string) Status { return Status{Kind: StatusMissing, Why: why} }

// Is reports whether s is of kind k.
func (s Status) Is(k StatusKind) bool { return s.Kind == k }

// String is the status's text: "ok", "not run: no experiment for this
// cell".
func (s Status) String() string {
	if !s.Kind.valid() {
		return s.Kind.String()
	}
	w := statusWords[s.Kind]
	if !w.hasWhy || s.Why == "" {
		return w.word
	}
	return w.word + ": " + s.Why
}

// MarshalText encodes s as its text (String). The zero Status, which is
// no status, is an error, and so is a reason missing from (or given to) a
// kind that has one (has none).
func (s Status) MarshalText() ([]byte, error) {
	if !s.Kind.valid() {
		return nil, fmt.Errorf("no status kind %d", int(s.Kind))
	}
	if w := statusWords[s.Kind]; !w.hasWhy && s.Why != "" {
		return nil, fmt.Errorf("status %s has a reason (%q)", s.Kind, s.Why)
	} else if w.hasWhy && s.Why == "" {
		return nil, fmt.Errorf("status %s has no reason", s.Kind)
	}
	return []byte(s.String()), nil
}

// UnmarshalText decodes a status's text. An unknown text is an error that
// quotes it.
func (s *Status) UnmarshalText(b []byte) error {
	text := string(b)
	for i, w := range statusWords {
		if i == 0 {
			continue
		}
		if text == w.word && !w.hasWhy {
			*s = Status{Kind: StatusKind(i)}
			return nil
		}
		if why, ok := strings.CutPrefix(text, w.word+": "); ok && w.hasWhy && why != "" {
			*s = Status{Kind: StatusKind(i), Why: why}
			return nil
		}
	}
	return fmt.Errorf("unknown status %q (want run, ok, n/a, empty, \"not run: <why>\" or \"missing: <why>\")", text)
}
