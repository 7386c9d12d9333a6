package pipeline

import "testing"

func TestReasonString(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		r    Reason
		want string
	}{
		{Reason{Kind: ReasonNew}, "new"},
		{Reason{Kind: ReasonInputPending}, "input pending"},
		{Reason{Kind: ReasonNeverFinished}, "output missing (never finished)"},
		{Reason{Kind: ReasonFailed, Detail: "no data"}, "failed last time: no data"},
		{Reason{Kind: ReasonOutputMissing, Detail: "blob x"}, "output missing: blob x"},
		{Reason{Kind: ReasonOutputCorrupt, Detail: "blob x"}, "output corrupt: blob x"},
		{Reason{Kind: ReasonPreviousGone, Detail: "1a2b"}, "changed (previous record 1a2b gone)"},
		{Reason{Kind: ReasonStageVersion, Detail: "train 1 -> 2"}, "stage version train 1 -> 2"},
		{Reason{Kind: ReasonConfigChanged, Detail: "a.b 1 -> 2"}, "config changed: a.b 1 -> 2"},
		{Reason{Kind: ReasonConfigChanged, Detail: "a.b 1 -> 2", Since: "the remote's record 1a2b"}, "config changed: a.b 1 -> 2 (since the remote's record 1a2b)"},
		{Reason{Kind: ReasonInputChanged, Detail: "a/0"}, "input changed: a/0"},
		{Reason{Kind: ReasonInputChanged}, "input changed"},
		{Reason{Kind: ReasonNeededBy, Detail: "b/0 (remote r holds its record, not its outputs)"}, "needed by b/0 (remote r holds its record, not its outputs)"},
		{Reason{Kind: ReasonRemoteMiss, Detail: "r: bad"}, "remote r: bad"},
	} {
		if got := tc.r.String(); got != tc.want {
			t.Errorf("%v.String() = %q, want %q", tc.r.Kind, got, tc.want)
		}
	}
}

// TestReasonKindText: every kind's name decodes back to the kind, and no
// two kinds share a name.
func TestReasonKindText(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for k := ReasonNew; k.valid(); k++ {
		b, err := k.MarshalText()
		if err != nil {
			t.Fatalf("%d: %v", k, err)
		}
		if seen[string(b)] {
			t.Errorf("kind name %q used twice", b)
		}
		seen[string(b)] = true
		var back ReasonKind
		if err := back.UnmarshalText(b); err != nil || back != k {
			t.Errorf("UnmarshalText(%q) = %v, %v, want %v", b, back, err, k)
		}
	}
	if len(seen) != len(reasonKinds)-1 {
		t.Errorf("%d kinds named, want %d", len(seen), len(reasonKinds)-1)
	}
	var k ReasonKind
	if err := k.UnmarshalText([]byte("reworded")); err == nil {
		t.Error("UnmarshalText of an unknown name succeeded")
	}
	if _, err := ReasonKind(0).MarshalText(); err == nil {
		t.Error("MarshalText of the zero kind succeeded")
	}
}

func TestOnlyReasons(t *testing.T) {
	t.Parallel()
	rs := []Reason{{Kind: ReasonNew}, {Kind: ReasonInputPending}}
	if !OnlyReasons(rs, ReasonNew, ReasonInputPending) {
		t.Error("OnlyReasons(new, input pending; new, input pending) = false")
	}
	if OnlyReasons(rs, ReasonNew) {
		t.Error("OnlyReasons(new, input pending; new) = true")
	}
	if !OnlyReasons(nil, ReasonNew) {
		t.Error("OnlyReasons(nil) = false")
	}
}
