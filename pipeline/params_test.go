package pipeline

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

type subParams struct {
	Eta    float64   `toml:"eta"`
	Hidden []int     `toml:"hidden"`
	Mask   string    `toml:"mask"`
	Gains  []float64 `toml:"gains"`
}

type testParams struct {
	Seed  int64      `toml:"seed"`
	On    bool       `toml:"on"`
	Local *subParams `toml:"local"`
	BP    *subParams `toml:"bp"`
}

func TestEncodeParamsCanonical(t *testing.T) {
	t.Parallel()
	p := &testParams{Seed: 3, On: true, Local: &subParams{Eta: 0.02, Hidden: []int{512, 256}, Mask: "refractory", Gains: []float64{1, 1e-7}}}
	ps, err := EncodeParams("train", p)
	if err != nil {
		t.Fatal(err)
	}
	got := ParamsText(ps)
	want := `train.local.eta 0.02
train.local.gains [1.0, 1e-07]
train.local.hidden [512, 256]
train.local.mask "refractory"
train.on true
train.seed 3
`
	if got != want {
		t.Fatalf("EncodeParams =\n%s\nwant\n%s", got, want)
	}
	// Round trip through the canonical text.
	back := &testParams{}
	parsed, err := ParseParamsText(got)
	if err != nil {
		t.Fatal(err)
	}
	if err := DecodeParams("train", parsed, back); err != nil {
		t.Fatal(err)
	}
	ps2, _ := EncodeParams("train", back)
	if ParamsText(ps2) != got {
		t.Fatalf("round trip changed params:\n%s", ParamsText(ps2))
	}
	// Unknown names are rejected.
	if err := DecodeParams("train", []Param{{"train.nope", "1"}}, &testParams{}); err == nil {
		t.Fatal("DecodeParams accepted an unknown param")
	}
}

func TestDiffParams(t *testing.T) {
	t.Parallel()
	old := []Param{{"train.eta", "0.02"}, {"train.gone", "1"}, {"train.same", "x"}}
	cur := []Param{{"train.eta", "0.01"}, {"train.new", "2"}, {"train.same", "x"}}
	got := DiffParams(old, cur)
	for _, want := range []string{"train.eta 0.02 -> 0.01", "train.new (new) 2", "train.gone (removed) 1"} {
		if !strings.Contains(got, want) {
			t.Errorf("DiffParams = %q, missing %q", got, want)
		}
	}
}

// A list of records is compared field by field: the change names the
// element and field that changed, not the two whole lists; a list of
// numbers reads whole; an element added to a list of records is named
// alone.
func TestDiffParamsRecords(t *testing.T) {
	t.Parallel()
	old := []Param{
		{"render.rows", `[{label = "a", param = "$10^{-3}$"}, {label = "b", param = "$3{\\cdot}10^{-3}$", cells = [{decimals = 1}]}]`},
		{"train.hidden", "[256, 128]"},
		{"agg.cells", `[{seeds = [0, 1]}]`},
	}
	cur := []Param{
		{"render.rows", `[{label = "a", param = "$10^{-3}$"}, {label = "b", param = "$2{\\cdot}10^{-3}$", cells = [{decimals = 2}], note = "x"}]`},
		{"train.hidden", "[512, 256]"},
		{"agg.cells", `[{seeds = [0, 1]}, {seeds = [2]}]`},
	}
	got := DiffParams(old, cur)
	want := `render.rows[1].cells[0].decimals 1 -> 2, render.rows[1].note (new) "x", render.rows[1].param "$3{\\cdot}10^{-3}$" -> "$2{\\cdot}10^{-3}$", ` +
		`train.hidden [256, 128] -> [512, 256], agg.cells[1] (new) {seeds = [2]}`
	if got != want {
		t.Errorf("DiffParams =\n%s\nwant\n%s", got, want)
	}
}

