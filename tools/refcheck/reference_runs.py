#!/usr/bin/env python3
"""reference_runs: the authors' per-seed --val results as paper/reference-runs/<config>.tsv.

Usage: reference_runs.py --parts DIR --ran SRC --reference REFDIR --out OUTDIR pipeline.toml

For every authors' configuration that a [[disputed.row]] of pipeline.toml names (reference,
minus_reference), reads DIR/val_<config>_s<seed>.pkl (the checkpoints the authors' run_seq.py wrote
for `--val`, split seed 1234) and writes OUTDIR/<config>.tsv in the format package
internal/refruns parses: a header (config, command, reference, split, source), the column line and
one line per finished seed. A configuration with no finished seed gets a file with no seed lines.
The runs of one configuration may be made on several machines: the seed lines an existing
OUTDIR/<config>.tsv holds for seeds that have no checkpoint in DIR are kept (only when that
file names the same reference commits; else nothing is written), and a seed present in both
must print the same line (the authors' code is deterministic at one thread): a rerun that
disagrees is an error naming the file and the seed.
SRC is the copy of the authors' src/ that ran: its run_seq.py and models/cortex.py must match
REFDIR/SHA256SUMS (else the runs are not of the reference, and nothing is written). Only the
checkpoints' own numbers are read; nothing of the authors' code is imported.
"""
import argparse
import glob
import hashlib
import os
import pickle
import re
import sys
import tomllib

FILES = ["src/run_seq.py", "src/models/cortex.py"]


def digests(refdir):
    out = {}
    with open(os.path.join(refdir, "SHA256SUMS")) as fh:
        for line in fh:
            d, name = line.split()
            out[name] = d
    return out


def commits(refdir):
    out = {}
    with open(os.path.join(refdir, "README.md")) as fh:
        for line in fh:
            m = re.match(r"\| `(src/[^`]+)` \| `[^`]+` \| `([0-9a-f]{40})`", line)
            if m:
                out[m.group(1)] = m.group(2)
    return out


def sha256(path):
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def configs(pipeline):
    with open(pipeline, "rb") as fh:
        doc = tomllib.load(fh)
    out = []
    for row in doc.get("disputed", {}).get("row", []):
        for key in ("reference", "minus_reference"):
            c = row.get(key)
            if c and c not in out:
                out.append(c)
    return out


def existing(path, cfg, reference):
    """The seed lines of an earlier OUTDIR/<config>.tsv, by seed ({} when there is none)."""
    if not os.path.exists(path):
        return {}
    kept = {}
    with open(path) as fh:
        for n, line in enumerate(fh, 1):
            line = line.rstrip("\n")
            if line.startswith("# config: ") and line != f"# config: {cfg}":
                sys.exit(f"reference_runs: {path}:{n}: names another configuration ({line[10:]}), not {cfg}")
            if line.startswith("# reference: ") and line != f"# reference: {reference}":
                sys.exit(f"reference_runs: {path}:{n}: runs of another reference ({line[13:]}); move the file away to start over")
            if line.startswith("#") or line.startswith("seed\t") or not line:
                continue
            seed = line.split("\t", 1)[0]
            if not seed.isdigit():
                sys.exit(f"reference_runs: {path}:{n}: not a seed line: {line!r}")
            kept[int(seed)] = line
    return kept


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parts", required=True)
    ap.add_argument("--ran", required=True, help="the copy of the authors' src/ that ran")
    ap.add_argument("--reference", required=True, help="../shared/spec/reference")
    ap.add_argument("--out", required=True)
    ap.add_argument("pipeline")
    a = ap.parse_args()
    sums, refs = digests(a.reference), commits(a.reference)
    for f in FILES:
        got = sha256(os.path.join(a.ran, f[len("src/"):]))
        if got != sums.get(f):
            sys.exit(f"reference_runs: {a.ran}/{f[len('src/'):]}: sha256 {got}, not the reference's {sums.get(f)}: not the authors' code")
    reference = ", ".join(f"{f} at {refs[f]}" for f in FILES) + " (SHA-256 as in its SHA256SUMS)"
    os.makedirs(a.out, exist_ok=True)
    for cfg in configs(a.pipeline):
        rows = []
        for path in glob.glob(os.path.join(a.parts, f"val_{cfg}_s*.pkl")):
            m = re.fullmatch(re.escape("val_" + cfg) + r"_s(\d+)\.pkl", os.path.basename(path))
            if not m:
                continue
            with open(path, "rb") as fh:
                out = pickle.load(fh)
            if out.get("config") != cfg or int(out.get("seed", -1)) != int(m.group(1)) or not out.get("run_args", {}).get("val"):
                sys.exit(f"reference_runs: {path}: not a --val run of {cfg} seed {m.group(1)}")
            if str(out.get("omp_threads")) != "1":
                sys.exit(f"reference_runs: {path}: ran with OMP_NUM_THREADS={out.get('omp_threads')}, want 1")
            rows.append((int(m.group(1)), out))
        dst = os.path.join(a.out, cfg + ".tsv")
        lines = existing(dst, cfg, reference)
        ran = set()
        for seed, out in rows:
            line = f"{seed}\t{100 * out['final_acc']:.2f}\t{100 * out['forgetting']:.2f}\t{int(out.get('replay_used') or 0)}"
            if seed in lines and lines[seed] != line:
                sys.exit(f"reference_runs: {dst}: seed {seed}: the file says {lines[seed]!r}, the checkpoint here {line!r}: the authors' code is not reproducing itself")
            lines[seed] = line
            ran.add(seed)
        tmp = dst + ".tmp"
        with open(tmp, "w") as fh:
            fh.write(f"# config: {cfg}\n")
            fh.write(f"# command: OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 python3 src/run_seq.py --configs {cfg} --seeds S --val --resume (one run per seed S, Debian python3-torch, nice 19)\n")
            fh.write(f"# reference: {reference}\n")
            fh.write("# split: --val: the stratified held-out tenth of the training set, seed 1234 (our split1234, sample for sample)\n")
            fh.write(f"# source: make reference-runs (tools/refcheck/reference_runs.py) from val_{cfg}_s<seed>.pkl\n")
            fh.write("seed\tfinal_acc\tforgetting\treplay_used\n")
            for seed in sorted(lines):
                fh.write(lines[seed] + "\n")
        os.replace(tmp, dst)
        kept = sorted(set(lines) - ran)
        print(f"{dst}: {len(lines)} seeds {sorted(lines)} ({len(ran)} from checkpoints here, {len(kept)} kept from the file)")


if __name__ == "__main__":
    main()
