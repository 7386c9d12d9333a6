#!/usr/bin/env python3
"""collect_runs: the authors' per-seed results (their run_seq.py checkpoints) as a TSV.

Usage: collect_runs.py <parts dir> <prefix> <config> [<config> ...] > runs.tsv

Reads <parts dir>/<prefix><config>_s<seed>.pkl (prefix "val_" for --val, "val4321_" for the second
split, "" for the official test set) and prints one row per checkpoint, seeds ascending: config,
seed, final accuracy and forgetting (percent), replay updates, fit minutes, OMP_NUM_THREADS and
the run arguments. The pickles are the authors' own output; this reads them and nothing else.
"""
import glob
import os
import pickle
import re
import sys


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__.split("\n\n")[1])
    parts, prefix, configs = sys.argv[1], sys.argv[2], sys.argv[3:]
    print("config\tseed\tfinal_acc\tforgetting\treplay_used\tfit_min\tomp_threads\trun_args")
    for cfg in configs:
        rows = []
        for path in glob.glob(os.path.join(parts, f"{prefix}{cfg}_s*.pkl")):
            m = re.fullmatch(re.escape(prefix + cfg) + r"_s(\d+)\.pkl", os.path.basename(path))
            if not m:
                continue
            with open(path, "rb") as fh:
                out = pickle.load(fh)
            rows.append((int(m.group(1)), out))
        if not rows:
            sys.exit(f"collect_runs: no checkpoint {prefix}{cfg}_s*.pkl in {parts}")
        for seed, out in sorted(rows, key=lambda r: r[0]):
            print(f"{cfg}\t{seed}\t{100 * out['final_acc']:.2f}\t{100 * out['forgetting']:.2f}\t{out.get('replay_used')}\t"
                  f"{out['fit_s'] / 60:.2f}\t{out.get('omp_threads')}\t{out.get('run_args')}")


if __name__ == "__main__":
    main()
