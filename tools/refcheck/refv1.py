#!/usr/bin/env python3
"""refv1: record the authors' frozen V1 front-end for CIFAR-10 (run_seq.py's load_cifar10_feat) on a
subset of the images, for the differential check (internal/dataset/refcheck_test.go).

Opt-in tooling, never a dependency of the product. It imports the authors' run_seq (read-only, from
--ref), rebuilds their pickled cifar-10-python.tar.gz in a fresh temporary directory from the first
--train records of the mirror's data_batch_1.bin and the first --test records of test_batch.bin
(data_batch_2..5 empty), points the module's CIFAR_DIR there (so no feature cache exists and their
function computes the features; their own _cifar_rgb reads the subset archive unchanged), and runs
their load_cifar10_feat() with its defaults. From outside it records:

- idx_img, idx_y, idx_x: every torch.randint result, in call order (the tape of the filter
  patches; idx_img indexes the subset, which is what their function saw);
- W: their normalised filters (n_filters, 3, patch, patch) and thr: the per-filter threshold
  (n_filters), read from the function's frame when it returns;
- pooled_train, pooled_test: what their inner feats() returned (float32, before the float16 cache);
- cache_train, cache_test: the float16 cache their function wrote (np.load of the npz, widened to
  float32 exactly);
- first_std_train, first_std_test: the standardised features that call returned (it built the cache,
  and standardises the float32 features it computed);
- std_train, std_test: what a second call returned, which finds the cache and standardises the
  float16 values read back (what every run but the one that built the cache sees).

Output: <out>/index.json and <out>/data.bin, in refstep.py's format.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np

from refstep import Writer, cifar_archive


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ref", required=True, help="the authors' src directory (run_seq.py)")
    ap.add_argument("--cifar", required=True, help="directory of CIFAR-10's binary batches (data_batch_1.bin, test_batch.bin)")
    ap.add_argument("--train", type=int, default=1000, help="training images (the first of data_batch_1)")
    ap.add_argument("--test", type=int, default=200, help="test images (the first of test_batch)")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if not (500 <= args.train <= 10000 and 1 <= args.test <= 10000):
        sys.exit("refv1: --train must be in [500, 10000] (the threshold is fitted on the first 500) and --test in [1, 10000]")

    sys.path.insert(0, os.path.abspath(args.ref))
    import torch
    torch.set_num_threads(1)
    import run_seq as RS

    rec = {"randint": [], "feats": [], "locals": None}
    orig_randint = torch.randint

    def randint(*a, **kw):
        r = orig_randint(*a, **kw)
        rec["randint"].append(r.clone())
        return r

    target = RS.load_cifar10_feat.__code__

    def profile(frame, event, arg):
        if event != "return":
            return
        co = frame.f_code
        if co.co_name == "feats" and co.co_filename == target.co_filename:
            rec["feats"].append(np.array(arg[0], copy=True))
        elif co is target:
            rec["locals"] = {k: frame.f_locals[k] for k in ("W", "thr")}

    with tempfile.TemporaryDirectory() as tmp:
        cifar_archive(os.path.abspath(args.cifar), tmp, {"data_batch_1": args.train, "test_batch": args.test})
        RS.CIFAR_DIR = tmp
        torch.randint = randint
        sys.setprofile(profile)
        try:
            Xtr, ytr, Xte, yte = RS.load_cifar10_feat()
        finally:
            sys.setprofile(None)
            torch.randint = orig_randint
        # Every later run reads the cache back: the standardised features the paper's runs saw.
        Xtr2, _, Xte2, _ = RS.load_cifar10_feat()
        caches = [f for f in os.listdir(tmp) if f.startswith("feat")]
        if len(caches) != 1:
            sys.exit(f"refv1: expected one feature cache written in CIFAR_DIR, found {caches}")
        z = np.load(os.path.join(tmp, caches[0]))
        cache_tr, cache_te = z["Xtr"], z["Xte"]
        if cache_tr.dtype != np.float16:
            sys.exit(f"refv1: the cache holds {cache_tr.dtype}, not float16")

    if len(rec["randint"]) != 3 or len(rec["feats"]) != 2 or rec["locals"] is None:
        sys.exit(f"refv1: recorded {len(rec['randint'])} randint calls and {len(rec['feats'])} feats returns, want 3 and 2")
    w = Writer(args.out)
    for name, r in zip(("idx_img", "idx_y", "idx_x"), rec["randint"]):
        w.put(name, r.numpy().astype(np.int32))
    w.put("W", rec["locals"]["W"])
    w.put("thr", rec["locals"]["thr"].reshape(-1))
    w.put("pooled_train", rec["feats"][0])
    w.put("pooled_test", rec["feats"][1])
    w.put("cache_train", cache_tr.astype(np.float32))
    w.put("cache_test", cache_te.astype(np.float32))
    w.put("first_std_train", Xtr)
    w.put("first_std_test", Xte)
    w.put("std_train", Xtr2)
    w.put("std_test", Xte2)
    w.put("y_train", ytr)
    w.put("y_test", yte)
    w.meta.update({"train": args.train, "test": args.test, "torch": torch.__version__, "numpy": np.__version__,
                   "cache": caches[0]})
    w.close()


if __name__ == "__main__":
    main()
