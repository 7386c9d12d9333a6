package experiments

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"repro/pipeline"
)

// declTestConfig is figuresTestConfig without a published file to read.
var declTestConfig = strings.Replace(figuresTestConfig, "published = \"pub.toml\"\n", "", 1)

// TestDeclFieldErrors: a bad [[figure]] or [[table]] field is reported as
// "<figure|table> <name>.<key>" at the line of that key (or, for an entity
// as a whole, of its header), by the one loader both kinds share.
func TestDeclFieldErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		from, to string
		key      string // the ConfigError's key
		at       string // the text of the line it must name, after the entry's header
		msg      string // part of the message
	}{
		{"figure name", `name = "f"`, `name = "F f"`, `figure F f.name`, `name = "F f"`, "want lower-case letters"},
		{"figure size", `label = "fig:f"`, "label = \"fig:f\"\nsize = [1.0]", "figure f.size", "size = [1.0]", "want [width, height]"},
		{"panel legend", `xlog = true`, "xlog = true\nlegend = \"top\"", "figure f.panel[0].legend", `legend = "top"`, "want tl, tr, bl, br, below or none"},
		{"panel yrange", `xlog = true`, "xlog = true\nyrange = [5.0, 1.0]", "figure f.panel[0].yrange", "yrange = [5.0, 1.0]", "min < max"},
		{"series name", `name = "m"`, `name = "s"`, "figure f.panel[0].series[1].name", `name = "s"`, "duplicate series"},
		{"series no experiments", `experiments = ["x", "y"]`, `experiments = []`, "figure f.panel[0].series[0].experiments", "experiments = []", "missing or empty"},
		{"series misspelt experiment", `experiments = ["x", "y"]`, `experiments = ["x", "yy"]`, "figure f.panel[0].series[0].experiments", `experiments = ["x", "yy"]`, `no experiment "yy"`},
		{"series protocol", `x = "param:bp.lr"`, "x = \"param:bp.lr\"\nprotocol = \"iid\"", "figure f.panel[0].series[0].protocol", `protocol = "iid"`, "want sequential, static or single_pass"},
		{"series x", `x = "param:bp.lr"`, `x = "metric:loss"`, "figure f.panel[0].series[0].x", `x = "metric:loss"`, "or metric:replay_updates"},
		{"series x and xs", `xs = [1.0]`, "xs = [1.0]\nx = \"param:bp.lr\"", "figure f.panel[0].series[1].x", `x = "param:bp.lr"`, "set x or xs, not both"},
		{"series xs", `xs = [1.0]`, `xs = [1.0, 2.0]`, "figure f.panel[0].series[1].xs", "xs = [1.0, 2.0]", "2 values for 1 experiments"},
		{"series minus", `minus = ["y"]`, `minus = ["y", "x"]`, "figure f.panel[0].series[1].minus", `minus = ["y", "x"]`, "2 entries for 1 experiments"},
		{"series labels", `x = "param:bp.lr"`, "x = \"param:bp.lr\"\nlabels = [\"a\"]", "figure f.panel[0].series[0].labels", `labels = ["a"]`, "1 labels for 2 experiments"},
		{"series no_mean", `x = "param:bp.lr"`, "x = \"param:bp.lr\"\nno_mean = [\"z\"]", "figure f.panel[0].series[0].no_mean", `no_mean = ["z"]`, "not one of the series' experiments"},
		{"series errors", `errors = "bootstrap"`, `errors = "ci"`, "figure f.panel[0].series[1].errors", `errors = "ci"`, "want sd, bootstrap or none"},
		{"series resamples", `x = "param:bp.lr"`, "x = \"param:bp.lr\"\nresamples = 10", "figure f.panel[0].series[0].resamples", "resamples = 10", `with errors = "bootstrap" only`},
		{"series marker", `x = "param:bp.lr"`, "x = \"param:bp.lr\"\nmarker = \"blob\"", "figure f.panel[0].series[0].marker", `marker = "blob"`, "want one of circle"},
		{"series variants", `x = "param:bp.lr"`, "x = \"param:bp.lr\"\nvariants = [\"a\", \"b\"]", "figure f.panel[0].series[0].variants", `variants = ["a", "b"]`, `without select = "best_mean"`},
		{"series energy", `x = "param:bp.lr"`, `energy = "spike"`, "figure f.panel[0].series[0].energy", `energy = "spike"`, "no [spike] section"},
		{"series category", `needs = "a feature"` + "\n[[figure.panel.series]]", "needs = \"a feature\"\ncategories = [\"a\"]\n[[figure.panel.series]]", "figure f.panel[1].series[0].xs", "xs = [2.0]", "want a category position 1..1"},
		{"line both", `experiment = "z"`, "experiment = \"z\"\nvalue = 1.0", "figure f.panel[0].line[0]", "[[figure.panel.line]]", "set experiment or value, not both"},
		{"line experiment", `experiment = "z"`, `experiment = "zz"`, "figure f.panel[0].line[0].experiment", `experiment = "zz"`, `no experiment "zz"`},
		{"line protocol", `protocol = "static"` + "\n[[figure.panel]]", "protocol = \"iid\"\n[[figure.panel]]", "figure f.panel[0].line[0].protocol", `protocol = "iid"`, `"iid": want sequential`},
		{"table bold", `bold = ["sequential"]`, `bold = ["single_pass"]`, "table t.bold", `bold = ["single_pass"]`, `"single_pass" is not a column`},
		{"table row cells", `cells = { static = "z" }`, `cells = { iid = "z" }`, "table t.row[1].cells", `cells = { iid = "z" }`, `"iid" is not a column`},
		{"table row settle", `cells = { static = "z" }`, `settle = ["iid"]`, "table t.row[1].settle", `settle = ["iid"]`, `"iid" is not a [[table.column]] id`},
		{"table row settle experiment", `cells = { static = "z" }`, `settle = ["static"]`, "table t.row[1].settle", `settle = ["static"]`, `experiment "y" is not marked settle = true`},
		{"table columns retired", `bold = ["sequential"]`, "bold = [\"sequential\"]\ncolumns = [\"sequential\"]", "table t.columns", `columns = ["sequential"]`, "declare each column as a [[table.column]]"},
		{"table column id", `id = "static"`, `id = "sequential"`, "table t.column[1].id", `id = "sequential"`, `"sequential": want a unique name`},
		{"table compare", `b = "y"`, `b = "w"`, "table t.compare[0]", "[[table.compare]]", "must both be rows"},
		// The review's probes: NaN, infinities and huge numbers in any
		// float of a declaration, a huge size and a long name, each at
		// its file:line.
		{"size NaN", `label = "fig:f"`, "label = \"fig:f\"\nsize = [nan, 3.0]", "figure f.size", "size = [nan, 3.0]", "element 0 (NaN): want a finite number"},
		{"size huge", `label = "fig:f"`, "label = \"fig:f\"\nsize = [1e9, 1e9]", "figure f.size", "size = [1e9, 1e9]", "want at most 20 inches a side"},
		{"size beyond every bound", `label = "fig:f"`, "label = \"fig:f\"\nsize = [1e12, 3.0]", "figure f.size", "size = [1e12, 3.0]", "want a magnitude of at most 1e+09"},
		{"offset inf", `errors = "bootstrap"`, "errors = \"bootstrap\"\noffset = inf", "figure f.panel[0].series[1].offset", "offset = inf", "+Inf: want a finite number"},
		{"xticks NaN", `xlog = true`, "xlog = true\nxticks = [1.0, nan]", "figure f.panel[0].xticks", "xticks = [1.0, nan]", "element 1 (NaN): want a finite number"},
		{"yrange -inf", `xlog = true`, "xlog = true\nyrange = [-inf, 1.0]", "figure f.panel[0].yrange", "yrange = [-inf, 1.0]", "element 0 (-Inf): want a finite number"},
		{"xs NaN", `xs = [1.0]`, `xs = [nan]`, "figure f.panel[0].series[1].xs", "xs = [nan]", "want a finite number"},
		{"line value NaN", `experiment = "z"`, "value = nan", "figure f.panel[0].line[0].value", "value = nan", "want a finite number"},
		{"figure name 300 characters", `name = "f"`, `name = "` + strings.Repeat("f", 300) + `"`, "figure " + strings.Repeat("f", 300) + ".name", `name = "` + strings.Repeat("f", 300) + `"`, "at most 64 characters"},
		{"table name 65 characters", `name = "t"`, `name = "` + strings.Repeat("t", 65) + `"`, "table " + strings.Repeat("t", 65) + ".name", `name = "` + strings.Repeat("t", 65) + `"`, "at most 64 characters"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if !strings.Contains(declTestConfig, c.from) {
				t.Fatalf("the config lacks %q", c.from)
			}
			src := strings.Replace(declTestConfig, c.from, c.to, 1)
			_, err := loadMatrix(src)
			var ce *pipeline.ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v (%T), want a ConfigError", err, err)
			}
			want := lineOf(src, strings.Index(declTestConfig, c.from), c.at)
			if ce.Key != c.key || ce.Line != want || !strings.Contains(ce.Msg, c.msg) {
				t.Errorf("error at %d, key %q: %s\nwant at %d (%s), key %q: …%s…", ce.Line, ce.Key, ce.Msg, want, c.at, c.key, c.msg)
			}
		})
	}
}

