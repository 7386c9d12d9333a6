package crate

import (
	"cmp"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"repro/artifacts"
)

// The specifications a crate conforms to: RO-Crate 1.1 (the metadata
// descriptor) and the Workflow Run RO-Crate profiles (the root dataset).
// Provenance Run Crate includes Workflow and Process Run Crate, and all
// three build on Workflow RO-Crate.
const (
	ROCrate        = "https://w3id.org/ro/crate/1.1"
	ROCrateContext = "https://w3id.org/ro/crate/1.1/context"
	ProcessRun     = "https://w3id.org/ro/wfrun/process/0.5"
	WorkflowRun    = "https://w3id.org/ro/wfrun/workflow/0.5"
	ProvenanceRun  = "https://w3id.org/ro/wfrun/provenance/0.5"
	WorkflowCrate  = "https://w3id.org/workflowhub/workflow-ro-crate/1.0"
	// SHA256Term is the Workflow Run RO-Crate vocabulary's sha256 (RO-Crate
	// 1.1 has no checksum property), which the crate's @context adds.
	SHA256Term = "https://w3id.org/ro/terms/workflow-run#sha256"
	// PROV is the W3C provenance vocabulary, for the two links schema.org
	// lacks: an action that read another's outputs (prov:wasInformedBy)
	// and a number's seeds (prov:wasInfluencedBy).
	PROV = "http://www.w3.org/ns/prov#"
)

// MetadataFile is the crate's JSON-LD file, at its root.
const MetadataFile = "ro-crate-metadata.json"

// Input is everything a crate says, typed; the command gathers it from the
// ledger and the committed files.
type Input struct {
	// Name and Description are the crate's (the root dataset's);
	// WorkflowDescription the workflow's (the README's text).
	Name, Description, WorkflowDescription string
	// Published is the crate's datePublished.
	Published time.Time
	// Revision is the commit of the binary that exports the crate: the
	// workflow's version and the engine's.
	Revision string
	// Profile is the pipeline profile the crate describes.
	Profile string
	// Workflow is pipeline.toml; README the project's README, whose text
	// is the workflow's description. Both are copied.
	Workflow, README *File
	// Citation is CITATION.cff; License the license file (nil: the
	// project states none, and nor does the crate).
	Citation, License *File
	// Records are the cells' records, each once (by key), in the order the
	// crate lists them.
	Records []*artifacts.Manifest
	// Releases are the raw data the download cells fetched.
	Releases []Release
	// Outputs are the rendered paper: copied files (Path set) or, above the
	// size limit, files referenced by digest.
	Outputs []*File
	// Numbers are the paper's numbers, ours and published.
	Numbers []Number
	// ReferenceRuns are the authors' code's runs of the disputed rows.
	ReferenceRuns []ReferenceRun
}

// File is a file the crate describes: copied into the crate when Path is
// set (from Source), else referenced by its digest.
type File struct {
	Path   string // in the crate, slash-separated; "" when not copied
	Source string // the file to copy (Write reads it)
	Name   string
	// Description says what the file is; EncodingFormat its media type.
	Description, EncodingFormat string
	SHA256                      string // hex
	Size                        int64
}

// Release is one data release: its files at their canonical URLs, or an
// archive and the members the download cell extracted from it.
type Release struct {
	Dataset string
	Files   []ReleaseFile // the files, or the archive (one)
	Members []ReleaseFile // an archive's members (no URL)
}

// ReleaseFile is one file of a release and its published digest.
type ReleaseFile struct {
	Name   string
	URLs   []string // canonical first, then mirrors
	SHA256 string
	Size   int64 // 0: not published
}

// Number is one number of the paper.
type Number struct {
	ID    string // the number ID (repro why takes it)
	Group string // its table or figure
	// Ours is our value as printed; Published the paper's; both "" when
	// there is none.
	Ours, Published string
	// Verdict is agrees, differs, inconclusive or not run ("" when the
	// number is not one the paper states); Judgement what it rests on.
	Verdict, Judgement string
	// Cite is where the paper states it.
	Cite string
	// Seeds are the records of the train cells behind it.
	Seeds []Seed
	// Producer is the record of the cell that wrote it (the render or
	// figure cell; zero key: none in the crate).
	Producer artifacts.Key
	// Authors is the authors' code's rerun of a disputed row, as printed
	// ("" for other numbers), and ReferenceFile the SHA-256 (hex) of the
	// file it is read from, one of the ReferenceRuns' files.
	Authors, ReferenceFile string
}

