package pipeline

import (
	"bytes"
	"encoding"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// Param is one resolved parameter of a cell: a dotted name (prefixed by the
// stage name, e.g. "train.local.eta") and its value in canonical TOML syntax.
type Param struct{ Name, Value string }

// EncodeParams returns the canonical form of a params struct: one
// "name value" line per leaf field, sorted by name, values in TOML syntax
// with a fixed float format. Equal configs give equal text whatever the
// order, comments or spelling of the TOML they came from. Nil pointer fields
// are omitted (an unused learner's sub-config is not part of the key), and
// so is a field tagged `toml:"name,omitzero"` while it holds its zero value:
// a new option whose zero value means "off" leaves the key of every cell
// that does not use it unchanged, so adding it reruns nothing. A field
// tagged omitempty is left out while it is empty: zero, or a slice, map or
// string of length 0.
//
// A slice of structs (a list of records, TOML's array of tables) is one
// line whose value is an array of inline tables, each table's keys sorted
// and its omitted fields left out by the same rules:
//
//	aggregate.cells [{cell = "train/a", seeds = "1 2", status = "run"}, {status = "n/a"}]
//
// so a record list is as canonical as a list of numbers, and one record
// per element replaces parallel slices that must be kept in step.
func EncodeParams(prefix string, params any) ([]Param, error) {
	var out []Param
	if err := flatten(prefix, reflect.ValueOf(params), &out); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ParamsText joins params into the canonical text stored in specs and
// manifests: "name value" lines.
func ParamsText(ps []Param) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.Name)
		b.WriteByte(' ')
		b.WriteString(p.Value)
		b.WriteByte('\n')
	}
	return b.String()
}

// ParseParamsText splits canonical text back into params.
func ParseParamsText(text string) ([]Param, error) {
	var out []Param
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if line == "" {
			continue
		}
		name, value, ok := strings.Cut(line, " ")
		if !ok {
			return nil, fmt.Errorf("params line %d: %q has no value", i+1, line)
		}
		out = append(out, Param{name, value})
	}
	return out, nil
}

// DecodeParams fills dst (a pointer from Stage.NewParams) from canonical
// params whose names start with prefix + ".". Unknown names are an error.
func DecodeParams(prefix string, ps []Param, dst any) error {
	var doc bytes.Buffer
	for _, p := range ps {
		name, ok := strings.CutPrefix(p.Name, prefix+".")
		if !ok {
			return fmt.Errorf("param %s: not under %s", p.Name, prefix)
		}
		fmt.Fprintf(&doc, "%s = %s\n", name, p.Value)
	}
	md, err := toml.Decode(doc.String(), dst)
	if err != nil {
		return fmt.Errorf("params of %s: %w", prefix, err)
	}
	if u := md.Undecoded(); len(u) > 0 {
		return fmt.Errorf("params of %s: unknown %s", prefix, u[0])
	}
	return nil
}

func flatten(name string, v reflect.Value, out *[]Param) error {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	if v.Kind() == reflect.Struct && !isText(v) {
		for _, f := range fieldsOf(v) {
			if err := flatten(name+"."+f.key, f.v, out); err != nil {
				return err
			}
		}
		return nil
	}
	s, err := tomlValue(v)
	if err != nil {
		return fmt.Errorf("param %s: %w", name, err)
	}
	*out = append(*out, Param{name, s})
	return nil
}

// field is one encoded field of a params struct: its TOML key and value.
type field struct {
	key string
	v   reflect.Value
}

// fieldsOf lists the fields of struct v that are encoded, in declaration
// order: exported, not tagged "-", and not left out by omitzero or
// omitempty.
func fieldsOf(v reflect.Value) []field {
	var out []field
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		opts := strings.Split(f.Tag.Get("toml"), ",")
		key := opts[0]
		if key == "-" {
			continue
		}
		if slices.Contains(opts[1:], "omitzero") && v.Field(i).IsZero() || slices.Contains(opts[1:], "omitempty") && isEmpty(v.Field(i)) {
			continue
		}
		if key == "" {
			key = f.Name
		}
		out = append(out, field{key, v.Field(i)})
	}
	return out
}

