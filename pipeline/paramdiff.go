package pipeline

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// DiffParams describes how params changed: "a.b 1 -> 2, c (new) 3". A
// param whose value is a list or a record (a table's rows, say) is compared
// element by element, so a change names the field that changed
// ("render.rows[1].param "a" -> "b"") or the element added or removed
// ("render.rows[10] (new) {label = "x"}", see diffList) instead of
// printing both whole lists.
func DiffParams(old, cur []Param) string {
	om := make(map[string]string, len(old))
	for _, p := range old {
		om[p.Name] = p.Value
	}
	var parts []string
	seen := map[string]bool{}
	for _, p := range cur {
		seen[p.Name] = true
		ov, ok := om[p.Name]
		switch {
		case !ok:
			parts = append(parts, fmt.Sprintf("%s (new) %s", p.Name, p.Value))
		case ov != p.Value:
			parts = append(parts, diffValueText(p.Name, ov, p.Value)...)
		}
	}
	for _, p := range old {
		if !seen[p.Name] {
			parts = append(parts, fmt.Sprintf("%s (removed) %s", p.Name, p.Value))
		}
	}
	return strings.Join(parts, ", ")
}

// diffValueText describes the change of one param from old to cur, both in
// the canonical TOML syntax. Lists and records are decoded and compared
// structurally; anything else (or text that does not decode) is shown
// whole.
func diffValueText(name, old, cur string) []string {
	whole := []string{fmt.Sprintf("%s %s -> %s", name, old, cur)}
	if ov, cv, ok := decodeJSONStrings(old, cur); ok {
		// A stage whose param is a JSON document (a figure's layout, a
		// table's spec): the fields that changed, never the whole text.
		var out []string
		diffValue(name, ov, cv, &out)
		if len(out) == 0 {
			return whole
		}
		return out
	}
	if !strings.HasPrefix(old, "[") && !strings.HasPrefix(old, "{") {
		return whole
	}
	ov, ok1 := decodeValue(old)
	cv, ok2 := decodeValue(cur)
	if !ok1 || !ok2 {
		return whole
	}
	if _, ok := ov.(map[string]any); !ok && !hasComposite(listOf(ov)) {
		return whole // a list of numbers or strings reads best whole
	}
	var out []string
	diffValue(name, ov, cv, &out)
	if len(out) == 0 {
		return whole
	}
	return out
}

// decodeJSONStrings decodes two params that are TOML strings holding a
// JSON object or array; ok is false unless both are.
func decodeJSONStrings(old, cur string) (ov, cv any, ok bool) {
	dec := func(text string) (any, bool) {
		if !strings.HasPrefix(text, `"`) && !strings.HasPrefix(text, "'") {
			return nil, false
		}
		v, ok := decodeValue(text)
		s, isStr := v.(string)
		if !ok || !isStr {
			return nil, false
		}
		if t := strings.TrimSpace(s); !strings.HasPrefix(t, "{") && !strings.HasPrefix(t, "[") {
			return nil, false
		}
		var out any
		if json.Unmarshal([]byte(s), &out) != nil {
			return nil, false
		}
		return out, true
	}
	ov, ok1 := dec(old)
	cv, ok2 := dec(cur)
	return ov, cv, ok1 && ok2
}

func decodeValue(text string) (any, bool) {
	var m map[string]any
	if _, err := toml.Decode("v = "+text, &m); err != nil {
		return nil, false
	}
	return m["v"], true
}

// diffValue appends "path old -> new" for each leaf that differs between
// two decoded values: records key by key (a key only one side has is new
// or removed), lists of equal length element by element; lists of other
// lengths and leaves are shown whole.
func diffValue(path string, old, cur any, out *[]string) {
	if reflect.DeepEqual(old, cur) {
		return
	}
	om, ok1 := old.(map[string]any)
	cm, ok2 := cur.(map[string]any)
	if ok1 && ok2 {
		keys := map[string]bool{}
		for k := range om {
			keys[k] = true
		}
		for k := range cm {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			o, inOld := om[k]
			c, inCur := cm[k]
			switch {
			case !inOld:
				*out = append(*out, fmt.Sprintf("%s.%s (new) %s", path, k, formatValue(c)))
			case !inCur:
				*out = append(*out, fmt.Sprintf("%s.%s (removed) %s", path, k, formatValue(o)))
			default:
				diffValue(path+"."+k, o, c, out)
			}
		}
		return
	}
	ol, cl := listOf(old), listOf(cur)
	if ol != nil && cl != nil && (hasComposite(ol) || hasComposite(cl)) {
		diffList(path, ol, cl, out)
		return
	}
	*out = append(*out, fmt.Sprintf("%s %s -> %s", path, formatValue(old), formatValue(cur)))
}

