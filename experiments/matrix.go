package experiments

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"repro/core"
	"repro/internal/dataset"
	"repro/pipeline"
	"repro/presets"
	"repro/stages"
)

// Profile is a [profile.NAME] table: one scale of the whole matrix. Its
// overrides are part of the resolved config of the cells they touch, and so
// of their keys.
type Profile struct {
	Seeds      []int64 `toml:"seeds"`
	SplitSeeds []int64 `toml:"split_seeds"`
	// SettleSeeds is how many seeds an experiment marked settle runs under
	// this profile: the rows whose inconclusive verdicts the verdict's own
	// estimate says that many of our seeds would settle (docs/verdicts.md);
	// Seeds extended by the next integers. 0: no extension.
	SettleSeeds int            `toml:"settle_seeds"`
	Stamp       string         `toml:"stamp"`
	Train       toml.Primitive `toml:"train"`
	Local       toml.Primitive `toml:"local"`
	BP          toml.Primitive `toml:"bp"`

	name string
}

// Experiment is one [[experiment]]: a configuration of a learner, run over
// a matrix of protocols, splits and seeds.
type Experiment struct {
	Name      string             `toml:"name"`
	Learner   stages.LearnerKind `toml:"learner"`
	Dataset   string             `toml:"dataset"`
	Protocols []string           `toml:"protocols"`
	Eval      string             `toml:"eval"`
	Preset    string             `toml:"preset"`
	MaxSeeds  int                `toml:"max_seeds"`
	// Settle: the experiment runs its profile's SettleSeeds (max_seeds
	// aside), because a row it feeds is inconclusive and the verdict's
	// estimate says that many of our seeds would settle it.
	Settle   bool           `toml:"settle"`
	Profiles []string       `toml:"profiles"`
	Local    toml.Primitive `toml:"local"`
	BP       toml.Primitive `toml:"bp"`
	Note     string         `toml:"note"`
	// AllowDiverged keeps runs whose weights diverge as results (the
	// record says so) instead of failing their cells: for the configurations
	// the paper reports with collapsed seeds.
	AllowDiverged bool `toml:"allow_diverged"`

	index int // in the file's [[experiment]] array
	// params[profile][protocol] is the resolved train config (seed 0).
	params map[string]map[string]*stages.TrainParams
}

// learnerTable is the experiment's table of its learner's overrides
// ([experiment.local], [experiment.bp]): the field of the kind.
func (e *Experiment) learnerTable(k stages.LearnerKind) toml.Primitive {
	return learnerTable(e, k)
}

// learnerTable is the profile's overrides of a learner's config.
func (p *Profile) learnerTable(k stages.LearnerKind) toml.Primitive {
	return learnerTable(p, k)
}

// learnerTable picks a learner's table out of an entry (an *Experiment or
// a *Profile): its toml.Primitive field whose TOML name is the kind. The
// tables are struct fields, one per kind, so that strict decoding reports a
// misspelt table; a new learner kind adds its field to Experiment and
// Profile (TestLearnerTables checks every registered kind has one).
func learnerTable(entry any, k stages.LearnerKind) toml.Primitive {
	v := reflect.ValueOf(entry).Elem()
	for i := range v.NumField() {
		if f := v.Type().Field(i); f.Tag.Get("toml") == string(k) && f.Type == reflect.TypeFor[toml.Primitive]() {
			return v.Field(i).Interface().(toml.Primitive)
		}
	}
	panic(fmt.Sprintf("experiments: learner kind %q has no table field in %T", k, entry))
}

// inProfile reports whether the experiment runs under a profile.
func (e *Experiment) inProfile(profile string) bool {
	return len(e.Profiles) == 0 || slices.Contains(e.Profiles, profile)
}

// seeds are the experiment's run seeds under a profile.
func (e *Experiment) seeds(p *Profile) []int64 {
	if e.Settle && p.SettleSeeds > len(p.Seeds) {
		ss := slices.Clone(p.Seeds)
		for next := slices.Max(ss) + 1; len(ss) < p.SettleSeeds; next++ {
			ss = append(ss, next)
		}
		return ss
	}
	if e.MaxSeeds > 0 && e.MaxSeeds < len(p.Seeds) {
		return p.Seeds[:e.MaxSeeds]
	}
	return p.Seeds
}

