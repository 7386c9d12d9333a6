package pipeline

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Config is a parsed pipeline.toml, as far as the engine knows it: its own
// [settings] and [executor] tables, and every other top-level table kept
// undecoded for the package that owns it (the experiment matrix: package
// experiments; the synthetic benchmark pipeline: stages/synth.go).
//
// Decoding is strict: every key must be known, every value of the right
// type; an error names the file, the line and the key path. Owners decode
// their sections with DecodeAt, which places a type error at the line of
// the offending key even inside the n-th element of an array of tables;
// Finish reports the keys nothing decoded.
//
// The engine's schema:
//
//	[settings]                      # not part of any key
//	store = ".repro"                # store directory, relative to the file
//	data_mirror = "../shared/data"  # local mirror of the data releases
//	default_profile = "paper"
//	[settings.remotes.NAME]         # a remote store (see RemoteSettings)
//	path = "paper/cells"            # its directory, relative to the file
//	stages = ["train"]              # optional: keep the outputs of these stages only
//
//	[executor.slurm]                # defaults of run --executor slurm's flags
//	partition = "cpu"               # also time, mem, cpus_per_task, array_limit, batch, jobs, binary
type Config struct {
	// Path is the file the config was read from; Dir its directory.
	Path, Dir string

	Settings Settings
	Executor ExecutorSettings

	sections map[string]toml.Primitive
	md       toml.MetaData
	keys     []keyLine
}

// Settings are host-local: they never enter a cell key.
type Settings struct {
	Store          string `toml:"store"`
	DataMirror     string `toml:"data_mirror"`
	DefaultProfile string `toml:"default_profile"`
	// Remotes are stores elsewhere that runs take finished cells from and
	// `repro push` copies them to (pipeline/remotes.go).
	Remotes map[string]*RemoteSettings `toml:"remotes"`
}

// ExecutorSettings are the defaults of `repro run --executor ...` flags
// (host-local: never part of a key).
type ExecutorSettings struct {
	Slurm SlurmSettings `toml:"slurm"`
}

// SlurmSettings is the [executor.slurm] table: sbatch options and how many
// jobs to keep in flight. Command-line flags override each.
type SlurmSettings struct {
	Partition   string `toml:"partition"`
	Time        string `toml:"time"`
	Mem         string `toml:"mem"`
	CPUsPerTask int    `toml:"cpus_per_task"`
	ArrayLimit  int    `toml:"array_limit"`
	Batch       int    `toml:"batch"`  // cells per job, run in turn (0 or 1: one per job)
	Jobs        int    `toml:"jobs"`   // -j for the slurm executor (default 100)
	Binary      string `toml:"binary"` // repro binary on the shared filesystem
}

// maxSlurmJobs bounds [executor.slurm]'s counts: a sane maximum, far above
// any cluster's per-user job limit (Slurm's MaxArraySize defaults to 1001).
const maxSlurmJobs = 100_000

// validateSlurm checks [executor.slurm] as run's flags are checked: no
// count is negative (0 means the default) or absurd.
func (c *Config) validateSlurm() error {
	s := c.Executor.Slurm
	for _, f := range []struct {
		key string
		v   int
	}{{"cpus_per_task", s.CPUsPerTask}, {"array_limit", s.ArrayLimit}, {"batch", s.Batch}, {"jobs", s.Jobs}} {
		key := "executor.slurm." + f.key
		switch {
		case f.v < 0:
			return c.ErrAt(c.KeyLine(key), key, "%d: must be >= 0 (0: the default)", f.v)
		case f.v > maxSlurmJobs:
			return c.ErrAt(c.KeyLine(key), key, "%d: must be <= %d (a sane maximum, above any cluster's job limits)", f.v, maxSlurmJobs)
		}
	}
	return nil
}

// ConfigError is a config problem at a place in the file.
type ConfigError struct {
	Path string
	Line int
	Key  string
	Msg  string
}

func (e *ConfigError) Error() string {
	loc := e.Path
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.Path, e.Line)
	}
	if e.Key != "" {
		return fmt.Sprintf("%s: %s: %s", loc, e.Key, e.Msg)
	}
	return fmt.Sprintf("%s: %s", loc, e.Msg)
}

