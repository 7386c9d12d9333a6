package experiments

import (
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"

	"repro/pipeline"
)

// Tables and figures are declared one way (docs/declarations.md): a
// declaration type of this package decodes one [[table]] or [[figure]]
// entry (TableSpec, FigureSpec), small checks per entity (checkTable,
// checkRow, ...; checkFigure, checkPanel, ...) return a fieldError naming
// the key at fault below the entry, loadDecls decodes the entries and puts
// that key's file:line on the error, and one function per kind translates
// a checked declaration into the typed params stages owns (tableOf:
// stages.AggregateParams and stages.RenderParams; figureLayout:
// stages.FigLayout).

// declNameRe is what a table or figure name (and a figure series', column's or
// row's ID) may be: it names paper/tables/<name>.tex or
// paper/figures/<name>.*.
var declNameRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`).MatchString

// declNameRule is declNameRe for messages. The 64 characters are twice the
// longest name today (32) and keep paper/tables/.tmp-<name>.ids.json-<n>,
// the longest file a name makes, far below the 255 bytes a file name may
// have (a name of 300 characters passed load and failed the run).
const declNameRule = "lower-case letters, digits, - and _, at most 64 characters"

// maxDeclFloat bounds the magnitude of every number of a declaration
// (sizes, offsets, ticks, ranges, x positions, line values): the largest
// today is an x position of 10,000 (a buffer size; the config's bounds stop
// buffers at 1,000,000), and 1e9 keeps every drawn coordinate far inside
// what the plotter and the image take. NaN and infinities are refused at
// load, where they would otherwise reach the sidecar's JSON.
const maxDeclFloat = 1e9

// checkFloats checks every number of a decoded declaration v (a struct
// with toml tags, its slices and pointers): finite and at most
// maxDeclFloat in magnitude. The error names the key below the entry
// (panel[0].series[1].offset) and, in a list, the element.
func checkFloats(v reflect.Value, key string) error {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return checkFloats(v.Elem(), key)
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			tag, _, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ",")
			if tag == "" || tag == "-" {
				continue
			}
			k := tag
			if key != "" {
				k = key + "." + tag
			}
			if err := checkFloats(v.Field(i), k); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			e := v.Index(i)
			if k := e.Kind(); k == reflect.Float64 || k == reflect.Float32 {
				if msg := badFloat(e.Float()); msg != "" {
					return badField(key, "element %d (%v): %s", i, e.Float(), msg)
				}
				continue
			}
			if err := checkFloats(e, fmt.Sprintf("%s[%d]", key, i)); err != nil {
				return err
			}
		}
	case reflect.Float64, reflect.Float32:
		if msg := badFloat(v.Float()); msg != "" {
			return badField(key, "%v: %s", v.Float(), msg)
		}
	}
	return nil
}

// badFloat is what is wrong with x as a declaration's number, or "".
func badFloat(x float64) string {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return "want a finite number"
	case math.Abs(x) > maxDeclFloat:
		return fmt.Sprintf("want a magnitude of at most %g", maxDeclFloat)
	}
	return ""
}

// loadDecls decodes every [[section]] entry of cfg into a new T and
// checks it: its name (declNameRe, unique among the entries) and then check.
// A fieldError from check is reported at the file:line of its key (or of
// the entry when the key is not in the file) as
// "<section> <name>.<key>: <msg>"; other errors pass unchanged.
func loadDecls[T any](cfg *pipeline.Config, section string, name func(*T) string, check func(*T) error) ([]*T, error) {
	sec, ok := cfg.Section(section)
	if !ok {
		return nil, nil
	}
	var prims []toml.Primitive
	if err := cfg.DecodeAt(sec, &prims, section); err != nil {
		return nil, err
	}
	var out []*T
	seen := map[string]bool{}
	for i, prim := range prims {
		at := fmt.Sprintf("%s[%d]", section, i)
		d := new(T)
		if err := cfg.DecodeAt(prim, d, at); err != nil {
			return nil, err
		}
		n := name(d)
		var err error
		switch {
		case !declNameRe(n):
			err = badField("name", "%q: want %s", n, declNameRule)
		case seen[n]:
			err = badField("name", "duplicate %s", section)
		default:
			// Numbers first: a NaN passes every comparison of check.
			if err = checkFloats(reflect.ValueOf(d), ""); err == nil {
				err = check(d)
			}
		}
		if fe, ok := err.(*fieldError); ok {
			line := cfg.KeyLine(at + "." + fe.key)
			if line == 0 {
				line = cfg.KeyLine(at)
			}
			return nil, cfg.ErrAt(line, fmt.Sprintf("%s %s.%s", section, n, fe.key), "%s", fe.msg)
		} else if err != nil {
			return nil, err
		}
		seen[n] = true
		out = append(out, d)
	}
	return out, nil
}

// fieldError is a bad field of a declaration: its key below the entry
// (panel[0].series[1].xs) and what is wrong.
type fieldError struct{ key, msg string }

func (e *fieldError) Error() string { return e.key + ": " + e.msg }

// badField is the error of field key ("" for the entity as a whole).
func badField(key, format string, args ...any) error {
	return &fieldError{key, fmt.Sprintf(format, args...)}
}

// under prefixes the key of a field error with the entity it is in
// ("panel[0]"); other errors pass unchanged.
func under(prefix string, err error) error {
	if fe, ok := err.(*fieldError); ok && fe.key == "" {
		return &fieldError{prefix, fe.msg}
	} else if ok {
		return &fieldError{prefix + "." + fe.key, fe.msg}
	}
	return err
}

// oneOf is a list of choices for a message: "a, b or c".
func oneOf(choices []string) string {
	if len(choices) < 2 {
		return strings.Join(choices, "")
	}
	return strings.Join(choices[:len(choices)-1], ", ") + " or " + choices[len(choices)-1]
}

// prefixed is each of list with prefix.
func prefixed(prefix string, list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = prefix + s
	}
	return out
}
