#!/usr/bin/env python3
"""reference_runs: the authors' per-seed results as paper/reference-runs/<config>.tsv.

Usage: reference_runs.py --parts DIR [--mnist-parts DIR] --ran SRC --reference REFDIR --out OUTDIR pipeline.toml

For every authors' configuration that a [[disputed.row]] of pipeline.toml names (reference,
minus_reference), reads the checkpoints its runs wrote and writes OUTDIR/<config>.tsv in the format
package internal/refruns parses: a header (config, command, reference, split, source), the column
line and one line per finished seed. The row's reference_script says which script ran:
run_seq (the default) reads DIR/val_<config>_s<seed>.pkl, the checkpoints run_seq.py wrote for
`--val` (split seed 1234); a row with eval = "split<N>" (another held-out split) reads
DIR/val<N>_<config>_s<seed>.pkl, its `--val --val-seed N` runs, into OUTDIR/<config>.split<N>.tsv;
run_seq_test reads DIR/<config>_s<seed>.pkl, its runs without --val
(scored on the official test set); run_mnist reads MNISTDIR/<config>_s<seed>.pkl, the
checkpoints run_mnist.py wrote (the substrate ladder, scored on the official test set).
A configuration with no finished seed gets a file with no seed lines.
The runs of one configuration may be made on several machines: the seed lines an existing
OUTDIR/<config>.tsv holds for seeds that have no checkpoint here are kept (only when that file
names the same reference commits and columns; else nothing is written). Each seed line ends in
the machine it ran on (--machine, default this one: the CPU model and the instruction set torch's
math libraries pick on it, "<cpu>; <isa>"). The authors' code is deterministic at one thread on
one machine, but not across CPU generations (docs/disputed.md: the same seed gave 90.10 on one
and 90.77 on another). So a seed present in both that prints another line is an error only when
the file says it ran on this same machine (the code not reproducing itself); a rerun on another
machine (or on one the file did not record) is refused, saying so, and the file's line is kept:
a seed is one draw, the first machine's.
SRC is the copy of the authors' src/ that ran: the files each script runs must match
REFDIR/SHA256SUMS (else the runs are not of the reference, and nothing is written). Only the
checkpoints' own numbers are read; nothing of the authors' code is imported.
"""
import argparse
import glob
import hashlib
import os
import pickle
import platform
import re
import subprocess
import sys
import tomllib

# What each of the authors' scripts runs, where its checkpoints are, and how its files say it.
VAL_SEED = 1234  # run_seq.py's --val split seed when --val-seed is not given (our split1234)

SCRIPTS = {
    "run_seq": dict(
        files=["src/run_seq.py", "src/models/cortex.py"],
        part=lambda cfg, vs: ("val_" if vs == VAL_SEED else f"val{vs}_") + cfg,
        columns="seed\tfinal_acc\tforgetting\treplay_used",
        command="OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 python3 src/run_seq.py --configs {cfg} --seeds S --val{valseed} --resume (one run per seed S, Debian python3-torch, nice 19)",
        split="--val{valseed}: the stratified held-out tenth of the training set, seed {vs} (our split{vs}, sample for sample)",
    ),
    "run_seq_test": dict(  # run_seq.py's files and columns (set below), without --val
        part=lambda cfg, vs: cfg,
        command="OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 python3 src/run_seq.py --configs {cfg} --seeds S --resume (no --val; one run per seed S, Debian python3-torch, nice 19)",
        split="the official MNIST test set (the development set), after training on all 60,000 training images",
    ),
    "run_mnist": dict(
        files=["src/run_mnist.py", "src/models/cortex.py", "src/models/base.py", "src/models/torch_utils.py", "src/models/spiking.py"],
        part=lambda cfg, vs: cfg,
        columns="seed\ttest_acc",
        command="OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 python3 src/run_mnist.py --configs {cfg} --seeds S --resume (one run per seed S, Debian python3-torch and python3-sklearn, nice 19)",
        split="the official MNIST test set (10,000 images) after 30 epochs of i.i.d. training on the full training set",
    ),
}
SCRIPTS["run_seq_test"] = dict(SCRIPTS["run_seq_test"], files=SCRIPTS["run_seq"]["files"], columns=SCRIPTS["run_seq"]["columns"])


MACHINE_COLUMN = "\tmachine"  # refruns.MachineColumn
UNRECORDED = "unrecorded"  # refruns.Unrecorded: a seed run before machines were recorded