// isEmpty is omitempty's test: a slice, map or string of length 0, or any
// other zero value.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Slice, reflect.Map, reflect.String:
		return v.Len() == 0
	}
	return v.IsZero()
}

// isText reports whether v encodes itself as text (encoding.TextMarshaler):
// a value type with a text form (stages.Status) is a string in params, the
// same string as the one it replaces, so its keys do not move. The TOML
// decoder reads it back through encoding.TextUnmarshaler.
func isText(v reflect.Value) bool {
	if !v.IsValid() || !v.CanInterface() {
		return false
	}
	_, ok := v.Interface().(encoding.TextMarshaler)
	return ok && v.Kind() != reflect.Pointer
}

// bareKey is what a key inside an inline table may be without quotes.
var bareKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`).MatchString

// tomlValue formats a leaf value in canonical TOML; a struct (an element
// of a list of records) is an inline table with its keys sorted.
func tomlValue(v reflect.Value) (string, error) {
	if isText(v) {
		b, err := v.Interface().(encoding.TextMarshaler).MarshalText()
		if err != nil {
			return "", err
		}
		return tomlQuote(string(b))
	}
	switch v.Kind() {
	case reflect.Bool:
		return strconv.FormatBool(v.Bool()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(v.Uint(), 10), nil
	case reflect.Float32, reflect.Float64:
		return formatFloat(v.Float(), v.Type().Bits()), nil
	case reflect.String:
		return tomlQuote(v.String())
	case reflect.Slice, reflect.Array:
		parts := make([]string, v.Len())
		for i := range parts {
			s, err := tomlValue(v.Index(i))
			if err != nil {
				return "", fmt.Errorf("[%d]: %w", i, err)
			}
			parts[i] = s
		}
		return "[" + strings.Join(parts, ", ") + "]", nil
	case reflect.Pointer:
		if v.IsNil() {
			return "", fmt.Errorf("nil %s in a list", v.Type())
		}
		return tomlValue(v.Elem())
	case reflect.Struct:
		return inlineTable(v)
	}
	return "", fmt.Errorf("unsupported kind %s", v.Kind())
}

// inlineTable formats struct v as a TOML inline table, keys sorted, nil
// pointer fields (an unused sub-record) left out.
func inlineTable(v reflect.Value) (string, error) {
	fields := fieldsOf(v)
	slices.SortFunc(fields, func(a, b field) int { return strings.Compare(a.key, b.key) })
	var parts []string
	for _, f := range fields {
		if f.v.Kind() == reflect.Pointer && f.v.IsNil() {
			continue
		}
		if !bareKey(f.key) {
			return "", fmt.Errorf("key %q: want letters, digits, - and _", f.key)
		}
		s, err := tomlValue(f.v)
		if err != nil {
			return "", fmt.Errorf("%s: %w", f.key, err)
		}
		parts = append(parts, f.key+" = "+s)
	}
	if len(parts) == 0 {
		return "{}", nil
	}
	return "{" + strings.Join(parts, ", ") + "}", nil
}

// tomlQuote is s as a TOML basic string. It is strconv.Quote's text for
// every string TOML can hold except that the control characters Go spells
// \a, \v or \xNN are written \u00NN (TOML has no such escapes), so the
// canonical form of every printable string is what strconv.Quote gives.
func tomlQuote(s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("string %q is not UTF-8", s)
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			switch {
			case r < ' ' || r == 0x7f || r < 0x10000 && !strconv.IsPrint(r):
				fmt.Fprintf(&b, `\u%04x`, r)
			case !strconv.IsPrint(r):
				fmt.Fprintf(&b, `\U%08x`, r)
			default:
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String(), nil
}

// formatFloat gives the shortest decimal that round-trips at the field's
// precision, always with a '.' or exponent so TOML reads it back as a float.
func formatFloat(f float64, bits int) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	s := strconv.FormatFloat(f, 'g', -1, bits)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	if strings.Contains(s, "e") && !strings.Contains(s, ".") {
		// TOML accepts 1e-05; keep Go's form.
		return s
	}
	return s
}
