#!/usr/bin/env python3
"""refbp: record the authors' backprop k-WTA learner on the local schedule (run_bp_local) around
waking steps, for the differential check (core/backprop/refcheck_test.go).

Opt-in tooling, never a dependency of the product. It imports the authors' modules (read-only,
from --ref), runs their own run_bp_local for one configuration and seed, and instruments it from
outside, as refstep.py does for run_local: when waking batch --step (1-based, counted over the
whole stream) starts, it writes the full state ("pre": weights W<l> in torch's (out, in) layout,
biases b<l>, Adam moments mW<l>, vW<l>, mb<l>, vb<l>, the shared step counter t, the rotation's
suppression sup<l>, the buffer bufX, bufY, bufSeen); then, for --steps consecutive waking
batches, every batch and label, every random draw (torch.randint / torch.randperm results, in
call order), every forward pass's hidden activities a<l>, the state after each optimiser call of
the first batch ("s0/u<k>"), the state after every --every-th batch ("post<k>"), and which
recorded batches start an epoch or a task.

Output: <out>/index.json and <out>/data.bin, in refstep.py's format.
"""
from __future__ import annotations

import argparse
import linecache
import os
import sys

from refstep import Done, Writer


def dump_state(w, tag, net, loc):
    """The learner's state, read from run_bp_local's frame."""
    import numpy as np
    state = loc["state"]
    for l, lin in enumerate(net.lins, start=1):
        for nm, p in (("W", lin.weight), ("b", lin.bias)):
            w.put(f"{tag}/{nm}{l}", p.data)
            ea, es = state[p]
            w.put(f"{tag}/m{nm}{l}", ea)
            w.put(f"{tag}/v{nm}{l}", es)
    w.put(f"{tag}/t", np.array([loc["t"]]))
    for l, s in enumerate(loc["suppress"], start=1):
        if s is not None:
            w.put(f"{tag}/sup{l}", s)
    buf = loc["buf"]
    if buf.X:
        import torch
        w.put(f"{tag}/bufX", torch.stack(buf.X))
        w.put(f"{tag}/bufY", np.array(buf.Y))
    w.put(f"{tag}/bufSeen", np.array([buf.seen]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ref", required=True, help="the authors' src directory (run_seq.py, models/)")
    ap.add_argument("--mnist", required=True, help="directory of the four MNIST idx .gz files")
    ap.add_argument("--config", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--step", type=int, default=70, help="first waking batch recorded (1-based)")
    ap.add_argument("--steps", type=int, default=1, help="waking batches recorded")
    ap.add_argument("--every", type=int, default=1, help="state written after every n-th recorded batch")
    ap.add_argument("--epochs", type=int, default=0,
                    help="epochs per task (0: the config's, as the authors' main() passes); 1 brings the first "
                         "task boundary to waking batch 793")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if args.step < 1 or args.steps < 1 or args.every < 1 or args.epochs < 0:
        sys.exit("refbp: --step, --steps and --every must be at least 1, --epochs at least 0")

    sys.path.insert(0, os.path.abspath(args.ref))
    import torch
    torch.set_num_threads(1)
    import run_mnist as RM
    import run_seq as RS

    cfg = RS.CONFIGS.get(args.config)
    if cfg is None or cfg.get("schedule") != "bp_local" or cfg.get("dataset") not in (None, "mnist"):
        sys.exit(f"refbp: {args.config}: only run_bp_local's configurations on MNIST are instrumented")
    RM.DATA = os.path.abspath(args.mnist)

    w = Writer(args.out)
    w.meta["config"] = {k: (list(v) if isinstance(v, tuple) else v) for k, v in cfg.items()}
    w.meta["args"] = vars(args)
    st = {"wake": 0, "active": False, "step": 0, "pass": 0, "update": 0, "draw": 0}
    first, last = args.step, args.step + args.steps

    orig_forward, orig_adam = RS.BPKWTA.forward, RS._adam_masked
    orig_randint, orig_randperm = torch.randint, torch.randperm

    def loop_frame():
        fr = sys._getframe(2)
        while fr is not None and fr.f_code.co_name != "run_bp_local":
            fr = fr.f_back
        return fr

    def forward(self, x, suppress=None):
        fr = loop_frame()
        loc = fr.f_locals if fr is not None else {}
        waking = loc.get("Xb") is x
        replay = not waking and loc.get("Xr") is x
        if waking:
            st["wake"] += 1
            k = st["wake"]
            if k == first:
                dump_state(w, "pre", self, loc)
                w.meta["lr"] = loc["lr"]
                w.meta["lr_replay"] = loc["lr"] * loc["gain"]
                w.meta["batch_replay"] = loc["br"]
                w.meta["sizes"] = [self.lins[0].in_features] + [lin.out_features for lin in self.lins]
                st["active"] = True
            elif st["active"] and (k - first) % args.every == 0:
                dump_state(w, f"post{k - first}", self, loc)
            if st["active"]:
                start = loc["i"] == 0
                w.meta.setdefault("starts", {})[f"s{k - first}"] = {"epoch": start, "task": start and loc["ep"] == 0}
            if k == last:
                w.meta["steps"] = args.steps
                raise Done
            if st["active"]:
                st["step"], st["pass"], st["update"], st["draw"] = k - first, 0, 0, 0
                s = st["step"]
                w.put(f"s{s}/X", x)
                w.put(f"s{s}/y", loc["yb"])
        out = orig_forward(self, x, suppress)
        if st["active"] and (waking or replay):
            s, p = st["step"], st["pass"]
            for l, a in enumerate(out[1], start=1):
                w.put(f"s{s}/p{p}/a{l}", a)
            if s == 0:
                w.put(f"s0/p{p}/out", out[0])
                if replay:
                    w.put(f"s0/p{p}/X", x)
                    w.put(f"s0/p{p}/y", loc["yr"])
            st["pass"] += 1
        return out

    def adam(params, state, lr, t, masks, *a, **kw):
        r = orig_adam(params, state, lr, t, masks, *a, **kw)
        if st["active"]:
            s, u = st["step"], st["update"]
            w.meta.setdefault("updates", {})[f"s{s}/u{u}"] = {
                "lr": float(lr), "masked": any(m is not None for m in masks)}
            if s == 0:
                fr = sys._getframe(1)
                dump_state(w, f"s0/u{u}", fr.f_locals["net"], dict(fr.f_locals, t=t))
            st["update"] += 1
        return r

    def randint(*a, **kw):
        v = orig_randint(*a, **kw)
        if st["active"]:
            high = a[1] if len(a) >= 3 else a[0]
            s, d = st["step"], st["draw"]
            w.put(f"s{s}/d{d}/randint", v.reshape(-1))
            w.meta.setdefault("draws", {})[f"s{s}/d{d}"] = {"kind": "randint", "high": int(high)}
            st["draw"] += 1
        return v

    def randperm(n, *a, **kw):
        v = orig_randperm(n, *a, **kw)
        fr = sys._getframe(1)
        line = linecache.getline(fr.f_code.co_filename, fr.f_lineno)
        epoch_perm = fr.f_code.co_name == "run_bp_local" and "torch.randperm(n, generator=g)" in line
        if st["active"] and not epoch_perm:  # the epoch's permutation is in the recorded batches
            s, d = st["step"], st["draw"]
            w.put(f"s{s}/d{d}/randperm", v)
            w.meta.setdefault("draws", {})[f"s{s}/d{d}"] = {"kind": "randperm", "high": int(n)}
            st["draw"] += 1
        return v

    RS.BPKWTA.forward, RS._adam_masked = forward, adam
    torch.randint, torch.randperm = randint, randperm
    try:
        RS.run_bp_local(args.config, args.seed, args.epochs or cfg.get("epochs", 5))
    except Done:
        pass
    else:
        sys.exit(f"refbp: the run ended before waking batch {last}")
    finally:
        torch.randint, torch.randperm = orig_randint, orig_randperm
    w.meta["torch"] = torch.__version__
    w.close()


if __name__ == "__main__":
    main()
