#!/usr/bin/python3
"""Checks a crate written by `repro crate` as an RDF graph (TestCrate).

usage: check_crate.py CRATE_DIR CONTEXT QUESTIONS

Reads CRATE_DIR/ro-crate-metadata.json as JSON-LD with PyLD, whose document
loader serves CONTEXT (a vendored copy of the RO-Crate 1.1 context's terms
the crate uses; there is no network here) for https://w3id.org/ro/crate/1.1/context
and refuses any other URL; loads the RDF into rdflib; checks the RO-Crate
1.1 structural rules and the profiles' required links; and answers the
Provenance Run Crate's competency questions with SPARQL for each number and
cell of QUESTIONS (JSON: {"numbers": [ID, ...], "cells": [KEY, ...]}).
Prints one JSON object: {"problems": [...], "numbers": {ID: answers},
"cells": {KEY: answers}, "triples": N}. Exit status 0 unless it could not run.
"""
import json
import os
import re
import sys
import time

import rdflib
from pyld import jsonld

CRATE_CONTEXT = "https://w3id.org/ro/crate/1.1/context"
BASE = "arcp://name,repro-crate/"
PREFIXES = """
PREFIX schema: <http://schema.org/>
PREFIX dct: <http://purl.org/dc/terms/>
PREFIX bio: <https://bioschemas.org/>
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX wfrun: <https://w3id.org/ro/terms/workflow-run#>
"""
PROFILES = [
    "https://w3id.org/ro/wfrun/process/0.5",
    "https://w3id.org/ro/wfrun/workflow/0.5",
    "https://w3id.org/ro/wfrun/provenance/0.5",
    "https://w3id.org/workflowhub/workflow-ro-crate/1.0",
]


def main():
    crate_dir, context_path, questions_path = sys.argv[1:4]
    with open(os.path.join(crate_dir, "ro-crate-metadata.json"), encoding="utf-8") as f:
        doc = json.load(f)
    with open(context_path, encoding="utf-8") as f:
        context = json.load(f)
    with open(questions_path, encoding="utf-8") as f:
        questions = json.load(f)
    problems = structural(doc, context, crate_dir)

    def loader(url, options=None):
        if url != CRATE_CONTEXT:
            raise jsonld.JsonLdError("no network: only the RO-Crate 1.1 context is served", "loading document failed", {"url": url})
        return {"contentType": "application/ld+json", "contextUrl": None, "documentUrl": url, "document": context}

    jsonld.set_document_loader(loader)
    nquads = jsonld.to_rdf(doc, {"base": BASE, "format": "application/n-quads"})
    g = rdflib.Graph()
    g.parse(data=nquads, format="nt")  # the default graph's N-Quads are N-Triples
    log("parsed %d triples" % len(g))
    problems += graph_rules(g)
    log("checked the structure")
    out = {"problems": problems, "triples": len(g), "numbers": {}, "cells": {}}
    for nid in questions.get("numbers", []):
        out["numbers"][nid] = number_answers(g, nid)
    for key in questions.get("cells", []):
        out["cells"][key] = cell_answers(g, key)
    json.dump(out, sys.stdout, indent=1, sort_keys=True)


START = time.time()


def log(msg):
    print("check_crate: %.1f s: %s" % (time.time() - START, msg), file=sys.stderr, flush=True)