def this_machine(python):
    """"<cpu model>; <isa>": the CPU and the instruction set torch's math libraries use here (torch's
    CPU capability, asked of python, the interpreter the runs used; "isa unknown" without torch)."""
    cpu = platform.processor() or platform.machine() or "cpu unknown"
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    isa = "isa unknown"
    try:
        out = subprocess.run([python, "-c", "import torch; print(torch.backends.cpu.get_cpu_capability())"],
                             capture_output=True, text=True, timeout=120)
        if out.returncode == 0 and out.stdout.strip():
            isa = out.stdout.strip().splitlines()[-1]
    except (OSError, subprocess.SubprocessError):
        pass
    return " ".join(f"{cpu}; {isa}".split())  # one line, no tab


def digests(refdir):
    out = {}
    with open(os.path.join(refdir, "SHA256SUMS")) as fh:
        for line in fh:
            d, name = line.split()
            out[name] = d
    return out


def commits(refdir):
    """The commit of each reference file, from REFDIR/README.md's table (a row may name several files)."""
    out = {}
    with open(os.path.join(refdir, "README.md")) as fh:
        for line in fh:
            cells = line.split("|")
            if len(cells) < 4 or not cells[1].strip().startswith("`src/"):
                continue
            commit = re.search(r"`([0-9a-f]{40})`", line)
            for name in re.findall(r"`(src/[^`]+)`", cells[1]):
                if commit:
                    out[name] = commit.group(1)
    return out


def sha256(path):
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def configs(pipeline):
    """The authors' configurations the disputed rows name, by (config, held-out split seed), with the
    script that runs each. The split seed is 1234 (run_seq's --val) but for a run_seq row whose eval
    names another held-out split (--val --val-seed N); it is unused by the test-set scripts."""
    with open(pipeline, "rb") as fh:
        doc = tomllib.load(fh)
    out = {}
    for i, row in enumerate(doc.get("disputed", {}).get("row", [])):
        script = row.get("reference_script", "run_seq")
        if script not in SCRIPTS:
            sys.exit(f"reference_runs: {pipeline}: disputed.row[{i}].reference_script {script!r}: want one of {sorted(SCRIPTS)}")
        vs = VAL_SEED
        if script == "run_seq" and row.get("eval"):
            m = re.fullmatch(r"split([1-9][0-9]*)", row["eval"])
            if not m:
                sys.exit(f"reference_runs: {pipeline}: disputed.row[{i}].eval {row['eval']!r}: want split<seed>")
            vs = int(m.group(1))
        for key in ("reference", "minus_reference"):
            c = row.get(key)
            if not c:
                continue
            known = [s for (c2, _), s in out.items() if c2 == c]
            if known and known[0] != script:
                sys.exit(f"reference_runs: {pipeline}: disputed.row[{i}]: {c} is run by {known[0]} in another row, {script} here")
            out[(c, vs)] = script
    return out


def existing(path, cfg, reference, columns):
    """The seed lines of an earlier OUTDIR/<config>.tsv, by seed, each ending in its machine
    (UNRECORDED for a file written before machines were); {} when there is none."""
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
            if line.startswith("seed\t") and line.removesuffix(MACHINE_COLUMN) != columns:
                sys.exit(f"reference_runs: {path}:{n}: the columns of another script ({line!r}, want {columns!r}); move the file away to start over")
            if line.startswith("#") or line.startswith("seed\t") or not line:
                continue
            seed = line.split("\t", 1)[0]
            if not seed.isdigit():
                sys.exit(f"reference_runs: {path}:{n}: not a seed line: {line!r}")
            if line.count("\t") == columns.count("\t"):
                line += "\t" + UNRECORDED
            kept[int(seed)] = line
    return kept


def split_machine(line):
    """A seed line's numbers and its machine."""
    numbers, _, machine = line.rpartition("\t")
    return numbers, machine


