package presets

import (
	_ "embed"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"repro/pipeline"
)

//go:embed presets.toml
var builtin string

// BuiltinPath is the repository path of the embedded presets.toml, which
// its errors name.
const BuiltinPath = "presets/presets.toml"

// BaseKey is the key of an entry that names the entry it is layered on. No
// learner config may have a field of this name.
const BaseKey = "base"

// ErrUnknown is wrapped by Resolve's error for a name the file does not
// define.
var ErrUnknown = errors.New("unknown preset")

// Learner is one learner's table of the file and how to check it: New
// returns a pointer to a fresh default config (the layer every preset
// starts from), Check validates a resolved one and names the TOML field at
// fault ("" when it cannot). A Learner with a nil New is known but not
// checked: its table is accepted as it stands, for a caller that cannot
// build that learner's config (core's own tests know no backprop type).
type Learner struct {
	Table string
	New   func() any
	Check func(cfg any) (field string, err error)
}

// Set is a parsed and checked presets file. Its methods are safe for
// concurrent use: they only read it.
type Set struct {
	cfg      *pipeline.Config
	learners map[string]Learner
	entries  map[string]map[string]*entry // by table, then name
}

// entry is one preset (or base) of a learner's table.
type entry struct {
	table, name, base string
	prim              toml.Primitive
}

// key is the entry's key path, unquoted even for a dotted name, as
// pipeline.Config.KeyLine finds it.
func (e *entry) key() string { return e.table + "." + e.name }

// Builtin parses the embedded presets.toml (BuiltinPath).
func Builtin(learners ...Learner) (*Set, error) {
	return Parse(BuiltinPath, builtin, learners...)
}

// Parse decodes src as the content of path and checks all of it before
// returning: every top-level table is a learner's, every base exists and no
// chain of bases loops, every entry resolves onto its learner's defaults
// without an unknown field and passes the learner's Check. Errors name the
// file, line and key (pipeline.ConfigError).
func Parse(path, src string, learners ...Learner) (*Set, error) {
	cfg, err := pipeline.ParseConfig(path, src)
	if err != nil {
		return nil, err
	}
	for _, engine := range []string{"settings", "executor"} {
		if _, ok := cfg.Section(engine); ok {
			return nil, cfg.ErrAt(cfg.KeyLine(engine), engine, "not a learner table (want %s)", tableNames(learners))
		}
	}
	s := &Set{cfg: cfg, learners: map[string]Learner{}, entries: map[string]map[string]*entry{}}
	for _, l := range learners {
		if err := s.decodeTable(l); err != nil {
			return nil, err
		}
	}
	for _, table := range slices.Sorted(maps.Keys(s.entries)) {
		for _, name := range slices.Sorted(maps.Keys(s.entries[table])) {
			if _, err := s.chain(table, name); err != nil {
				return nil, err
			}
		}
	}
	for _, table := range slices.Sorted(maps.Keys(s.entries)) {
		if s.learners[table].New == nil {
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(s.entries[table])) {
			if _, err := s.Resolve(table, name); err != nil {
				return nil, err
			}
		}
	}
	if err := cfg.Finish(); err != nil {
		var ce *pipeline.ConfigError
		if errors.As(err, &ce) {
			if table, _, _ := strings.Cut(ce.Key, "."); s.learners[table].Table == "" {
				return nil, cfg.ErrAt(cfg.KeyLine(table), table, "unknown learner table (want %s)", tableNames(learners))
			}
		}
		return nil, err
	}
	return s, nil
}

func tableNames(learners []Learner) string {
	var names []string
	for _, l := range learners {
		names = append(names, l.Table)
	}
	return strings.Join(names, " or ")
}