def structural(doc, context, crate_dir):
    """RO-Crate 1.1's rules on the JSON itself (before any RDF)."""
    p = []
    ctx = doc.get("@context")
    ctxs = ctx if isinstance(ctx, list) else [ctx]
    if CRATE_CONTEXT not in ctxs:
        p.append("@context does not name %s" % CRATE_CONTEXT)
    terms = set(context["@context"])
    for c in ctxs:
        if isinstance(c, dict):
            terms |= set(c)
    graph = doc.get("@graph")
    if not isinstance(graph, list):
        return p + ["no flat @graph list"]
    ids = {}
    known = {e.get("@id") for e in graph}
    for e in graph:
        if "@id" not in e or "@type" not in e:
            p.append("entity without @id or @type: %r" % (e,)[:200])
            continue
        if e["@id"] in ids:
            p.append("@id %s twice" % e["@id"])
        ids[e["@id"]] = e
        types = e["@type"] if isinstance(e["@type"], list) else [e["@type"]]
        for k in list(e) + types:
            if not k.startswith("@") and ":" not in k and k not in terms:
                p.append("term %r (of %s) is not in the context: JSON-LD would drop it" % (k, e["@id"]))
        for k, v in e.items():
            for r in v if isinstance(v, list) else [v]:
                if isinstance(r, dict):
                    if set(r) != {"@id"}:
                        p.append("%s: %s is a nested object, not a reference (the graph must be flat)" % (e["@id"], k))
                    elif not re.match(r"^[a-z][a-z0-9+.-]*:", r["@id"]) and r["@id"] not in known:
                        p.append("%s: %s references %s, which the graph does not describe" % (e["@id"], k, r["@id"]))
    desc = ids.get("ro-crate-metadata.json")
    if desc is None:
        p.append("no metadata descriptor ro-crate-metadata.json")
    else:
        if desc.get("@type") != "CreativeWork":
            p.append("the metadata descriptor is not a CreativeWork")
        if desc.get("about") != {"@id": "./"}:
            p.append("the metadata descriptor is not about ./")
        conf = [c.get("@id") for c in as_list(desc.get("conformsTo"))]
        if not any(c.startswith("https://w3id.org/ro/crate/1.1") for c in conf):
            p.append("the metadata descriptor does not conform to RO-Crate 1.1: %r" % conf)
    root = ids.get("./")
    if root is None:
        return p + ["no root data entity ./"]
    if "Dataset" not in as_list(root.get("@type")):
        p.append("the root data entity is not a Dataset")
    for k in ("name", "description", "datePublished"):
        if not root.get(k):
            p.append("the root data entity has no %s" % k)
    if root.get("datePublished") and not re.match(r"^\d{4}-\d\d-\d\d", root["datePublished"]):
        p.append("datePublished %r is not ISO 8601" % root["datePublished"])
    conf = [c.get("@id") for c in as_list(root.get("conformsTo"))]
    for prof in PROFILES:
        if prof not in conf:
            p.append("the root data entity does not conform to %s" % prof)
    # Every data entity the root lists is a file of the crate.
    for r in as_list(root.get("hasPart")):
        rid = r["@id"]
        if re.match(r"^[a-z][a-z0-9+.-]*:", rid):
            continue
        if not os.path.isfile(os.path.join(crate_dir, rid)):
            p.append("root hasPart %s: no such file in the crate" % rid)
    return p


def as_list(v):
    if v is None:
        return []
    return v if isinstance(v, list) else [v]


def q(g, text, **bind):
    """Runs a SPARQL query, each ?name of bind replaced by its literal."""
    # Written into the text, not passed as initBindings: rdflib applies
    # those after matching, which on this graph takes minutes.
    for k, v in bind.items():
        text = text.replace("?" + k + " ", rdflib.Literal(v).n3() + " ")
    return list(g.query(PREFIXES + text))


def graph_rules(g):
    """The profiles' required links, asked of the RDF graph."""
    p = []
    base = rdflib.URIRef(BASE)
    rules = {
        "the descriptor conforms to RO-Crate 1.1 and is about the root": """
            ASK { ?d dct:conformsTo <https://w3id.org/ro/crate/1.1> ; schema:about ?root .
                  ?root a schema:Dataset ; dct:conformsTo <https://w3id.org/ro/wfrun/provenance/0.5> ; schema:mainEntity ?wf . }""",
        "the main entity is a File, SoftwareSourceCode, ComputationalWorkflow and HowTo with steps and tools": """
            ASK { ?root schema:mainEntity ?wf . ?wf a schema:MediaObject, schema:SoftwareSourceCode, bio:ComputationalWorkflow, schema:HowTo ;
                  schema:step ?s ; schema:hasPart ?t ; schema:programmingLanguage ?l ; schema:version ?v .
                  ?s a schema:HowToStep ; schema:workExample ?t . ?t a schema:SoftwareApplication . }""",
        "the workflow run's action has the workflow as instrument": """
            ASK { ?root schema:mainEntity ?wf ; schema:mentions ?run . ?run a schema:CreateAction ; schema:instrument ?wf . }""",
        "the engine's OrganizeAction has the run as result and control actions as object": """
            ASK { ?o a schema:OrganizeAction ; schema:instrument ?engine ; schema:result ?run ; schema:object ?c .
                  ?run schema:instrument ?wf . ?c a schema:ControlAction ; schema:instrument ?step ; schema:object ?a .
                  ?step a schema:HowToStep . ?a a schema:CreateAction ; schema:instrument ?tool . ?step schema:workExample ?tool . }""",
    }
    for name, text in rules.items():
        if not g.query(PREFIXES + text).askAnswer:
            p.append("graph rule failed: " + name)
    # Every cell action: an instrument that is a step's tool, an end time,
    # and each file it reads or writes with its SHA-256. Walked with
    # rdflib's triple index: the same as SPARQL with FILTER NOT EXISTS takes
    # minutes in rdflib's engine on this graph.
    S = rdflib.Namespace("http://schema.org/")
    sha = rdflib.URIRef("https://w3id.org/ro/terms/workflow-run#sha256")
    bad = []
    controls = list(g.subjects(rdflib.RDF.type, S.ControlAction))
    for c in controls:
        a, step = g.value(c, S.object), g.value(c, S.instrument)
        tool = g.value(a, S.instrument) if a is not None else None
        if tool is None or (step, S.workExample, tool) not in g or g.value(a, S.endTime) is None or (a, rdflib.RDF.type, S.CreateAction) not in g:
            bad.append(str(a))
    if not controls or bad:
        p.append("%d of %d cell actions lack a step's tool or an end time, e.g. %s" % (len(bad), len(controls), bad[:1]))
    files, bad = set(), set()
    for a in g.subjects(rdflib.RDF.type, S.CreateAction):
        for prop in (S.object, S.result):
            for f in g.objects(a, prop):
                if (f, rdflib.RDF.type, S.MediaObject) in g:
                    files.add(f)
                    if g.value(f, sha) is None:
                        bad.add(str(f))
    if not files or bad:
        p.append("%d of %d files an action reads or writes have no sha256, e.g. %s" % (len(bad), len(files), sorted(bad)[:1]))
    return p