// LoadConfig reads (at most MaxConfigBytes) and strictly decodes path.
func LoadConfig(path string) (*Config, error) {
	b, err := ReadFileLimit(path, MaxConfigBytes)
	if err != nil {
		return nil, err
	}
	return ParseConfig(path, string(b))
}

// MaxConfigBytes bounds a configuration file (pipeline.toml,
// paper/published.toml): 16 MiB, over 100x the largest today (published.toml,
// 150 kB). A larger file, or one without end (--config /dev/zero), is
// refused before it is decoded, not read until memory runs out.
const MaxConfigBytes = 16 << 20

// ReadFileLimit reads the file at path, or returns an error naming it when
// it holds more than limit bytes (reading at most limit+1 of them: a pipe
// or device has no size to check first).
func ReadFileLimit(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > limit {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d MiB such a file may have", path, fi.Size(), limit>>20)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: more than the %d MiB such a file may have (not a configuration file?)", path, limit>>20)
	}
	return b, nil
}

var (
	parseErrLine = regexp.MustCompile(`line (\d+)`)
	lastKeyRe    = regexp.MustCompile(`\(last key "([^"]*)"\): (.*)$`)
)

// ParseConfig decodes src as the content of path: the engine's own tables
// now, every other section later by its owner (Section, DecodeAt).
func ParseConfig(path, src string) (*Config, error) {
	c := &Config{Path: path, Dir: filepath.Dir(path), keys: indexKeys(src)}
	md, err := toml.Decode(src, &c.sections)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &ConfigError{Path: path, Line: pe.Position.Line, Key: pe.LastKey, Msg: pe.Message}
		}
		ce := &ConfigError{Path: path, Msg: strings.TrimPrefix(err.Error(), "toml: ")}
		if m := parseErrLine.FindStringSubmatch(err.Error()); m != nil {
			fmt.Sscan(m[1], &ce.Line)
		}
		return nil, ce
	}
	c.md = md
	if p, ok := c.Section("settings"); ok {
		if err := c.DecodeAt(p, &c.Settings, "settings"); err != nil {
			return nil, err
		}
	}
	if p, ok := c.Section("executor"); ok {
		if err := c.DecodeAt(p, &c.Executor, "executor"); err != nil {
			return nil, err
		}
	}
	if err := c.validateRemotes(); err != nil {
		return nil, err
	}
	if err := c.validateSlurm(); err != nil {
		return nil, err
	}
	return c, nil
}

// Section returns a top-level table (or array of tables) of the file, not
// yet decoded, and whether the file has it.
func (c *Config) Section(name string) (toml.Primitive, bool) {
	p, ok := c.sections[name]
	return p, ok
}

// ErrAt is a ConfigError at a line of the config file.
func (c *Config) ErrAt(line int, key, format string, args ...any) error {
	return &ConfigError{Path: c.Path, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)}
}

// DecodeAt decodes a deferred table into dst (which holds defaults
// already), strictly. at is the key path of p in the file, with array
// indices ("experiment[3]", "profile.smoke.local"): a type error is
// reported at the line of the offending key under that path.
func (c *Config) DecodeAt(p toml.Primitive, dst any, at string) error {
	err := c.md.PrimitiveDecode(p, dst)
	if err == nil {
		return nil
	}
	msg, last := strings.TrimPrefix(err.Error(), "toml: "), ""
	var pe toml.ParseError
	if errors.As(err, &pe) {
		msg, last = pe.Message, pe.LastKey
	} else if m := lastKeyRe.FindStringSubmatch(err.Error()); m != nil {
		msg, last = m[2], m[1]
	}
	// The decoder names keys without array indices; put at's back.
	key := at
	if plain := stripIndices(at); last == plain {
		key = at
	} else if strings.HasPrefix(last, plain+".") {
		key = at + strings.TrimPrefix(last, plain)
	} else if last != "" {
		key = last
	}
	return &ConfigError{Path: c.Path, Line: c.KeyLine(key), Key: key, Msg: msg}
}