// Seed is one seed of a number: its train record and result digest.
type Seed struct {
	Seed   int64
	Key    artifacts.Key
	Result string // hex
}

// ReferenceRun is one configuration of the authors' code run here.
type ReferenceRun struct {
	Config, Command, Reference, Split, Source string
	// Script names which of their scripts ran (run_seq, run_mnist).
	Script string
	File   *File // paper/reference-runs/<config>.tsv, copied
	Seeds  []int64
}

// Entity is one node of the graph, as JSON-LD compact form: "@id",
// "@type" and properties whose references are {"@id": …}.
type Entity map[string]any

// Crate is a built crate: the graph, and the files to copy into it.
type Crate struct {
	Graph []Entity
	Files []*File
}

// ref is a JSON-LD reference to id.
func ref(id string) map[string]string { return map[string]string{"@id": id} }

func refs(ids []string) []map[string]string {
	out := make([]map[string]string, len(ids))
	for i, id := range ids {
		out[i] = ref(id)
	}
	return out
}

// graph collects entities by @id, in the order first added.
type graph struct {
	byID  map[string]Entity
	order []string
}

// add puts e in the graph; an entity already there keeps its properties
// and gains e's others.
func (g *graph) add(e Entity) {
	id := e["@id"].(string)
	if old, ok := g.byID[id]; ok {
		for k, v := range e {
			if _, ok := old[k]; !ok {
				old[k] = v
			}
		}
		return
	}
	g.byID[id] = e
	g.order = append(g.order, id)
}

// appendRefs appends references to the list property k of entity id.
func (g *graph) appendRefs(id, k string, ids ...string) {
	e := g.byID[id]
	l, _ := e[k].([]map[string]string)
	e[k] = append(l, refs(ids)...)
}

// frag is s made safe for the fragment of a local identifier; slashes stay.
func frag(s string) string {
	return strings.ReplaceAll(url.PathEscape(s), "%2F", "/")
}

// NumberID is the @id of number id's entity.
func NumberID(id string) string { return "#number/" + frag(id) }

// ActionID is the @id of the action of record k.
func ActionID(k artifacts.Key) string { return "#cell-" + k.String() }

// ToolID is the @id of stage's tool at version v.
func ToolID(stage string, v int) string { return fmt.Sprintf("#stage-%s-v%d", stage, v) }

// StepID is the @id of stage's step.
func StepID(stage string) string { return "#step-" + stage }

// DigestID is the @id of a file known only by its SHA-256 (hex): an RFC
// 6920 named-information URI.
func DigestID(sha256hex string) string {
	b, err := hex.DecodeString(sha256hex)
	if err != nil || len(b) != 32 {
		return "#sha256-" + frag(sha256hex) // never for a record's digest
	}
	return "ni:///sha-256;" + base64.RawURLEncoding.EncodeToString(b)
}

// WorkflowID is the workflow's @id (pipeline.toml, copied into the crate).
const WorkflowID = "pipeline.toml"

// The other fixed identifiers.
const (
	runID      = "#run"
	organizeID = "#organize"
	engineID   = "#repro"
	languageID = "#repro-pipeline-toml"
)

