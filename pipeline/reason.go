package pipeline

import (
	"fmt"
	"strings"
)

// ReasonKind is why a planned cell must run. Callers branch on the kind,
// never on a reason's text: the text (Reason.String) is for people and may
// be reworded. docs/plan-reasons.md lists the kinds.
type ReasonKind int

// The reason kinds. The zero value is not a kind: a Reason must be built
// with one of these.
const (
	// ReasonNew: the store never planned the cell ID under this profile.
	ReasonNew ReasonKind = iota + 1
	// ReasonInputPending: the key is not known yet, as an input is not
	// computed.
	ReasonInputPending
	// ReasonNeverFinished: the store's last plan gave the cell this key,
	// and it never finished (no failure recorded either).
	ReasonNeverFinished
	// ReasonFailed: the last run of this key failed; Detail is the
	// failure's first line.
	ReasonFailed
	// ReasonOutputMissing: the record is there, an output blob is not;
	// Detail is the lookup error.
	ReasonOutputMissing
	// ReasonOutputCorrupt: an output blob or record is damaged; Detail is
	// the lookup error.
	ReasonOutputCorrupt
	// ReasonPreviousGone: the cell had another key, whose record is gone;
	// Detail is that key's short form.
	ReasonPreviousGone
	// ReasonStageVersion: the stage's version changed; Detail is
	// "<stage> <old> -> <new>".
	ReasonStageVersion
	// ReasonConfigChanged: the cell's params changed; Detail is the
	// params diff (DiffParams).
	ReasonConfigChanged
	// ReasonInputChanged: an input's key changed; Detail names the input
	// cell, or is empty when no input is known to have changed but the key
	// did.
	ReasonInputChanged
	// ReasonNeededBy: a remote holds the cell's record but not its
	// outputs, and a cell that runs reads them; Detail names that cell and
	// the remote.
	ReasonNeededBy
	// ReasonRemoteMiss: a remote's record of the cell's key was rejected;
	// Detail is "<remote>: <error>".
	ReasonRemoteMiss
)

// reasonKinds are the kinds' names (their text encoding, as in plan
// --json) and the words that start their display.
var reasonKinds = [...]struct{ name, label string }{
	ReasonNew:           {"new", "new"},
	ReasonInputPending:  {"input-pending", "input pending"},
	ReasonNeverFinished: {"never-finished", "output missing (never finished)"},
	ReasonFailed:        {"failed", "failed last time"},
	ReasonOutputMissing: {"output-missing", "output missing"},
	ReasonOutputCorrupt: {"output-corrupt", "output corrupt"},
	ReasonPreviousGone:  {"previous-gone", "changed"},
	ReasonStageVersion:  {"stage-version", "stage version"},
	ReasonConfigChanged: {"config-changed", "config changed"},
	ReasonInputChanged:  {"input-changed", "input changed"},
	ReasonNeededBy:      {"needed-by", "needed by"},
	ReasonRemoteMiss:    {"remote-miss", "remote"},
}

func (k ReasonKind) valid() bool { return k > 0 && int(k) < len(reasonKinds) }

// String returns the kind's name ("config-changed").
func (k ReasonKind) String() string {
	if !k.valid() {
		return fmt.Sprintf("ReasonKind(%d)", int(k))
	}
	return reasonKinds[k].name
}

// MarshalText encodes the kind as its name.
func (k ReasonKind) MarshalText() ([]byte, error) {
	if !k.valid() {
		return nil, fmt.Errorf("no reason kind %d", int(k))
	}
	return []byte(reasonKinds[k].name), nil
}

// UnmarshalText decodes a kind's name.
func (k *ReasonKind) UnmarshalText(b []byte) error {
	for i, rk := range reasonKinds {
		if i > 0 && rk.name == string(b) {
			*k = ReasonKind(i)
			return nil
		}
	}
	return fmt.Errorf("unknown reason kind %q", b)
}

// Reason is one reason a planned cell must run: what kind of change or
// absence, and its detail (see each kind for what Detail holds).
type Reason struct {
	Kind   ReasonKind
	Detail string
	// Since, when set, names the record the change is measured from when
	// it is not this store's last plan of the cell ("the remote's record
	// 1a2b3c4d"); it is set on the last of a cell's reasons only.
	Since string
}

// String is the reason for display: "config changed: train.lr 0.1 -> 0.2",
// "new", "stage version train 3 -> 4".
func (r Reason) String() string {
	if !r.Kind.valid() {
		return r.Kind.String() + ": " + r.Detail
	}
	label := reasonKinds[r.Kind].label
	var s string
	switch {
	case r.Kind == ReasonPreviousGone:
		s = label + " (previous record " + r.Detail + " gone)"
	case r.Detail == "":
		s = label
	case r.Kind == ReasonStageVersion || r.Kind == ReasonNeededBy || r.Kind == ReasonRemoteMiss:
		s = label + " " + r.Detail
	default:
		s = label + ": " + r.Detail
	}
	if r.Since != "" {
		s += " (since " + r.Since + ")"
	}
	return s
}

// JoinReasons is reasons for display on one line, separated by "; ".
func JoinReasons(rs []Reason) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	return strings.Join(parts, "; ")
}

// OnlyReasons reports whether every reason in rs is of one of kinds (true
// for no reasons).
func OnlyReasons(rs []Reason, kinds ...ReasonKind) bool {
	for _, r := range rs {
		found := false
		for _, k := range kinds {
			found = found || r.Kind == k
		}
		if !found {
			return false
		}
	}
	return true
}