// Finish reports the first key that no decode consumed (a typo, or a field
// that does not exist), with its line.
func (c *Config) Finish() error {
	u := c.md.Undecoded()
	if len(u) == 0 {
		return nil
	}
	sort.SliceStable(u, func(i, j int) bool { return c.KeyLine(u[i].String()) < c.KeyLine(u[j].String()) })
	k := u[0].String()
	return c.ErrAt(c.KeyLine(k), k, "unknown key")
}

// keyLine is one key or table header of the file: its dotted path with
// array indices ("table[1].row[3].label"), the same without them, and its
// line.
type keyLine struct {
	path, plain string
	line        int
	header      bool
}

var indexRe = regexp.MustCompile(`\[\d+\]`)

func stripIndices(path string) string { return indexRe.ReplaceAllString(path, "") }

// indexKeys lists every header and key of src with its indexed path. An
// [[array]] header starts element n of that array under its parent
// element; a [table] header below it belongs to the latest element.
func indexKeys(src string) []keyLine {
	var out []keyLine
	count := map[string]int{}   // indexed path of an array -> elements so far
	arrays := map[string]bool{} // plain paths that are arrays of tables
	table := ""
	for i, raw := range strings.Split(src, "\n") {
		line := strings.TrimSpace(stripComment(raw))
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "[") {
			isArray := strings.HasPrefix(line, "[[")
			parts := strings.Split(normKey(strings.Trim(line, "[] \t")), ".")
			table = ""
			for j, part := range parts {
				if j > 0 {
					table += "."
				}
				table += part
				plain := stripIndices(table)
				switch {
				case isArray && j == len(parts)-1:
					arrays[plain] = true
					n := count[table]
					count[table] = n + 1
					table += "[" + strconv.Itoa(n) + "]"
				case arrays[plain]:
					table += "[" + strconv.Itoa(count[table]-1) + "]"
				}
			}
			out = append(out, keyLine{path: table, plain: stripIndices(table), line: i + 1, header: true})
			continue
		}
		name, _, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		full := normKey(name)
		if table != "" {
			full = table + "." + full
		}
		out = append(out, keyLine{path: full, plain: stripIndices(full), line: i + 1})
	}
	return out
}

// KeyLine returns the first line where the dotted key path is defined, or
// 0 if it cannot be found. With array indices ("experiment[2].eta") it
// finds that element's key; without, the first occurrence. A key inside
// an inline table is found at the line of the table.
func (c *Config) KeyLine(key string) int {
	indexed := strings.Contains(key, "[")
	for _, k := range c.keys {
		full := k.plain
		if indexed {
			full = k.path
		}
		// The key itself, a table it names, or (on a key line, not a
		// header) a key inside an inline table on this line.
		if full == key || strings.HasPrefix(full, key+".") || !k.header && strings.HasPrefix(key, full+".") {
			return k.line
		}
	}
	return 0
}

func normKey(s string) string {
	parts := strings.Split(s, ".")
	for i, p := range parts {
		parts[i] = strings.Trim(strings.TrimSpace(p), `"'`)
	}
	return strings.Join(parts, ".")
}

func stripComment(s string) string {
	inStr := byte(0)
	for i := 0; i < len(s); i++ {
		switch {
		case inStr != 0 && s[i] == inStr:
			inStr = 0
		case inStr == 0 && (s[i] == '"' || s[i] == '\''):
			inStr = s[i]
		case inStr == 0 && s[i] == '#':
			return s[:i]
		}
	}
	return s
}

// StoreDir is the store directory: REPRO_STORE if set, else settings.store
// relative to the config file.
func (c *Config) StoreDir(env func(string) string) string {
	if s := env("REPRO_STORE"); s != "" {
		return s
	}
	s := c.Settings.Store
	if s == "" {
		s = ".repro"
	}
	if !filepath.IsAbs(s) {
		s = filepath.Join(c.Dir, s)
	}
	return s
}

// HostSettings are the settings passed to running cells (not in keys).
func (c *Config) HostSettings(env func(string) string) map[string]string {
	m := c.Settings.DataMirror
	if v := env("REPRO_DATA_MIRROR"); v != "" {
		m = v
	} else if m != "" && !filepath.IsAbs(m) {
		m = filepath.Join(c.Dir, m)
	}
	if m != "" {
		if abs, err := filepath.Abs(m); err == nil {
			m = abs
		}
	}
	return map[string]string{"data.mirror": m}
}