// Build makes the crate's graph from in. It fails when in contradicts
// itself: a file without a digest, a number whose seed has no record.
func Build(in *Input) (*Crate, error) {
	if in.Workflow == nil || in.Workflow.Path != WorkflowID {
		return nil, fmt.Errorf("crate: the workflow must be copied as %s", WorkflowID)
	}
	g := &graph{byID: map[string]Entity{}}
	c := &Crate{}
	// fileIDs maps a digest to the @id of its file: copied files first,
	// then release files at their URLs; the rest by digest.
	fileIDs := map[string]string{}
	var parts []string
	copyFile := func(f *File) error {
		if f.SHA256 == "" {
			return fmt.Errorf("crate: file %s has no digest", f.Name)
		}
		e := Entity{"@id": DigestID(f.SHA256), "@type": "File", "name": f.Name, "sha256": f.SHA256, "contentSize": strconv.FormatInt(f.Size, 10)}
		if f.Path != "" {
			e["@id"] = f.Path
			c.Files = append(c.Files, f)
			parts = append(parts, f.Path)
		}
		if f.Description != "" {
			e["description"] = f.Description
		}
		if f.EncodingFormat != "" {
			e["encodingFormat"] = f.EncodingFormat
		}
		if _, ok := fileIDs[f.SHA256]; !ok {
			fileIDs[f.SHA256] = e["@id"].(string)
		}
		g.add(e)
		return nil
	}

	g.add(Entity{"@id": MetadataFile, "@type": "CreativeWork", "about": ref("./"),
		"conformsTo": refs([]string{ROCrate, WorkflowCrate})})
	root := Entity{"@id": "./", "@type": "Dataset", "name": in.Name, "description": in.Description,
		"datePublished": in.Published.UTC().Format(time.RFC3339),
		"conformsTo":    refs([]string{ProcessRun, WorkflowRun, ProvenanceRun, WorkflowCrate}),
		"mainEntity":    ref(WorkflowID)}
	g.add(root)
	for _, p := range []struct{ id, name, version string }{
		{ROCrate, "RO-Crate", "1.1"}, {ProcessRun, "Process Run Crate", "0.5"}, {WorkflowRun, "Workflow Run Crate", "0.5"},
		{ProvenanceRun, "Provenance Run Crate", "0.5"}, {WorkflowCrate, "Workflow RO-Crate", "1.0"},
	} {
		g.add(Entity{"@id": p.id, "@type": "CreativeWork", "name": p.name, "version": p.version})
	}

	// The workflow, its language and engine, its steps and tools.
	if err := copyFile(in.Workflow); err != nil {
		return nil, err
	}
	wf := g.byID[WorkflowID]
	wf["@type"] = []string{"File", "SoftwareSourceCode", "ComputationalWorkflow", "HowTo"}
	wf["version"] = in.Revision
	wf["programmingLanguage"] = ref(languageID)
	if in.WorkflowDescription != "" {
		wf["description"] = in.WorkflowDescription
	}
	if in.README != nil {
		if err := copyFile(in.README); err != nil {
			return nil, err
		}
		g.byID[in.README.Path]["about"] = ref(WorkflowID)
		wf["subjectOf"] = ref(in.README.Path)
	}
	g.add(Entity{"@id": languageID, "@type": "ComputerLanguage", "name": "repro pipeline.toml",
		"alternateName": "repro", "description": "the TOML declaration of a repro pipeline: stages' cells, experiments, tables and figures (docs/pipeline.md)"})
	g.add(Entity{"@id": engineID, "@type": "SoftwareApplication", "name": "repro", "version": in.Revision, "softwareVersion": in.Revision,
		"description": "the repro command, which plans, runs and caches the workflow's cells (content-addressed; records in the results ledger paper/cells)"})
	for _, f := range []*File{in.Citation, in.License} {
		if f != nil {
			if err := copyFile(f); err != nil {
				return nil, err
			}
		}
	}
	if in.Citation != nil {
		root["citation"] = ref(in.Citation.Path)
		wf["citation"] = ref(in.Citation.Path)
	}
	if in.License != nil {
		root["license"] = ref(in.License.Path)
		wf["license"] = ref(in.License.Path)
	}

	// Data releases: their files at the canonical URLs.
	var releaseFiles []string
	for _, r := range in.Releases {
		id := "#release-" + frag(r.Dataset)
		var has []string
		for _, f := range r.Files {
			if len(f.URLs) == 0 {
				return nil, fmt.Errorf("crate: release %s: file %s has no URL", r.Dataset, f.Name)
			}
			e := Entity{"@id": f.URLs[0], "@type": "File", "name": f.Name, "sha256": f.SHA256, "url": f.URLs[0]}
			if f.Size > 0 {
				e["contentSize"] = strconv.FormatInt(f.Size, 10)
			}
			if len(f.URLs) > 1 {
				e["sameAs"] = refs(f.URLs[1:])
			}
			g.add(e)
			fileIDs[f.SHA256] = f.URLs[0]
			has = append(has, f.URLs[0])
		}
		for _, m := range r.Members {
			mid := DigestID(m.SHA256)
			e := Entity{"@id": mid, "@type": "File", "name": m.Name, "sha256": m.SHA256}
			if len(r.Files) == 1 {
				e["isPartOf"] = ref(r.Files[0].URLs[0])
			}
			g.add(e)
			fileIDs[m.SHA256] = mid
			has = append(has, mid)
		}
		g.add(Entity{"@id": id, "@type": "Dataset", "name": "data release " + r.Dataset, "hasPart": refs(has)})
		releaseFiles = append(releaseFiles, has...)
	}

	// The rendered paper and the authors' runs' files, copied or by digest.
	var outputIDs []string
	for _, f := range in.Outputs {
		if err := copyFile(f); err != nil {
			return nil, err
		}
		outputIDs = append(outputIDs, fileIDs[f.SHA256])
	}
	for _, r := range in.ReferenceRuns {
		if err := copyFile(r.File); err != nil {
			return nil, err
		}
	}
	fileOf := func(d artifacts.Digest) string {
		h := d.String()
		if id, ok := fileIDs[h]; ok {
			return id
		}
		id := DigestID(h)
		fileIDs[h] = id
		return id
	}

	// Stages: one step each, one tool per version, positioned after the
	// stages they read.
	byKey := map[artifacts.Key]*artifacts.Manifest{}
	for _, m := range in.Records {
		byKey[m.Key] = m
	}
	depth := map[string]int{}
	var stageDepth func(m *artifacts.Manifest, seen map[artifacts.Key]bool) int
	stageDepth = func(m *artifacts.Manifest, seen map[artifacts.Key]bool) int {
		d := 0
		for _, inp := range m.Inputs {
			if up := byKey[inp.Key]; up != nil && !seen[up.Key] {
				seen[up.Key] = true
				d = max(d, 1+stageDepth(up, seen))
			}
		}
		return d
	}
	versions := map[string][]int{}
	for _, m := range in.Records {
		depth[m.Stage] = max(depth[m.Stage], stageDepth(m, map[artifacts.Key]bool{}))
		if !slices.Contains(versions[m.Stage], m.StageVersion) {
			versions[m.Stage] = append(versions[m.Stage], m.StageVersion)
		}
	}
	stageNames := make([]string, 0, len(versions))
	for s := range versions {
		stageNames = append(stageNames, s)
	}
	slices.SortFunc(stageNames, func(a, b string) int {
		if depth[a] != depth[b] {
			return depth[a] - depth[b]
		}
		return strings.Compare(a, b)
	})
	formals := map[string][]string{} // tool -> its formal parameters
	for _, s := range stageNames {
		slices.Sort(versions[s])
		var tools []string
		for _, v := range versions[s] {
			id := ToolID(s, v)
			tools = append(tools, id)
			g.add(Entity{"@id": id, "@type": "SoftwareApplication", "name": "repro stage " + s,
				"version": strconv.Itoa(v), "softwareVersion": strconv.Itoa(v),
				"description": fmt.Sprintf("stage %s at version %d (a stage's version is part of every key of its cells)", s, v),
				"isPartOf":    ref(engineID)})
		}
		g.add(Entity{"@id": StepID(s), "@type": "HowToStep", "name": s, "position": strconv.Itoa(depth[s]), "workExample": refs(tools)})
		wf["step"] = append(stepsOf(wf), ref(StepID(s)))
		l, _ := wf["hasPart"].([]map[string]string)
		wf["hasPart"] = append(l, refs(tools)...)
	}

	// One action per record, one control action per action.
	var actions, controls []string
	var start, end time.Time
	for _, m := range in.Records {
		pv := m.Provenance
		aid := ActionID(m.Key)
		tool := ToolID(m.Stage, m.StageVersion)
		var object, result, informed []string
		for _, inp := range m.Inputs {
			for _, o := range inp.Outputs {
				id := fileOf(o.Digest)
				g.add(Entity{"@id": id, "@type": "File", "name": o.Name, "sha256": o.Digest.String(), "contentSize": strconv.FormatInt(o.Size, 10)})
				object = append(object, id)
			}
			if byKey[inp.Key] != nil {
				informed = append(informed, ActionID(inp.Key))
			}
		}
		params, err := paramLines(m.Params)
		if err != nil {
			return nil, fmt.Errorf("crate: cell %s: %w", m.CellID, err)
		}
		for _, p := range params {
			fid := "#param-" + frag(p.name)
			if !slices.Contains(formals[tool], fid) {
				formals[tool] = append(formals[tool], fid)
				g.add(Entity{"@id": fid, "@type": "FormalParameter", "name": p.name, "additionalType": "Text",
					"conformsTo": ref("https://bioschemas.org/profiles/FormalParameter/1.0-RELEASE")})
			}
			id := "#param-" + frag(p.name) + "=" + frag(p.value)
			g.add(Entity{"@id": id, "@type": "PropertyValue", "name": p.name, "propertyID": p.name, "value": p.value, "exampleOfWork": ref(fid)})
			object = append(object, id)
		}
		for _, o := range m.Outputs {
			id := fileOf(o.Digest)
			g.add(Entity{"@id": id, "@type": "File", "name": o.Name, "sha256": o.Digest.String(), "contentSize": strconv.FormatInt(o.Size, 10)})
			result = append(result, id)
		}
		var build []string
		addBuild := func(prop, value string) {
			if value == "" {
				return
			}
			id := "#build-" + prop + "-" + frag(value)
			g.add(Entity{"@id": id, "@type": "PropertyValue", "name": prop, "propertyID": prop, "value": value})
			build = append(build, id)
		}
		addBuild("revision", pv.Revision)
		if pv.Dirty {
			addBuild("dirty_diff", cmp.Or(pv.DirtyDiff, "unknown"))
		}
		addBuild("go_version", pv.GoVersion)
		addBuild("host", pv.Host)
		addBuild("cpu", pv.CPU)
		addBuild("kernels", pv.Kernels)
		addBuild("executor", pv.Executor)
		addBuild("slurm_job", pv.SlurmJob)
		for _, b := range pv.Earlier {
			addBuild("earlier_revision", b.Revision)
		}
		a := Entity{"@id": aid, "@type": "CreateAction", "name": m.CellID, "identifier": m.Key.String(),
			"description":        fmt.Sprintf("cell %s: stage %s v%d, key %s", m.CellID, m.Stage, m.StageVersion, m.Key),
			"instrument":         ref(tool),
			"object":             refs(object),
			"result":             refs(result),
			"startTime":          pv.Start.UTC().Format(time.RFC3339Nano),
			"endTime":            pv.End.UTC().Format(time.RFC3339Nano),
			"additionalProperty": refs(build),
			"agent":              ref(engineID),
		}
		if len(informed) > 0 {
			a["prov:wasInformedBy"] = refs(informed)
		}
		g.add(a)
		actions = append(actions, aid)
		cid := "#control-" + m.Key.String()
		g.add(Entity{"@id": cid, "@type": "ControlAction", "name": "orchestrate " + m.CellID, "instrument": ref(StepID(m.Stage)), "object": ref(aid)})
		controls = append(controls, cid)
		if start.IsZero() || pv.Start.Before(start) {
			start = pv.Start
		}
		end = maxTime(end, pv.End)
	}
	for _, s := range stageNames {
		for _, v := range versions[s] {
			if f := formals[ToolID(s, v)]; len(f) > 0 {
				g.byID[ToolID(s, v)]["input"] = refs(f)
			}
		}
	}

	// The numbers, with the paper's values and the verdicts.
	var numbers []string
	for _, n := range in.Numbers {
		id := NumberID(n.ID)
		e := Entity{"@id": id, "@type": "PropertyValue", "name": n.ID, "propertyID": n.ID,
			"description": fmt.Sprintf("number %s of %s (ours, as the reproduction prints it)", n.ID, n.Group)}
		if n.Ours != "" {
			e["value"] = n.Ours
		}
		var vref, seeds, results []string
		if n.Published != "" || n.Verdict != "" {
			pid := "#published/" + frag(n.ID)
			p := Entity{"@id": pid, "@type": "PropertyValue", "name": "published", "propertyID": "published", "value": n.Published}
			if n.Cite != "" {
				p["description"] = n.Cite
			}
			g.add(p)
			vid := "#verdict/" + frag(n.ID)
			v := Entity{"@id": vid, "@type": "PropertyValue", "name": "verdict", "propertyID": "verdict", "value": n.Verdict}
			if n.Judgement != "" {
				v["description"] = n.Judgement
			}
			g.add(v)
			vref = append(vref, pid, vid)
		}
		if n.Authors != "" {
			aid := "#authors/" + frag(n.ID)
			a := Entity{"@id": aid, "@type": "PropertyValue", "name": "authors' code rerun", "propertyID": "authors_rerun", "value": n.Authors}
			if id, ok := fileIDs[n.ReferenceFile]; ok {
				a["isBasedOn"] = ref(id)
			}
			g.add(a)
			vref = append(vref, aid)
		}
		for _, s := range n.Seeds {
			if byKey[s.Key] == nil {
				return nil, fmt.Errorf("crate: number %s: seed %d: no record %s", n.ID, s.Seed, s.Key.Short())
			}
			seeds = append(seeds, ActionID(s.Key))
			if id, ok := fileIDs[s.Result]; ok {
				results = append(results, id)
			} else {
				return nil, fmt.Errorf("crate: number %s: seed %d: result sha256:%s is no record's output", n.ID, s.Seed, s.Result)
			}
		}
		if len(vref) > 0 {
			e["valueReference"] = refs(vref)
		}
		if len(seeds) > 0 {
			e["prov:wasInfluencedBy"] = refs(seeds)
			e["isBasedOn"] = refs(results)
		}
		g.add(e)
		numbers = append(numbers, id)
		if byKey[n.Producer] != nil {
			g.appendRefs(ActionID(n.Producer), "result", id)
		}
	}

	// The authors' runs: an action each, their scripts at their commits.
	for _, r := range in.ReferenceRuns {
		var scripts []string
		for _, s := range ScriptsOf(r.Reference) {
			sid := "#authors-" + frag(s.Path) + "@" + s.Commit
			g.add(Entity{"@id": sid, "@type": "SoftwareSourceCode", "name": s.Path, "version": s.Commit,
				"description": "the paper authors' code, at the commit that ran"})
			scripts = append(scripts, sid)
		}
		if len(scripts) == 0 {
			return nil, fmt.Errorf("crate: reference run %s: its reference names no script at a commit: %q", r.Config, r.Reference)
		}
		aid := "#reference-run-" + frag(strings.TrimSuffix(r.File.Path[strings.LastIndex(r.File.Path, "/")+1:], ".tsv"))
		seeds := make([]string, len(r.Seeds))
		for i, s := range r.Seeds {
			seeds[i] = strconv.FormatInt(s, 10)
		}
		g.add(Entity{"@id": aid, "@type": "CreateAction", "name": fmt.Sprintf("the authors' %s runs of %s", r.Script, r.Config),
			"description": fmt.Sprintf("%s; seeds %s; split: %s; source: %s", r.Command, strings.Join(seeds, " "), r.Split, r.Source),
			"instrument":  refs(scripts), "result": ref(fileIDs[r.File.SHA256])})
		actions = append(actions, aid)
	}

	// The run of the whole workflow and the engine's organisation of it.
	g.add(Entity{"@id": runID, "@type": "CreateAction", "name": fmt.Sprintf("profile %s of the workflow, as its records stand in the results ledger", in.Profile),
		"instrument": ref(WorkflowID), "object": refs(releaseFiles), "result": refs(append(slices.Clone(outputIDs), numbers...)),
		"startTime": start.UTC().Format(time.RFC3339Nano), "endTime": end.UTC().Format(time.RFC3339Nano), "agent": ref(engineID)})
	g.add(Entity{"@id": organizeID, "@type": "OrganizeAction", "name": "repro run --profile " + in.Profile,
		"instrument": ref(engineID), "object": refs(controls), "result": ref(runID),
		"startTime": start.UTC().Format(time.RFC3339Nano), "endTime": end.UTC().Format(time.RFC3339Nano)})
	root["hasPart"] = refs(parts)
	root["mentions"] = refs(append([]string{runID}, actions...))

	for _, id := range g.order {
		c.Graph = append(c.Graph, g.byID[id])
	}
	return c, nil
}

func stepsOf(wf Entity) []map[string]string {
	l, _ := wf["step"].([]map[string]string)
	return l
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// param is one "name value" line of a record's params.
type param struct{ name, value string }

// paramLines splits a record's canonical params text (one "name value"
// line per param; pipeline.ParseParamsText reads the same) without
// importing the pipeline.
func paramLines(text string) ([]param, error) {
	var out []param
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if line == "" {
			continue
		}
		name, value, ok := strings.Cut(line, " ")
		if !ok {
			return nil, fmt.Errorf("params line %d: %q is not \"name value\"", i+1, line)
		}
		out = append(out, param{name, value})
	}
	return out, nil
}

// Script is one of the authors' files at a commit.
type Script struct{ Path, Commit string }

var scriptRe = regexp.MustCompile(`(\S+) at ([0-9a-f]{40})\b`)

// ScriptsOf reads the scripts and commits a reference-run file's header
// names ("src/run_seq.py at <commit>, src/models/cortex.py at <commit>").
func ScriptsOf(reference string) []Script {
	var out []Script
	for _, m := range scriptRe.FindAllStringSubmatch(reference, -1) {
		out = append(out, Script{m[1], m[2]})
	}
	return out
}