// lineOf is the 1-based number of the first line of src at or after byte
// offset whose text is line, else of the last before it (an entity's
// header), or 0.
func lineOf(src string, offset int, line string) int {
	start := strings.LastIndex(src[:offset], "\n") + 1 // of offset's line
	n, found := 0, 0
	for i, l := range strings.Split(src, "\n") {
		switch {
		case l != line:
		case n >= start:
			return i + 1
		default:
			found = i + 1
		}
		n += len(l) + 1
	}
	return found
}

// FuzzDeclFields: checking any decodable [[figure]] or [[table]] entry
// never panics, and a failing check names a field the entry has (by its
// TOML key, every index within its list): the key loadDecls places the
// error at.
func FuzzDeclFields(f *testing.F) {
	figures := strings.SplitAfter(declTestConfig, "[[figure]]\n")[1]
	figures = strings.ReplaceAll(figures, "[[figure.", "[[")
	f.Add(true, figures)
	f.Add(true, "name = \"f\"\n[[panel]]\n[[panel.series]]\nname = \"a\"\nexperiments = [\"x\"]\nenergy = \"dense\"\n")
	f.Add(true, "name = \"f\"\n[[panel]]\ncategories = [\"a\", \"b\"]\n[[panel.series]]\nname = \"a\"\nexperiments = [\"x\"]\nxs = [3.0]\n")
	f.Add(true, "name = \"f\"\n[[panel]]\n[[panel.series]]\nname = \"a\"\nexperiments = [\"x\"]\nselect = \"best_mean\"\nvariants = [\"p\", \"p\"]\nxs = [1.0]\n")
	f.Add(true, "name = \"f\"\n[[panel]]\n[[panel.line]]\nvalue = 1.0\nexperiment = \"x\"\n")
	tables := strings.SplitN(strings.SplitAfter(declTestConfig, "[[table]]\n")[1], "[[figure]]", 2)[0]
	tables = strings.ReplaceAll(tables, "[[table.", "[[")
	f.Add(false, tables)
	f.Add(false, "name = \"m\"\nkind = \"matrix\"\nexperiment = \"x\"\ntasks = 2\n")
	f.Add(false, "name = \"g\"\n[[column]]\nid = \"a\"\nmetric = \"energy.nj\"\n[[row]]\nexperiment = \"x\"\n")
	f.Add(false, "name = \"g\"\n[[column]]\nid = \"a\"\nrelative_to = \"q\"\n[[row]]\nexperiment = \"x\"\n[[row]]\nexperiment = \"x\"\n")
	m, err := loadMatrix(declTestConfig)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, figure bool, entry string) {
		var decl any = &TableSpec{}
		if figure {
			decl = &FigureSpec{}
		}
		if _, err := toml.Decode(entry, decl); err != nil {
			return
		}
		var err error
		switch d := decl.(type) {
		case *FigureSpec:
			err = m.checkFigure(d)
		case *TableSpec:
			d.Published = "" // a file, checked by TestTableSpecErrors
			err = m.checkTable(d)
		}
		if err == nil {
			return
		}
		var fe *fieldError
		if !errors.As(err, &fe) {
			t.Fatalf("error %v (%T) names no field", err, err)
		}
		if fe.msg == "" || !hasField(reflect.ValueOf(decl), fe.key) {
			t.Fatalf("error %q: the entry has no field %q", err, fe.key)
		}
	})
}

// hasField reports whether key (panel[0].series[1].xs) names a field of the
// struct v points to, by its toml tags, with every index within its list.
func hasField(v reflect.Value, key string) bool {
	for _, seg := range strings.Split(key, ".") {
		name, index, indexed := strings.Cut(seg, "[")
		f, ok := tomlField(v, name)
		if !ok {
			return false
		}
		v = f
		if !indexed {
			continue
		}
		i, err := strconv.Atoi(strings.TrimSuffix(index, "]"))
		if err != nil || f.Kind() != reflect.Slice || i < 0 || i >= f.Len() {
			return false
		}
		v = f.Index(i)
	}
	return true
}

// tomlField is v's field (or an embedded struct's) with toml tag name.
func tomlField(v reflect.Value, name string) (reflect.Value, bool) {
	v = reflect.Indirect(v)
	if v.Kind() != reflect.Struct {
		return reflect.Value{}, false
	}
	for i := range v.NumField() {
		sf := v.Type().Field(i)
		if sf.Anonymous {
			if f, ok := tomlField(v.Field(i), name); ok {
				return f, true
			}
			continue
		}
		if sf.Tag.Get("toml") == name {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}