// splits are the evaluation sets (split seeds; 0 = the official test set)
// the experiment runs under a profile.
func (e *Experiment) splits(p *Profile) []int64 {
	if e.Eval == "test" {
		return []int64{0}
	}
	return p.SplitSeeds
}

// Matrix is the decoded and validated experiment matrix of a config:
// profiles, experiments, tables and figures.
type Matrix struct {
	cfg         *pipeline.Config
	Profiles    map[string]*Profile
	Experiments []*Experiment
	Tables      []*TableSpec
	Figures     []*FigureSpec
	synth       *stages.SynthConfig
	byName      map[string]*Experiment
	presets     *presets.Set // the reference configs experiments name
	// The stages' sections (sections), nil when the file has none.
	spike    *SpikeConfig // [spike]
	disputed *Disputed    // [disputed]
	// releases are the declared releases ([release.NAME]) as download
	// members ("<member> <sha256>", sorted), by data set.
	releases map[string][]string
}

// A section is a stage's own table of pipeline.toml, whose cells sit on
// top of the experiments' train cells: [spike] (spike.go), [disputed]
// (disputed.go). Its schema, its checks and its cells are in the stage's
// file of this package; its decoded value is a field of Matrix. A new
// stage with a section adds, besides its own files, that field and its
// entry in sections, both here.
type section struct {
	key string // the table's name in pipeline.toml
	// load decodes and checks the table, when the file has it, after
	// [[experiment]] and [[table]]: before [[figure]] for a section with
	// cells (a figure may read them), after it for one with report cells.
	load func(m *Matrix) error
	// cells adds the section's cells under a profile to b, after the
	// train cells and before the tables' (a table may read them).
	cells func(m *Matrix, b *builder, profile string, prof *Profile) error
	// report, instead of cells, adds cells that the reproduction cell rep
	// reads and wires them into rep; it returns the cell that sits beside
	// rep (nil: none).
	report func(m *Matrix, b *builder, profile string, prof *Profile, rep *pipeline.Cell) (*pipeline.Cell, error)
}

// sections are the stages' sections, in the order Load decodes them and
// Build adds their cells (within each of the two places above).
var sections = []section{
	{key: "spike", load: (*Matrix).loadSpike, cells: (*Matrix).spikeCells},
	{key: "disputed", load: (*Matrix).loadDisputed, report: (*Matrix).disputedCells},
}

// loadSections loads, in order, the sections the file has: those with
// report cells (report), or the others.
func (m *Matrix) loadSections(report bool) error {
	for _, s := range sections {
		if _, ok := m.cfg.Section(s.key); !ok || (s.report != nil) != report {
			continue
		}
		if err := s.load(m); err != nil {
			return err
		}
	}
	return nil
}

