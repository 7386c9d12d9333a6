package core

import (
	"fmt"
	"math"
	"reflect"
	"strings"
)

// FieldError is an invalid configuration field, named by its TOML key, so
// that a caller holding the configuration file can point at the line that
// set it.
type FieldError struct {
	Field string // TOML key ("eta", "hidden", "anchor[1]")
	Msg   string // the whole message, naming the field
	Err   error  // what it wraps (ErrConfig for LocalConfig), or nil
}

func (e *FieldError) Error() string { return e.Msg }
func (e *FieldError) Unwrap() error { return e.Err }

// CheckFinite returns a FieldError for the first float field of the struct
// cfg points to (or float element of a slice field) that is NaN or
// infinite: no learner setting has a meaning at infinity, and a NaN passes
// every range comparison written as !(x > 0). wrap is what the error wraps.
func CheckFinite(cfg any, wrap error) error {
	v := reflect.Indirect(reflect.ValueOf(cfg))
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ",")
		if name == "" || name == "-" {
			continue
		}
		f := v.Field(i)
		bad := func(field string, x float64) error {
			msg := fmt.Sprintf("%s = %v: must be finite", field, x)
			if wrap != nil {
				msg = fmt.Sprintf("%v: %s", wrap, msg)
			}
			return &FieldError{Field: field, Msg: msg, Err: wrap}
		}
		switch f.Kind() {
		case reflect.Float32, reflect.Float64:
			if x := f.Float(); math.IsNaN(x) || math.IsInf(x, 0) {
				return bad(name, x)
			}
		case reflect.Slice:
			if k := f.Type().Elem().Kind(); k == reflect.Float32 || k == reflect.Float64 {
				for j := 0; j < f.Len(); j++ {
					if x := f.Index(j).Float(); math.IsNaN(x) || math.IsInf(x, 0) {
						return bad(fmt.Sprintf("%s[%d]", name, j), x)
					}
				}
			}
		}
	}
	return nil
}
