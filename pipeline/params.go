package pipeline

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

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
// that does not use it unchanged, so adding it reruns nothing.
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
	if v.Kind() == reflect.Struct {
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			opts := strings.Split(f.Tag.Get("toml"), ",")
			tag := opts[0]
			if tag == "-" {
				continue
			}
			if slices.Contains(opts[1:], "omitzero") && v.Field(i).IsZero() {
				continue
			}
			if tag == "" {
				tag = f.Name
			}
			if err := flatten(name+"."+tag, v.Field(i), out); err != nil {
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

// tomlValue formats a leaf value in canonical TOML.
func tomlValue(v reflect.Value) (string, error) {
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
		return strconv.Quote(v.String()), nil
	case reflect.Slice, reflect.Array:
		parts := make([]string, v.Len())
		for i := range parts {
			s, err := tomlValue(v.Index(i))
			if err != nil {
				return "", err
			}
			parts[i] = s
		}
		return "[" + strings.Join(parts, ", ") + "]", nil
	}
	return "", fmt.Errorf("unsupported kind %s", v.Kind())
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