def checkpoints(parts, cfg, script, vs):
    """The finished seeds of cfg (held-out split seed vs for run_seq) in parts, each with the line it
    writes, by seed."""
    out = {}
    if not parts:
        return out
    prefix = SCRIPTS[script]["part"](cfg, vs)
    for path in glob.glob(os.path.join(parts, prefix + "_s*.pkl")):
        m = re.fullmatch(re.escape(prefix) + r"_s(\d+)\.pkl", os.path.basename(path))
        if not m:
            continue
        seed = int(m.group(1))
        with open(path, "rb") as fh:
            run = pickle.load(fh)
        if run.get("config") != cfg or int(run.get("seed", -1)) != seed:
            sys.exit(f"reference_runs: {path}: not a run of {cfg} seed {seed}")
        if script in ("run_seq", "run_seq_test"):
            val = bool(run.get("run_args", {}).get("val"))
            if val != (script == "run_seq"):
                sys.exit(f"reference_runs: {path}: --val is {val}, want {script == 'run_seq'} for {script} ({cfg} seed {seed})")
            got = int(run.get("run_args", {}).get("val_seed", VAL_SEED))
            if val and got != vs:
                sys.exit(f"reference_runs: {path}: --val-seed {got}, want {vs} ({cfg} seed {seed})")
            if str(run.get("omp_threads")) != "1":
                sys.exit(f"reference_runs: {path}: ran with OMP_NUM_THREADS={run.get('omp_threads')}, want 1")
            out[seed] = f"{seed}\t{100 * run['final_acc']:.2f}\t{100 * run['forgetting']:.2f}\t{int(run.get('replay_used') or 0)}"
        else:
            # run_mnist.py does not record its thread count: the command line says it.
            out[seed] = f"{seed}\t{100 * run['test_acc']:.2f}"
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parts", required=True, help="run_seq.py's checkpoints (results/bio/seq/parts)")
    ap.add_argument("--mnist-parts", default="", help="run_mnist.py's checkpoints (results/bio/mnist/parts)")
    ap.add_argument("--ran", required=True, help="the copy of the authors' src/ that ran")
    ap.add_argument("--reference", required=True, help="../shared/spec/reference")
    ap.add_argument("--out", required=True)
    ap.add_argument("--python", default="python3", help="the interpreter the runs used (asked for torch's instruction set)")
    ap.add_argument("--machine", default="", help="where the checkpoints ran, \"<cpu>; <isa>\" (default: this machine)")
    ap.add_argument("pipeline")
    a = ap.parse_args()
    machine = " ".join(a.machine.split()) or this_machine(a.python)
    sums, refs = digests(a.reference), commits(a.reference)
    todo = configs(a.pipeline)
    for script in sorted(set(todo.values())):
        for f in SCRIPTS[script]["files"]:
            if f not in refs:
                sys.exit(f"reference_runs: {a.reference}/README.md: no commit for {f}")
            got = sha256(os.path.join(a.ran, f[len("src/"):]))
            if got != sums.get(f):
                sys.exit(f"reference_runs: {a.ran}/{f[len('src/'):]}: sha256 {got}, not the reference's {sums.get(f)}: not the authors' code")
    os.makedirs(a.out, exist_ok=True)
    for (cfg, vs), script in todo.items():
        sc = SCRIPTS[script]
        reference = ", ".join(f"{f} at {refs[f]}" for f in sc["files"]) + " (SHA-256 as in its SHA256SUMS)"
        ran = checkpoints(a.mnist_parts if script == "run_mnist" else a.parts, cfg, script, vs)
        # the file of another held-out split than VAL_SEED is refruns.FileName's <config>.split<N>.tsv
        split, valseed = ("", "") if vs == VAL_SEED else (f".split{vs}", f" --val-seed {vs}")
        dst = os.path.join(a.out, cfg + split + ".tsv")
        lines = existing(dst, cfg, reference, sc["columns"])
        refused = 0
        for seed, numbers in sorted(ran.items()):
            if seed not in lines:
                lines[seed] = numbers + "\t" + machine
                continue
            had, where = split_machine(lines[seed])
            if had == numbers:
                continue  # reproduced: the file's line (and machine) stands
            if where == machine:
                sys.exit(f"reference_runs: {dst}: seed {seed}: the file says {had!r}, the checkpoint here {numbers!r}, "
                         f"both on {machine}: the authors' code is not reproducing itself on one machine")
            refused += 1
            print(f"{dst}: seed {seed}: kept the file's {had!r} (ran on {where}); this machine ({machine}) gives "
                  f"{numbers!r}: the authors' code is not bit-reproducible across CPUs (docs/disputed.md), "
                  f"so a seed stays the draw of the machine that ran it first")
        tmp = dst + ".tmp"
        with open(tmp, "w") as fh:
            fh.write(f"# config: {cfg}\n")
            fh.write("# command: " + sc["command"].format(cfg=cfg, valseed=valseed) + "\n")
            fh.write(f"# reference: {reference}\n")
            fh.write("# split: " + sc["split"].format(valseed=valseed, vs=vs) + "\n")
            fh.write(f"# source: make reference-runs (tools/refcheck/reference_runs.py) from {sc['part'](cfg, vs)}_s<seed>.pkl\n")
            fh.write(sc["columns"] + MACHINE_COLUMN + "\n")
            for seed in sorted(lines):
                fh.write(lines[seed] + "\n")
        os.replace(tmp, dst)
        kept = sorted(set(lines) - set(ran))
        note = f"; {refused} rerun(s) on another machine refused" if refused else ""
        print(f"{dst}: {len(lines)} seeds {sorted(lines)} ({len(ran)} from checkpoints here, {len(kept)} kept from the file{note})")


if __name__ == "__main__":
    main()
