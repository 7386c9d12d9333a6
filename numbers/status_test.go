package numbers

import "testing"

// TestStatusText: every status's text is the string it replaced, and
// decodes back to the same status.
func TestStatusText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s    Status
		text string
	}{
		{Status{Kind: StatusRun}, "run"},
		{Status{Kind: StatusOK}, "ok"},
		{Status{Kind: StatusNA}, "n/a"},
		{Status{Kind: StatusEmpty}, "empty"},
		{NotRun("experiment a is not in profile smoke"), "not run: experiment a is not in profile smoke"},
		{NotRun("blocked by download/cifar100"), "not run: blocked by download/cifar100"},
		{Missing("no seed has a result"), "missing: no seed has a result"},
	} {
		b, err := tc.s.MarshalText()
		if err != nil || string(b) != tc.text || tc.s.String() != tc.text {
			t.Errorf("%+v: MarshalText = %q, %v; String = %q; want %q", tc.s, b, err, tc.s.String(), tc.text)
		}
		var back Status
		if err := back.UnmarshalText([]byte(tc.text)); err != nil || back != tc.s {
			t.Errorf("UnmarshalText(%q) = %+v, %v, want %+v", tc.text, back, err, tc.s)
		}
	}
}

func TestStatusTextInvalid(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"", "OK", "running", "not run:", "not run: ", "missing", "n/a: x", "ok: fine"} {
		var s Status
		if err := s.UnmarshalText([]byte(text)); err == nil {
			t.Errorf("UnmarshalText(%q) = %+v, want an error", text, s)
		}
	}
	for _, s := range []Status{{}, {Kind: StatusOK, Why: "x"}, {Kind: StatusNotRun}, {Kind: StatusKind(99)}} {
		if _, err := s.MarshalText(); err == nil {
			t.Errorf("MarshalText(%+v) succeeded", s)
		}
	}
}