def number_answers(g, nid):
    """number -> its seeds' actions -> seeds, tool versions, commits,
    configuration, data digests upstream; the verdict."""
    a = {}
    rows = q(g, """
        SELECT DISTINCT ?key ?seed ?version ?rev WHERE {
          ?n a schema:PropertyValue ; schema:propertyID ?nid ; prov:wasInfluencedBy ?a .
          ?a schema:identifier ?key ; schema:instrument ?tool ;
             schema:additionalProperty [ schema:propertyID "revision" ; schema:value ?rev ] .
          ?tool schema:softwareVersion ?version .
          # The seed is the train cell's, this one's or upstream (an energy
          # cell reads its seed's train and spike cells).
          ?a prov:wasInformedBy* ?t . ?t schema:object [ schema:propertyID "train.seed" ; schema:value ?seed ] . }""", nid=nid)
    a["seeds"] = sorted({"%s seed=%s v%s code %s" % (r.key, r.seed, r.version, r.rev) for r in rows})
    rows = q(g, """
        SELECT DISTINCT ?cell ?sha WHERE {
          ?n a schema:PropertyValue ; schema:propertyID ?nid ; prov:wasInfluencedBy ?a .
          ?a prov:wasInformedBy+ ?up .
          ?up schema:instrument ?tool ; schema:name ?cell ; schema:result ?f .
          ?tool schema:name ?stage . FILTER(?stage IN ("repro stage split", "repro stage download"))
          ?f wfrun:sha256 ?sha . }""", nid=nid)
    a["data"] = sorted({"%s %s" % (r.cell, r.sha) for r in rows})
    rows = q(g, """
        SELECT ?verdict ?published WHERE {
          ?n a schema:PropertyValue ; schema:propertyID ?nid ;
             schema:valueReference [ schema:propertyID "verdict" ; schema:value ?verdict ] ;
             schema:valueReference [ schema:propertyID "published" ; schema:value ?published ] . }""", nid=nid)
    a["verdict"] = sorted({"%s (published %s)" % (r.verdict, r.published) for r in rows})
    rows = q(g, """
        SELECT ?value ?producer WHERE { ?n a schema:PropertyValue ; schema:propertyID ?nid ; schema:value ?value .
          OPTIONAL { ?p schema:result ?n ; schema:identifier ?k ; schema:name ?producer } }""", nid=nid)
    a["value"] = sorted({"%s from %s" % (r.value, r.producer) for r in rows})
    return a


def cell_answers(g, key):
    """Which actions produced this cell's result file, with which
    parameters, from which inputs, by which tool version."""
    a = {}
    rows = q(g, """
        SELECT ?name ?value WHERE { ?a schema:identifier ?key ; schema:object ?p .
          ?p a schema:PropertyValue ; schema:propertyID ?name ; schema:value ?value . }""", key=key)
    a["params"] = sorted("%s = %s" % (r.name, r.value) for r in rows)
    rows = q(g, """
        SELECT ?sha WHERE { ?a schema:identifier ?key ; schema:object ?f . ?f a schema:MediaObject ; wfrun:sha256 ?sha . }""", key=key)
    a["inputs"] = sorted({str(r.sha) for r in rows})
    rows = q(g, """
        SELECT DISTINCT ?other ?tool ?version WHERE { ?a schema:identifier ?key ; schema:result ?f .
          ?b schema:result ?f ; schema:identifier ?other ; schema:instrument ?t .
          ?t schema:name ?tool ; schema:softwareVersion ?version . }""", key=key)
    a["producers_of_result"] = sorted({"%s %s v%s" % (r.other, r.tool, r.version) for r in rows})
    return a


if __name__ == "__main__":
    main()
