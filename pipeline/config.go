package pipeline

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

// Config is a parsed pipeline.toml. Decoding is strict: every key must be
// known, every value of the right type, every required field present; an
// error names the file, the line and the key path.
//
// The schema:
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
//	partition = "cpu"               # also time, mem, cpus_per_task, array_limit, jobs, binary
//
//	[profile.NAME]                  # a scale of the whole matrix
//	seeds = [0, 1, 2]               # run seeds of every experiment (unless it sets its own)
//	split_seeds = [1234]            # held-out splits
//	stamp = "..."                   # printed on every rendered table
//	[profile.NAME.train]            # param overrides for every train cell (part of their keys)
//	[profile.NAME.local]            # ...for every local-learner config
//	[profile.NAME.bp]               # ...for every backprop config
//
//	[[experiment]]                  # one row of the paper: a learner config
//	name = "full"                   # unique; cell IDs are train/<name>/<protocol>/...
//	learner = "local"               # local | bp
//	dataset = "mnist"               # mnist | cifar10 | cifar10f | cifar100 | cifar100f
//	protocols = ["sequential", "static", "single_pass"]
//	eval = "heldout"                # heldout (the split's tenth) | test (development)
//	max_seeds = 3                   # optional: only the profile's first 3 seeds
//	profiles = ["paper"]            # optional: only in these profiles
//	preset = "g17_sgd_none_s10"     # optional: start from a named reference config
//	[experiment.local]              # the learner config (fields of core.LocalConfig)
//	[experiment.bp]                 # or of backprop.Config
//
//	[[table]]                       # a rendered table of the paper (see stages/render.go)
type Config struct {
	// Path is the file the config was read from; Dir its directory.
	Path, Dir string

	Settings    Settings            `toml:"settings"`
	Executor    ExecutorSettings    `toml:"executor"`
	Profiles    map[string]*Profile `toml:"profile"`
	Experiments []*Experiment       `toml:"experiment"`
	Tables      []toml.Primitive    `toml:"table"`
	// Synthetic describes a synthetic pipeline for benchmarking and testing
	// the engine itself (stages/synth.go); absent in the paper's file.
	Synthetic toml.Primitive `toml:"synthetic"`

	md  toml.MetaData
	src string
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
	Jobs        int    `toml:"jobs"`   // -j for the slurm executor (default 100)
	Binary      string `toml:"binary"` // repro binary on the shared filesystem
}

// Profile scales the matrix. Its overrides are part of the resolved config
// of the cells they touch, and so of their keys.
type Profile struct {
	Seeds      []int64        `toml:"seeds"`
	SplitSeeds []int64        `toml:"split_seeds"`
	Stamp      string         `toml:"stamp"`
	Train      toml.Primitive `toml:"train"`
	Local      toml.Primitive `toml:"local"`
	BP         toml.Primitive `toml:"bp"`
}

// Experiment is one configuration of a learner, run over a matrix of
// protocols, splits and seeds.
type Experiment struct {
	Name      string         `toml:"name"`
	Learner   string         `toml:"learner"`
	Dataset   string         `toml:"dataset"`
	Protocols []string       `toml:"protocols"`
	Eval      string         `toml:"eval"`
	Preset    string         `toml:"preset"`
	MaxSeeds  int            `toml:"max_seeds"`
	Profiles  []string       `toml:"profiles"`
	Local     toml.Primitive `toml:"local"`
	BP        toml.Primitive `toml:"bp"`
	Note      string         `toml:"note"`

	line int // of its [[experiment]] header
}

// Line is the line of the experiment's [[experiment]] header.
func (e *Experiment) Line() int { return e.line }

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

// LoadConfig reads and strictly decodes path.
func LoadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseConfig(path, string(b))
}

var parseErrLine = regexp.MustCompile(`line (\d+)`)

// ParseConfig decodes src as the content of path. Decoding of the
// learner-specific tables is deferred to Decode; call Finish after the last
// Decode to report keys that nothing decoded.
func ParseConfig(path, src string) (*Config, error) {
	c := &Config{Path: path, Dir: filepath.Dir(path), src: src}
	md, err := toml.Decode(src, c)
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
	headers := headerLines(src, "experiment")
	for i, e := range c.Experiments {
		if i < len(headers) {
			e.line = headers[i]
		}
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Config) errAt(line int, key, format string, args ...any) error {
	return &ConfigError{Path: c.Path, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)}
}