// identityKeys are the record fields that name a list element, in order of
// preference: the first that every element of both lists has identifies
// them (a table's rows by label, its cells by cell).
var identityKeys = []string{"id", "name", "label", "experiment", "cell"}

// diffList appends the changes between two lists of records (or lists):
// elements are matched by their identity (identityKeys, or their whole
// value when no key is common to all) along the longest common
// subsequence, so one row added to a table reads "rows[10] (new) {label =
// "x"}" rather than both whole lists. Matched elements are compared field
// by field; between two matches, as many old as new elements are compared
// pairwise in order (an element edited in place, its label too), and
// otherwise the old ones are removed (old index) and the new ones new (new
// index).
func diffList(path string, ol, cl []any, out *[]string) {
	key := identityKey(ol, cl)
	id := func(e any) string {
		if key != "" {
			return formatValue(e.(map[string]any)[key])
		}
		return formatValue(e)
	}
	oid, cid := make([]string, len(ol)), make([]string, len(cl))
	for i, e := range ol {
		oid[i] = id(e)
	}
	for i, e := range cl {
		cid[i] = id(e)
	}
	i, j := 0, 0
	gap := func(ei, ej int) { // old[i:ei] and cur[j:ej] are unmatched
		if ei-i == ej-j {
			for ; i < ei; i, j = i+1, j+1 {
				diffValue(fmt.Sprintf("%s[%d]", path, j), ol[i], cl[j], out)
			}
			return
		}
		for ; i < ei; i++ {
			*out = append(*out, fmt.Sprintf("%s[%d] (removed) %s", path, i, describe(ol[i], key)))
		}
		for ; j < ej; j++ {
			*out = append(*out, fmt.Sprintf("%s[%d] (new) %s", path, j, describe(cl[j], key)))
		}
	}
	for _, m := range lcs(oid, cid) {
		gap(m[0], m[1])
		diffValue(fmt.Sprintf("%s[%d]", path, j), ol[i], cl[j], out)
		i, j = i+1, j+1
	}
	gap(len(ol), len(cl))
}

// identityKey is the first of identityKeys that every element of both
// lists has (all being records), or "" when none does.
func identityKey(ol, cl []any) string {
	for _, k := range identityKeys {
		all := true
		for _, e := range append(slices.Clip(ol), cl...) {
			m, ok := e.(map[string]any)
			if _, has := m[k]; !ok || !has {
				all = false
				break
			}
		}
		if all {
			return k
		}
	}
	return ""
}

// describe is an element added or removed as a diff names it: by its
// identity field when the list has one ({label = "x"}), else whole.
func describe(e any, key string) string {
	if key == "" {
		return formatValue(e)
	}
	return "{" + key + " = " + formatValue(e.(map[string]any)[key]) + "}"
}

// lcs returns the index pairs of a longest common subsequence of a and b,
// in order.
func lcs(a, b []string) [][2]int {
	n, m := len(a), len(b)
	// l[i][j] is the LCS length of a[i:] and b[j:].
	l := make([][]int, n+1)
	for i := range l {
		l[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				l[i][j] = l[i+1][j+1] + 1
			} else {
				l[i][j] = max(l[i+1][j], l[i][j+1])
			}
		}
	}
	var out [][2]int
	for i, j := 0, 0; i < n && j < m; {
		switch {
		case a[i] == b[j]:
			out = append(out, [2]int{i, j})
			i, j = i+1, j+1
		case l[i+1][j] >= l[i][j+1]:
			i++
		default:
			j++
		}
	}
	return out
}

// hasComposite reports whether a list holds a record or a list.
func hasComposite(l []any) bool {
	for _, e := range l {
		if _, ok := e.(map[string]any); ok || listOf(e) != nil {
			return true
		}
	}
	return false
}

// listOf returns a decoded list's elements (the decoder gives []any, or
// []map[string]any for a list of records), or nil for anything else.
func listOf(v any) []any {
	switch l := v.(type) {
	case []any:
		return l
	case []map[string]any:
		out := make([]any, len(l))
		for i, m := range l {
			out[i] = m
		}
		return out
	}
	return nil
}

// formatValue prints a decoded value compactly in TOML-like syntax: records
// with sorted keys, strings quoted.
func formatValue(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + " = " + formatValue(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	if l := listOf(v); l != nil {
		parts := make([]string, len(l))
		for i, e := range l {
			parts[i] = formatValue(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v)
}
