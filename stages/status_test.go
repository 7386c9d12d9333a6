package stages

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"repro/pipeline"
)

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

// TestStatusKeepsBytes: a table cell's status enters params (and so the
// aggregate's key) and the aggregate's JSON output as the same string as
// before it was typed.
func TestStatusKeepsBytes(t *testing.T) {
	t.Parallel()
	p := &AggregateParams{Table: "t", Rows: []string{"a"}, Protocols: []string{"s", "x", "y"}, Cells: []TableCell{
		{Status: Status{Kind: StatusRun}, Seeds: "0", Cell: "train/a/s"},
		{Status: Status{Kind: StatusNA}},
		{Status: NotRun(`no "c"`)},
	}}
	ps, err := pipeline.EncodeParams("aggregate", p)
	if err != nil {
		t.Fatal(err)
	}
	const want = `aggregate.cells [{cell = "train/a/s", seeds = "0", status = "run"}, {status = "n/a"}, {status = "not run: no \"c\""}]`
	if got := pipeline.ParamsText(ps); !slices.Contains(strings.Split(got, "\n"), want) {
		t.Errorf("params:\n%s\nwant the line\n%s", got, want)
	}
	var back AggregateParams
	if err := pipeline.DecodeParams("aggregate", ps, &back); err != nil || back.Cells[2] != p.Cells[2] || back.Cells[0] != p.Cells[0] {
		t.Errorf("DecodeParams = %+v, %v", back.Cells, err)
	}
	b, err := json.Marshal(AggCell{ID: "t/a/s", Status: Missing("no seed has a result")})
	if err != nil || !json.Valid(b) || !strings.Contains(string(b), `"status":"missing: no seed has a result"`) {
		t.Errorf("AggCell JSON = %s, %v", b, err)
	}
	var c AggCell
	if err := json.Unmarshal([]byte(`{"status": "reworded"}`), &c); err == nil {
		t.Error("an AggCell with an unknown status decoded")
	}
}