// decodeTable reads one learner's table: its entries and their bases.
func (s *Set) decodeTable(l Learner) error {
	if l.Table == "" || strings.Contains(l.Table, ".") {
		panic(fmt.Sprintf("presets: learner table name %q", l.Table))
	}
	if _, dup := s.learners[l.Table]; dup {
		panic(fmt.Sprintf("presets: learner table %q registered twice", l.Table))
	}
	s.learners[l.Table] = l
	sec, ok := s.cfg.Section(l.Table)
	if !ok {
		return nil
	}
	if l.New == nil {
		var anything map[string]map[string]any // accepted unchecked; marks the fields decoded
		return s.cfg.DecodeAt(sec, &anything, l.Table)
	}
	var prims map[string]toml.Primitive
	if err := s.cfg.DecodeAt(sec, &prims, l.Table); err != nil {
		return err
	}
	s.entries[l.Table] = map[string]*entry{}
	for name, p := range prims {
		e := &entry{table: l.Table, name: name, prim: p}
		if name == "" {
			return s.cfg.ErrAt(s.cfg.KeyLine(l.Table), l.Table, "empty preset name")
		}
		var meta struct {
			Base string `toml:"base"`
		}
		if err := s.cfg.DecodeAt(p, &meta, e.key()); err != nil {
			return err
		}
		e.base = meta.Base
		s.entries[l.Table][name] = e
	}
	return nil
}

// chain returns the entries a preset is layered from, its root base first
// and the preset last, or an error at the line of a missing base or of the
// base key that closes a loop.
func (s *Set) chain(table, name string) ([]*entry, error) {
	e, ok := s.entries[table][name]
	if !ok {
		return nil, fmt.Errorf("%w: no %s preset %q in %s", ErrUnknown, table, name, s.cfg.Path)
	}
	var out []*entry
	seen := map[string]bool{}
	for {
		out = append(out, e)
		seen[e.name] = true
		if e.base == "" {
			break
		}
		key := e.key() + "." + BaseKey
		next, ok := s.entries[table][e.base]
		switch {
		case !ok:
			return nil, s.cfg.ErrAt(s.cfg.KeyLine(key), key, "no %s preset %q to build on", table, e.base)
		case seen[e.base]:
			var names []string
			for _, c := range out {
				names = append(names, c.name)
			}
			return nil, s.cfg.ErrAt(s.cfg.KeyLine(key), key, "bases form a loop: %s -> %s", strings.Join(names, " -> "), e.base)
		}
		e = next
	}
	slices.Reverse(out)
	return out, nil
}

// Resolve returns a pointer to the learner's config for the named preset:
// the learner's defaults (Learner.New), then each base from the root, then
// the preset's own values, checked by Learner.Check. The config is fresh:
// the caller may change it. An unknown table or name wraps ErrUnknown.
func (s *Set) Resolve(table, name string) (any, error) {
	l, ok := s.learners[table]
	if !ok || l.New == nil {
		return nil, fmt.Errorf("%w: no learner table %q in %s", ErrUnknown, table, s.cfg.Path)
	}
	chain, err := s.chain(table, name)
	if err != nil {
		return nil, err
	}
	dst := l.New()
	for _, e := range chain {
		if err := s.cfg.DecodeAt(e.prim, dst, e.key()); err != nil {
			return nil, err
		}
	}
	if l.Check == nil {
		return dst, nil
	}
	field, err := l.Check(dst)
	if err == nil {
		return dst, nil
	}
	// The error belongs at the last layer that sets the field.
	field, _, _ = strings.Cut(field, "[")
	for i := len(chain) - 1; i >= 0 && field != ""; i-- {
		if !s.sets(chain[i], field) {
			continue
		}
		key := chain[i].key() + "." + field
		return nil, s.cfg.ErrAt(s.cfg.KeyLine(key), key, "%v", err)
	}
	top := chain[len(chain)-1]
	return nil, s.cfg.ErrAt(s.cfg.KeyLine(top.key()), top.key(), "%v", err)
}

// sets reports whether an entry's own table has the key.
func (s *Set) sets(e *entry, key string) bool {
	var m map[string]any
	if err := s.cfg.DecodeAt(e.prim, &m, e.key()); err != nil {
		return false
	}
	_, ok := m[key]
	return ok
}

// Names returns a learner's preset names, sorted (bases included: they are
// presets too).
func (s *Set) Names(table string) []string {
	return slices.Sorted(maps.Keys(s.entries[table]))
}

// Layers returns the names a preset is layered from, its root base first
// and the preset itself last.
func (s *Set) Layers(table, name string) ([]string, error) {
	chain, err := s.chain(table, name)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(chain))
	for i, e := range chain {
		out[i] = e.name
	}
	return out, nil
}