// nameRe is what profile, experiment and table names may be: they become
// path elements (paper/<profile>/, cell IDs, paper/tables/<table>.tex).
var nameRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_.+-]*$`)

func validName(s string) bool { return nameRe.MatchString(s) && !strings.Contains(s, "..") }

// Load decodes every section of the matrix from cfg and validates it all
// before any work: names, enumerations, every learner config of every
// experiment under every profile it runs in (through the learners' own
// Validate), every table and the experiments it names. Errors name the
// file, line and key. After Load, every key of the file has been decoded:
// an unknown one is an error.
func Load(cfg *pipeline.Config) (*Matrix, error) {
	m := &Matrix{cfg: cfg, Profiles: map[string]*Profile{}, byName: map[string]*Experiment{}}
	if p, ok := cfg.Section("synthetic"); ok {
		m.synth = &stages.SynthConfig{}
		if err := cfg.DecodeAt(p, m.synth, "synthetic"); err != nil {
			return nil, err
		}
	}
	if err := m.loadProfiles(); err != nil {
		return nil, err
	}
	if err := m.loadReleases(); err != nil {
		return nil, err
	}
	var err error
	if m.presets, err = LoadPresets(); err != nil {
		return nil, err
	}
	if err := m.loadExperiments(); err != nil {
		return nil, err
	}
	if err := m.resolve(); err != nil {
		return nil, err
	}
	if err := m.loadTables(); err != nil {
		return nil, err
	}
	if err := m.loadSections(false); err != nil {
		return nil, err
	}
	if err := m.loadFigures(); err != nil {
		return nil, err
	}
	if err := m.loadSections(true); err != nil {
		return nil, err
	}
	if err := cfg.Finish(); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *Matrix) loadProfiles() error {
	cfg := m.cfg
	sec, ok := cfg.Section("profile")
	if !ok {
		if m.synth == nil {
			return cfg.ErrAt(0, "profile", "no profile defined")
		}
		return nil
	}
	var prims map[string]toml.Primitive
	if err := cfg.DecodeAt(sec, &prims, "profile"); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(prims)) {
		key := "profile." + name
		p := &Profile{name: name}
		if err := cfg.DecodeAt(prims[name], p, key); err != nil {
			return err
		}
		line := cfg.KeyLine(key)
		if !validName(name) {
			return cfg.ErrAt(line, key, "profile name %q: want lower-case letters, digits and _ . + - (it names the directory paper/<profile>/)", name)
		}
		if len(p.Seeds) == 0 {
			return cfg.ErrAt(line, key+".seeds", "missing or empty")
		}
		if len(p.SplitSeeds) == 0 {
			return cfg.ErrAt(line, key+".split_seeds", "missing or empty")
		}
		if err := checkSeeds(cfg, key+".seeds", p.Seeds, 0, "a run seed must be >= 0"); err != nil {
			return err
		}
		if p.SettleSeeds != 0 && (p.SettleSeeds < len(p.Seeds) || p.SettleSeeds > maxSettleSeeds) {
			return cfg.ErrAt(cfg.KeyLine(key+".settle_seeds"), key+".settle_seeds", "%d: want %d (the profile's seeds) to %d", p.SettleSeeds, len(p.Seeds), maxSettleSeeds)
		}
		// Split seed 0 names the official test set (cellid.EvalOf).
		if err := checkSeeds(cfg, key+".split_seeds", p.SplitSeeds, 1, "a split seed must be > 0 (the development set is eval = \"test\")"); err != nil {
			return err
		}
		m.Profiles[name] = p
	}
	d := cfg.Settings.DefaultProfile
	if d == "" {
		return cfg.ErrAt(cfg.KeyLine("settings"), "settings.default_profile", "missing")
	}
	if _, ok := m.Profiles[d]; !ok {
		return cfg.ErrAt(cfg.KeyLine("settings.default_profile"), "settings.default_profile", "no profile %q", d)
	}
	return nil
}

// maxSettleSeeds bounds a profile's settle_seeds: the paper's rows are
// settled by 12 (docs/verdicts.md); 64 is far past any use and keeps a
// typo from planning thousands of cells.
const maxSettleSeeds = 64

// loadReleases decodes the [release.NAME] tables: a data set's files with
// digests other than the published ones.
func (m *Matrix) loadReleases() error {
	cfg := m.cfg
	sec, ok := cfg.Section("release")
	if !ok {
		return nil
	}
	var decl map[string]struct {
		SHA256 map[string]string `toml:"sha256"`
	}
	if err := cfg.DecodeAt(sec, &decl, "release"); err != nil {
		return err
	}
	m.releases = map[string][]string{}
	for _, name := range slices.Sorted(maps.Keys(decl)) {
		key := "release." + name
		rel, err := dataset.ReleaseFor(name)
		if err == nil {
			_, err = rel.WithMembers(decl[name].SHA256)
		}
		if err != nil {
			return cfg.ErrAt(cfg.KeyLine(key), key, "%v", err)
		}
		for _, f := range slices.Sorted(maps.Keys(decl[name].SHA256)) {
			m.releases[name] = append(m.releases[name], f+" "+decl[name].SHA256[f])
		}
	}
	return nil
}

// checkSeeds reports a seed below min, or one listed twice.
func checkSeeds(cfg *pipeline.Config, key string, seeds []int64, min int64, why string) error {
	for i, s := range seeds {
		if s < min {
			return cfg.ErrAt(cfg.KeyLine(key), key, "%d: %s", s, why)
		}
		if slices.Contains(seeds[:i], s) {
			return cfg.ErrAt(cfg.KeyLine(key), key, "%d listed twice", s)
		}
	}
	return nil
}

var protocols = []string{"sequential", "static", "single_pass"}

// loadExperiments decodes and checks every [[experiment]] entry, each error
// at the line of its field. It is long because it is the list of field
// checks in field order, kept in one place so a new field's check goes
// beside its peers.
func (m *Matrix) loadExperiments() error {
	cfg := m.cfg
	sec, ok := cfg.Section("experiment")
	if !ok {
		return nil
	}
	var prims []toml.Primitive
	if err := cfg.DecodeAt(sec, &prims, "experiment"); err != nil {
		return err
	}
	for i, prim := range prims {
		at := fmt.Sprintf("experiment[%d]", i)
		e := &Experiment{index: i}
		if err := cfg.DecodeAt(prim, e, at); err != nil {
			return err
		}
		m.Experiments = append(m.Experiments, e)
		line := cfg.KeyLine(at)
		// bad places an error at the line of the field (or the header
		// when the field is absent).
		bad := func(field, format string, args ...any) error {
			l := cfg.KeyLine(at + "." + field)
			if l == 0 {
				l = line
			}
			name := e.Name
			if name == "" {
				name = at
			}
			return cfg.ErrAt(l, "experiment "+name+"."+field, format, args...)
		}
		if e.Name == "" {
			return bad("name", "missing")
		}
		if prev, dup := m.byName[e.Name]; dup {
			return bad("name", "duplicate name (first at line %d)", cfg.KeyLine(fmt.Sprintf("experiment[%d]", prev.index)))
		}
		m.byName[e.Name] = e
		if !validName(e.Name) {
			return bad("name", "must be lower-case letters, digits and _ . + -")
		}
		if e.Learner == "" {
			return bad("learner", "missing (%s)", stages.LearnerKinds())
		}
		if _, ok := stages.LearnerOf(e.Learner); !ok {
			return bad("learner", "%q: want %s", e.Learner, stages.LearnerKinds())
		}
		if e.Dataset == "" {
			return bad("dataset", "missing")
		}
		if _, ok := datasets[e.Dataset]; !ok {
			return bad("dataset", "%q is not one of %s", e.Dataset, strings.Join(slices.Sorted(maps.Keys(datasets)), ", "))
		}
		if len(e.Protocols) == 0 {
			return bad("protocols", "missing or empty")
		}
		for j, p := range e.Protocols {
			if !slices.Contains(protocols, p) {
				return bad("protocols", "%q: want sequential, static or single_pass", p)
			}
			if slices.Contains(e.Protocols[:j], p) {
				return bad("protocols", "%q twice", p)
			}
		}
		switch e.Eval {
		case "":
			e.Eval = "heldout"
		case "heldout", "test":
		default:
			return bad("eval", "%q: want heldout or test", e.Eval)
		}
		if e.MaxSeeds < 0 {
			return bad("max_seeds", "must be >= 0")
		}
		for _, p := range e.Profiles {
			if _, ok := m.Profiles[p]; !ok {
				return bad("profiles", "no profile %q", p)
			}
		}
	}
	return nil
}

// resolve decodes every profile's overrides, and resolves and validates
// every experiment's train config under every profile it runs in.
func (m *Matrix) resolve() error {
	cfg := m.cfg
	// Every profile's overrides, used or not, so that a typo in any of
	// them is reported whatever profile runs.
	for _, name := range slices.Sorted(maps.Keys(m.Profiles)) {
		pr := m.Profiles[name]
		for _, l := range stages.Learners() {
			if err := cfg.DecodeAt(pr.learnerTable(l.Kind), l.NewConfig(), "profile."+name+"."+string(l.Kind)); err != nil {
				return err
			}
		}
		if err := cfg.DecodeAt(pr.Train, &stages.TrainParams{}, "profile."+name+".train"); err != nil {
			return err
		}
	}
	for _, e := range m.Experiments {
		e.params = map[string]map[string]*stages.TrainParams{}
		for _, name := range slices.Sorted(maps.Keys(m.Profiles)) {
			if !e.inProfile(name) {
				continue
			}
			e.params[name] = map[string]*stages.TrainParams{}
			for _, protocol := range e.Protocols {
				p, err := m.trainParams(m.Profiles[name], e, protocol)
				if err != nil {
					return err
				}
				e.params[name][protocol] = p
			}
		}
	}
	return nil
}

// trainParams resolves an experiment's train params for one protocol:
// stage defaults, then the experiment's learner table, then the protocol
// (single pass: one epoch; static: one task of every class), then the
// profile's overrides; and validates the result.
func (m *Matrix) trainParams(prof *Profile, e *Experiment, protocol string) (*stages.TrainParams, error) {
	cfg := m.cfg
	at := fmt.Sprintf("experiment[%d]", e.index)
	p := stages.Train.NewParams().(*stages.TrainParams)
	p.Learner, p.Protocol = e.Learner, protocol
	l, _ := stages.LearnerOf(e.Learner) // loadExperiments checked the kind
	table := string(e.Learner)
	lc := l.NewConfig()
	if e.Preset != "" {
		var err error
		if lc, err = m.presets.Resolve(table, e.Preset); err != nil {
			return nil, cfg.ErrAt(cfg.KeyLine(at+".preset"), "experiment "+e.Name+".preset", "%v", err)
		}
	}
	if err := cfg.DecodeAt(e.learnerTable(e.Learner), lc, at+"."+table); err != nil {
		return nil, err
	}
	l.SetProtocol(lc, protocol)
	if err := cfg.DecodeAt(prof.learnerTable(e.Learner), lc, "profile."+prof.name+"."+table); err != nil {
		return nil, err
	}
	l.SetConfig(p, lc)
	if err := cfg.DecodeAt(prof.Train, p, "profile."+prof.name+".train"); err != nil {
		return nil, err
	}
	p.AllowDiverged = e.AllowDiverged
	if err := p.Validate(); err != nil {
		return nil, m.fieldErr(err, prof, e, protocol)
	}
	if err := checkBounds(p); err != nil {
		return nil, m.fieldErr(err, prof, e, protocol)
	}
	return p, nil
}

// fieldErr places a validation error of an experiment's resolved train
// config at the line that set the field: the profile's override (applied
// last), else the experiment's learner table, else its preset, else its
// header.
func (m *Matrix) fieldErr(err error, prof *Profile, e *Experiment, protocol string) error {
	cfg := m.cfg
	at := fmt.Sprintf("experiment[%d]", e.index)
	var fe *core.FieldError
	field := ""
	if errors.As(err, &fe) {
		field, _, _ = strings.Cut(fe.Field, "[")
	}
	table := string(e.Learner)
	if field == "stream_stride" || field == "eval_stride" || field == "seed" {
		table = "train"
	}
	msg := fmt.Sprintf("%v (protocol %s, profile %s)", err, protocol, prof.name)
	for _, key := range []string{"profile." + prof.name + "." + table + "." + field, at + "." + table + "." + field} {
		if l := cfg.KeyLine(key); field != "" && l > 0 {
			return cfg.ErrAt(l, stripIndexKey(key, e), "%s", msg)
		}
	}
	if l := cfg.KeyLine(at + ".preset"); l > 0 {
		return cfg.ErrAt(l, "experiment "+e.Name+".preset", "%s", msg)
	}
	return cfg.ErrAt(cfg.KeyLine(at), "experiment "+e.Name, "%s", msg)
}

// stripIndexKey names an experiment's key by the experiment's name.
func stripIndexKey(key string, e *Experiment) string {
	if rest, ok := strings.CutPrefix(key, fmt.Sprintf("experiment[%d].", e.index)); ok {
		return "experiment " + e.Name + "." + rest
	}
	return key
}

// Profile returns the named profile ("" = the default).
func (m *Matrix) Profile(name string) (string, *Profile, error) {
	if name == "" {
		name = m.cfg.Settings.DefaultProfile
	}
	if name == "" && len(m.Profiles) == 0 {
		return "default", &Profile{name: "default"}, nil
	}
	p, ok := m.Profiles[name]
	if !ok {
		return name, nil, fmt.Errorf("%s: no profile %q (have %s)", m.cfg.Path, name, strings.Join(slices.Sorted(maps.Keys(m.Profiles)), ", "))
	}
	return name, p, nil
}

// clone copies p deeply enough that per-seed cells share no mutable state.
func clone(p *stages.TrainParams) *stages.TrainParams { return p.Clone() }