func (c *Config) validate() error {
	if len(c.Profiles) == 0 && !c.md.IsDefined("synthetic") {
		return c.errAt(0, "profile", "no profile defined")
	}
	if err := c.validateRemotes(); err != nil {
		return err
	}
	if len(c.Profiles) == 0 {
		return nil
	}
	if c.Settings.DefaultProfile == "" {
		return c.errAt(c.KeyLine("settings"), "settings.default_profile", "missing")
	}
	if _, ok := c.Profiles[c.Settings.DefaultProfile]; !ok {
		return c.errAt(c.KeyLine("settings.default_profile"), "settings.default_profile", "no profile %q", c.Settings.DefaultProfile)
	}
	for _, name := range sortedKeys(c.Profiles) {
		p := c.Profiles[name]
		key := "profile." + name
		if len(p.Seeds) == 0 {
			return c.errAt(c.KeyLine(key), key+".seeds", "missing or empty")
		}
		if len(p.SplitSeeds) == 0 {
			return c.errAt(c.KeyLine(key), key+".split_seeds", "missing or empty")
		}
	}
	seen := map[string]int{}
	for i, e := range c.Experiments {
		key := fmt.Sprintf("experiment[%d]", i)
		if e.Name == "" {
			return c.errAt(e.line, key+".name", "missing")
		}
		key = "experiment " + e.Name
		if prev, dup := seen[e.Name]; dup {
			return c.errAt(e.line, key, "duplicate name (first at line %d)", prev)
		}
		seen[e.Name] = e.line
		if !regexp.MustCompile(`^[a-z0-9][a-z0-9_.+-]*$`).MatchString(e.Name) {
			return c.errAt(e.line, key+".name", "must be lower-case letters, digits and _ . + -")
		}
		switch e.Learner {
		case "local", "bp":
		case "":
			return c.errAt(e.line, key+".learner", "missing (local or bp)")
		default:
			return c.errAt(e.line, key+".learner", "%q: want local or bp", e.Learner)
		}
		if e.Dataset == "" {
			return c.errAt(e.line, key+".dataset", "missing")
		}
		if len(e.Protocols) == 0 {
			return c.errAt(e.line, key+".protocols", "missing or empty")
		}
		for _, p := range e.Protocols {
			switch p {
			case "sequential", "static", "single_pass":
			default:
				return c.errAt(e.line, key+".protocols", "%q: want sequential, static or single_pass", p)
			}
		}
		switch e.Eval {
		case "":
			e.Eval = "heldout"
		case "heldout", "test":
		default:
			return c.errAt(e.line, key+".eval", "%q: want heldout or test", e.Eval)
		}
		if e.MaxSeeds < 0 {
			return c.errAt(e.line, key+".max_seeds", "must be >= 0")
		}
		for _, p := range e.Profiles {
			if _, ok := c.Profiles[p]; !ok {
				return c.errAt(e.line, key+".profiles", "no profile %q", p)
			}
		}
	}
	return nil
}

// Decode decodes a deferred table into dst (which holds defaults already),
// strictly: errors name the file and line.
func (c *Config) Decode(p toml.Primitive, dst any) error {
	if err := c.md.PrimitiveDecode(p, dst); err != nil {
		ce := &ConfigError{Path: c.Path, Msg: strings.TrimPrefix(err.Error(), "toml: ")}
		if m := parseErrLine.FindStringSubmatch(err.Error()); m != nil {
			fmt.Sscan(m[1], &ce.Line)
		}
		return ce
	}
	return nil
}

// IsDefined reports whether the deferred table p was present in the file.
func (c *Config) IsDefined(key ...string) bool { return c.md.IsDefined(key...) }

// Finish reports the first key that no decode consumed (a typo, or a field
// that does not exist), with its line.
func (c *Config) Finish() error {
	u := c.md.Undecoded()
	if len(u) == 0 {
		return nil
	}
	sort.SliceStable(u, func(i, j int) bool { return c.KeyLine(u[i].String()) < c.KeyLine(u[j].String()) })
	k := u[0].String()
	return c.errAt(c.KeyLine(k), k, "unknown key")
}

// KeyLine returns the first line where the dotted key path (array indices
// dropped) is defined, or 0 if it cannot be found.
func (c *Config) KeyLine(key string) int {
	table := ""
	for i, raw := range strings.Split(c.src, "\n") {
		line := strings.TrimSpace(stripComment(raw))
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "[") {
			h := strings.Trim(line, "[] \t")
			table = normKey(h)
			if table == key {
				return i + 1
			}
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
		// The key itself, a table it names, or a key inside an inline
		// table on this line.
		if full == key || strings.HasPrefix(full, key+".") || strings.HasPrefix(key, full+".") {
			return i + 1
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

func headerLines(src, name string) []int {
	var out []int
	for i, raw := range strings.Split(src, "\n") {
		if strings.TrimSpace(stripComment(raw)) == "[["+name+"]]" {
			out = append(out, i+1)
		}
	}
	return out
}

// Profile returns the named profile ("" = the default).
func (c *Config) Profile(name string) (string, *Profile, error) {
	if name == "" {
		name = c.Settings.DefaultProfile
	}
	if name == "" && len(c.Profiles) == 0 {
		return "default", &Profile{}, nil
	}
	p, ok := c.Profiles[name]
	if !ok {
		return name, nil, fmt.Errorf("%s: no profile %q (have %s)", c.Path, name, strings.Join(sortedKeys(c.Profiles), ", "))
	}
	return name, p, nil
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