// A param that is a JSON document in a string (a figure's layout) is
// compared field by field like a record: the plan names the point whose x
// changed, not 9,576 characters of JSON.
func TestDiffParamsJSONString(t *testing.T) {
	t.Parallel()
	layout := func(x int) string {
		return strconv.Quote(fmt.Sprintf(`{"name":"ksweep","panels":[{"xlabel":"K","series":[{"name":"night","points":[{"id":"fig/ksweep/night/%d","x":%d}]}]}]}`, x, x))
	}
	got := DiffParams([]Param{{"figure.layout", layout(5000)}}, []Param{{"figure.layout", layout(4000)}})
	want := `figure.layout.panels[0].series[0].points[0].id "fig/ksweep/night/5000" -> "fig/ksweep/night/4000", figure.layout.panels[0].series[0].points[0].x 5000 -> 4000`
	if got != want {
		t.Errorf("DiffParams =\n%s\nwant\n%s", got, want)
	}
	// A plain string param is still shown whole.
	if got := DiffParams([]Param{{"a.b", `"x"`}}, []Param{{"a.b", `"y"`}}); got != `a.b "x" -> "y"` {
		t.Errorf("DiffParams(string) = %s", got)
	}
}

// Records added, removed or edited in a list are matched by their identity
// field (label here), or whole when no field is common to all: the diff
// names each added or removed element by its index and identity.
func TestDiffParamsListIdentity(t *testing.T) {
	t.Parallel()
	rows := func(labels ...string) string {
		var parts []string
		for _, l := range labels {
			parts = append(parts, fmt.Sprintf(`{label = %q, param = "p"}`, l))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	for _, tc := range []struct {
		name     string
		old, cur string
		want     string
	}{
		{"added at the end", rows("a", "b"), rows("a", "b", "c"), `r.rows[2] (new) {label = "c"}`},
		{"added in the middle", rows("a", "b", "c"), rows("a", "x", "b", "c"), `r.rows[1] (new) {label = "x"}`},
		{"removed", rows("a", "b", "c"), rows("a", "c"), `r.rows[1] (removed) {label = "b"}`},
		{"relabelled in place", rows("a", "b", "c"), rows("a", "B", "c"), `r.rows[1].label "b" -> "B"`},
		{"added and edited", rows("a", "b"), `[{label = "a", param = "q"}, {label = "n", param = "p"}, {label = "b", param = "p"}]`,
			`r.rows[0].param "p" -> "q", r.rows[1] (new) {label = "n"}`},
		{"no identity field", `[{status = "n/a"}, {seeds = "0"}]`, `[{status = "n/a"}, {status = "run"}, {seeds = "0"}]`,
			`r.rows[1] (new) {status = "run"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := DiffParams([]Param{{"r.rows", tc.old}}, []Param{{"r.rows", tc.cur}}); got != tc.want {
				t.Errorf("DiffParams =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// A field tagged omitzero is left out of the canonical text while zero, so
// adding such an option keeps every existing key, and is encoded once set.
func TestEncodeParamsOmitZero(t *testing.T) {
	t.Parallel()
	type withOption struct {
		Seed  int64   `toml:"seed"`
		Steps int     `toml:"steps,omitzero"`
		Noise float64 `toml:"noise,omitzero"`
		Mode  string  `toml:"mode,omitzero"`
	}
	type without struct {
		Seed int64 `toml:"seed"`
	}
	a, _ := EncodeParams("train", &withOption{Seed: 4})
	b, _ := EncodeParams("train", &without{Seed: 4})
	if ParamsText(a) != ParamsText(b) {
		t.Fatalf("zero omitzero fields changed the text:\n%s\nwant\n%s", ParamsText(a), ParamsText(b))
	}
	c, _ := EncodeParams("train", &withOption{Seed: 4, Steps: 5, Noise: 0.2, Mode: "x"})
	want := "train.mode \"x\"\ntrain.noise 0.2\ntrain.seed 4\ntrain.steps 5\n"
	if got := ParamsText(c); got != want {
		t.Fatalf("set omitzero fields:\n%s\nwant\n%s", got, want)
	}
	back := &withOption{}
	parsed, _ := ParseParamsText(want)
	if err := DecodeParams("train", parsed, back); err != nil || back.Steps != 5 || back.Mode != "x" {
		t.Fatalf("round trip: %+v, %v", back, err)
	}
}

// recordParams has a list of records, as the aggregate stage's params do.
type recordParams struct {
	Table string   `toml:"table"`
	Cells []record `toml:"cells"`
	Extra []record `toml:"extra,omitzero"`
	Notes []string `toml:"notes,omitempty"`
}

type record struct {
	Status string     `toml:"status"`
	Seeds  []int64    `toml:"seeds,omitempty"`
	Ref    int        `toml:"ref,omitzero"`
	Scale  float64    `toml:"scale,omitzero"`
	Sub    *subParams `toml:"sub"`
	On     bool       `toml:"on,omitzero"`
}

// A list of records is one line of inline tables, keys sorted, each
// record's omitted fields left out; it decodes back to the same records.
func TestEncodeParamsRecords(t *testing.T) {
	t.Parallel()
	p := &recordParams{Table: "t", Cells: []record{
		{Status: "run", Seeds: []int64{1, 2}, Ref: -1, Scale: 0.5},
		{Status: "n/a", Seeds: []int64{}},
		{Status: "x\ty", Sub: &subParams{Eta: 2, Mask: "m"}, On: true},
	}, Notes: []string{}}
	ps, err := EncodeParams("aggregate", p)
	if err != nil {
		t.Fatal(err)
	}
	got := ParamsText(ps)
	want := `aggregate.cells [{ref = -1, scale = 0.5, seeds = [1, 2], status = "run"}, {status = "n/a"}, {on = true, status = "x\ty", sub = {eta = 2.0, gains = [], hidden = [], mask = "m"}}]
aggregate.table "t"
`
	if got != want {
		t.Fatalf("EncodeParams =\n%s\nwant\n%s", got, want)
	}
	parsed, err := ParseParamsText(got)
	if err != nil {
		t.Fatal(err)
	}
	back := &recordParams{}
	if err := DecodeParams("aggregate", parsed, back); err != nil {
		t.Fatal(err)
	}
	if len(back.Cells) != 3 || back.Cells[0].Ref != -1 || back.Cells[2].Sub == nil || back.Cells[2].Sub.Mask != "m" || back.Cells[1].Sub != nil {
		t.Fatalf("decoded %+v", back)
	}
	ps2, err := EncodeParams("aggregate", back)
	if err != nil || ParamsText(ps2) != got {
		t.Fatalf("round trip changed params (%v):\n%s", err, ParamsText(ps2))
	}
	// An empty list that is not omitted is kept: it is not the same
	// params as no list.
	ps3, _ := EncodeParams("aggregate", &recordParams{Table: "t", Cells: []record{}})
	if got := ParamsText(ps3); got != "aggregate.cells []\naggregate.table \"t\"\n" {
		t.Fatalf("empty list: %q", got)
	}
}

// The decoder rejects what the records cannot hold, naming the key.
func TestDecodeParamsRecordsInvalid(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, value, want string }{
		{"unknown key", `[{status = "run", nope = 1}]`, "nope"},
		{"wrong type", `[{status = 3}]`, "status"},
		{"not a table", `["run"]`, "cells"},
		{"unterminated", `[{status = "run"}`, "aggregate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := DecodeParams("aggregate", []Param{{"aggregate.cells", tc.value}}, &recordParams{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("DecodeParams(%s) = %v, want an error naming %q", tc.value, err, tc.want)
			}
		})
	}
}

// Strings are TOML basic strings: what strconv.Quote writes for every
// printable string (so no existing key changes), and a \u escape for the
// control characters Go would write as \a, \v or \xNN.
func TestTomlQuote(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "plain", `a "b" \c`, "tab\tnl\n", "é ü 10^{-4}", "\ufeff", "\U000e0001"} {
		got, err := tomlQuote(s)
		if err != nil || got != strconv.Quote(s) {
			t.Errorf("tomlQuote(%q) = %s, %v; want %s", s, got, err, strconv.Quote(s))
		}
	}
	if got, _ := tomlQuote("a\x07\x0b\x01\x7f"); got != `"a\u0007\u000b\u0001\u007f"` {
		t.Errorf("control characters: %s", got)
	}
	if _, err := tomlQuote("\xff"); err == nil {
		t.Error("tomlQuote accepted invalid UTF-8")
	}
}

// FuzzParams: any params text the decoder accepts into a list of records
// encodes canonically, and the canonical text decodes back to itself.
func FuzzParams(f *testing.F) {
	f.Add("t.table \"x\"\nt.cells [{status = \"run\", seeds = [1, 2], ref = -1}, {status = \"n/a\", sub = {eta = 0.5, mask = \"\\u0007\"}}]\n")
	f.Add("t.cells []\nt.notes [\"a\", \"\"]\nt.extra [{}]\n")
	f.Add("t.cells [{scale = nan, on = false}, {scale = -inf}]\n")
	f.Fuzz(func(t *testing.T, text string) {
		ps, err := ParseParamsText(text)
		if err != nil {
			return
		}
		p := &recordParams{}
		if DecodeParams("t", ps, p) != nil {
			return
		}
		enc, err := EncodeParams("t", p)
		if err != nil {
			// Only a string TOML cannot carry may fail to encode.
			if !strings.Contains(err.Error(), "not UTF-8") {
				t.Fatalf("EncodeParams of decoded params: %v", err)
			}
			return
		}
		canon := ParamsText(enc)
		parsed, err := ParseParamsText(canon)
		if err != nil {
			t.Fatalf("canonical text does not parse: %v\n%s", err, canon)
		}
		q := &recordParams{}
		if err := DecodeParams("t", parsed, q); err != nil {
			t.Fatalf("canonical text does not decode: %v\n%s", err, canon)
		}
		enc2, err := EncodeParams("t", q)
		if err != nil || ParamsText(enc2) != canon {
			t.Fatalf("canonical text changed on a round trip (%v):\n%s\nthen\n%s", err, canon, ParamsText(enc2))
		}
	})
}

// textValue is a struct with a text form, as stages.Status is.
type textValue struct{ Kind, Why string }

func (v textValue) MarshalText() ([]byte, error) { return []byte(v.Kind + ": " + v.Why), nil }

func (v *textValue) UnmarshalText(b []byte) error {
	k, w, _ := strings.Cut(string(b), ": ")
	*v = textValue{k, w}
	return nil
}

// A value with a text form encodes as that text, a string, both as a
// param and inside a record, exactly as the string it replaces; it decodes
// back through UnmarshalText.
func TestEncodeParamsText(t *testing.T) {
	t.Parallel()
	type typed struct {
		Top   textValue `toml:"top"`
		Cells []struct {
			Status textValue `toml:"status"`
		} `toml:"cells"`
	}
	type plain struct {
		Top   string `toml:"top"`
		Cells []struct {
			Status string `toml:"status"`
		} `toml:"cells"`
	}
	tv := typed{Top: textValue{"not run", "x"}}
	tv.Cells = append(tv.Cells, struct {
		Status textValue `toml:"status"`
	}{textValue{"missing", `a "b"`}})
	pv := plain{Top: "not run: x"}
	pv.Cells = append(pv.Cells, struct {
		Status string `toml:"status"`
	}{`missing: a "b"`})
	a, err := EncodeParams("s", &tv)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := EncodeParams("s", &pv)
	if ParamsText(a) != ParamsText(b) {
		t.Fatalf("typed params:\n%s\nwant the plain string's\n%s", ParamsText(a), ParamsText(b))
	}
	var back typed
	if err := DecodeParams("s", a, &back); err != nil || back.Top != tv.Top || len(back.Cells) != 1 || back.Cells[0] != tv.Cells[0] {
		t.Fatalf("round trip: %+v, %v", back, err)
	}
}
