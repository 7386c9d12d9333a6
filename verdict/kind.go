package verdict

import (
	"fmt"
	"math"
)

// Kind is what a number measures; it sets the equivalence margin. A
// number's kind is chosen from the quantity, never from an outcome: from
// its metric (stages declare which metric is which kind) or, for a count
// that no randomness touches, by its published entry (kind = "exact").
type Kind int

// The kinds of number.
const (
	// Points: an accuracy, forgetting, duty or share in percentage
	// points (x100), or a difference of two of them.
	Points Kind = iota
	// Relative: an energy (nJ), a count that the seed's activity moves
	// (events, synaptic operations), a fraction of a count, or a
	// mechanism diagnostic: judged relative to the published magnitude.
	Relative
	// Exact: a deterministic count, a function of the configuration
	// alone (the batches, samples and updates of a clocked replay
	// schedule): judged against the printing alone.
	Exact
)

var kindNames = [...]string{"points", "relative", "exact"}

// String names the kind.
func (k Kind) String() string { return kindNames[k] }

// ParseKind reads a kind's name.
func ParseKind(s string) (Kind, error) {
	for i, n := range kindNames {
		if n == s {
			return Kind(i), nil
		}
	}
	return 0, fmt.Errorf("kind %q: want one of points, relative, exact", s)
}

// The equivalence margins, chosen once, here, before any verdict was read
// (docs/verdicts.md gives the same reasons):
//
//   - PointsMargin, 1.0 percentage point: the paper's headline rows have a
//     seed s.d. of 0.2 to 1.0 points; it calls differences of 0.1 to 0.3
//     "within seed noise" and treats differences from about 1.5 points on
//     as findings. A reproduction within one point on either side
//     changes none of the paper's statements about that number.
//   - RelativeMargin, 5% of the published magnitude: energies, activity
//     counts and diagnostics move with the seed's activity; the paper's
//     contrasts between them are factors of 1.5 or more, so 5% leaves
//     every one of them intact.
//   - Exact counts have no margin but their printing: the published
//     value states the count to within half a unit of its last digit.
//
// No margin is narrower than one unit of the published value's last
// printed digit (MinUnits half units): a number printed as 0.7 states
// its value to a tenth, and a margin of 5% of it (0.035) could never be
// met even by an exact reproduction, whose printing alone spans +-0.05.
const (
	PointsMargin   = 1.0
	RelativeMargin = 0.05
	MinUnits       = 2
)

// Margin is the equivalence margin of a number of kind k whose published
// value is pub, printed with half unit half, in the number's own unit.
func Margin(k Kind, pub, half float64) float64 {
	switch k {
	case Exact:
		return half
	case Relative:
		return math.Max(RelativeMargin*math.Abs(pub), MinUnits*half)
	}
	return math.Max(PointsMargin, MinUnits*half)
}
