#!/usr/bin/env python3
"""refbatch: record the authors' backprop baselines of run() (BP+ER, DER++, ER-ACE, A-GEM, plain BP)
around waking batches, for the differential check (core/backprop/refcheck_test.go).

Opt-in tooling, never a dependency of the product. It imports the authors' modules (read-only,
from --ref), runs their own run() for one configuration and seed, and instruments it from outside:
a waking batch ends when run() offers it to the buffer, so when waking batch --step (1-based)
is about to start (batch --step - 1 was offered) it writes the state ("pre": weights W<l> in
torch's (out, in) layout, biases b<l>, torch.optim.Adam's moments mW<l>, vW<l>, mb<l>, vb<l> and
step count t, the buffer bufX, bufY, bufZ (DER++'s stored logits), bufSeen); then, for --steps
batches, every batch and label, every random draw (torch.randint / torch.randperm results, in
call order), every forward pass of the step's net calls (the hidden activities a<l> after the
rectifier, "s<s>/p<j>/a<l>", j counting the calls), A-GEM's dot products ("s<s>/dot<j>"), the
state after every --every-th batch ("post<k>"), and which recorded batches start an epoch or a task.

Output: <out>/index.json and <out>/data.bin, in refstep.py's format.
"""
from __future__ import annotations

import argparse
import linecache
import os
import sys

import numpy as np

from refstep import Done, Writer


def dump_state(w, tag, loc):
    """The learner's state, read from run()'s frame."""
    import torch
    net, opt, buf = loc["net"], loc["opt"], loc["buf"]
    lins = [m for m in net if isinstance(m, torch.nn.Linear)]
    t = None
    for l, lin in enumerate(lins, start=1):
        for nm, p in (("W", lin.weight), ("b", lin.bias)):
            w.put(f"{tag}/{nm}{l}", p.data)
            s = opt.state.get(p)
            if s:
                w.put(f"{tag}/m{nm}{l}", s["exp_avg"])
                w.put(f"{tag}/v{nm}{l}", s["exp_avg_sq"])
                t = int(s["step"])
            else:  # before the first step: torch's Adam has no state yet
                w.put(f"{tag}/m{nm}{l}", torch.zeros_like(p))
                w.put(f"{tag}/v{nm}{l}", torch.zeros_like(p))
    w.put(f"{tag}/t", np.array([t or 0]))
    if buf.X:
        w.put(f"{tag}/bufX", torch.stack(buf.X))
        w.put(f"{tag}/bufY", np.array(buf.Y))
        if buf.Z and buf.Z[0] is not None:
            w.put(f"{tag}/bufZ", torch.stack(buf.Z))
    w.put(f"{tag}/bufSeen", np.array([buf.seen]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ref", required=True, help="the authors' src directory (run_seq.py, models/)")
    ap.add_argument("--mnist", required=True, help="directory of the four MNIST idx .gz files")
    ap.add_argument("--config", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--step", type=int, default=70, help="first waking batch recorded (1-based, at least 2)")
    ap.add_argument("--steps", type=int, default=1, help="waking batches recorded")
    ap.add_argument("--every", type=int, default=1, help="state written after every n-th recorded batch")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if args.step < 2 or args.steps < 1 or args.every < 1:
        sys.exit("refbatch: --step must be at least 2, --steps and --every at least 1")

    sys.path.insert(0, os.path.abspath(args.ref))
    import torch
    torch.set_num_threads(1)
    import run_mnist as RM
    import run_seq as RS

    cfg = RS.CONFIGS.get(args.config)
    if cfg is None or cfg.get("model") != "bp" or cfg.get("schedule") is not None or cfg.get("replay") == "nrem" \
            or cfg.get("dataset") not in (None, "mnist") or cfg.get("bp_conn"):
        sys.exit(f"refbatch: {args.config}: only run()'s dense backprop baselines on MNIST are instrumented")
    RM.DATA = os.path.abspath(args.mnist)

    w = Writer(args.out)
    w.meta["config"] = {k: (list(v) if isinstance(v, tuple) else v) for k, v in cfg.items()}
    w.meta["args"] = vars(args)
    st = {"done": 0, "active": False, "draw": 0}
    first, last = args.step, args.step + args.steps

    orig_offer = RS.Buffer.offer
    orig_randint, orig_randperm, orig_dot = torch.randint, torch.randperm, torch.dot

    def offer(self, Xb, yb, surprise, zb=None):
        r = orig_offer(self, Xb, yb, surprise, zb)
        fr = sys._getframe(1)
        if fr.f_code.co_name != "run":
            return r
        loc = fr.f_locals
        st["done"] += 1
        k = st["done"]  # waking batches done
        if st["active"]:
            s = k - first  # the batch just offered
            w.put(f"s{s}/X", Xb)
            w.put(f"s{s}/y", yb)
            start = loc["i"] == 0
            w.meta.setdefault("starts", {})[f"s{s}"] = {"epoch": start, "task": start and loc["ep"] == 0}
            if (s + 1) % args.every == 0:
                dump_state(w, f"post{s + 1}", loc)
            if k == last - 1:
                w.meta["steps"] = args.steps
                raise Done
            st["draw"] = 0
        elif k == first - 1:
            dump_state(w, "pre", loc)
            w.meta["batch"] = loc["batch"]
            w.meta["lr"] = opt_lr(loc["opt"])
            w.meta["sizes"] = [m.in_features for m in loc["net"] if isinstance(m, torch.nn.Linear)] + [loc["NC"]]
            st["active"], st["draw"] = True, 0
        return r

    def opt_lr(opt):
        return float(opt.param_groups[0]["lr"])

    def step_index():
        return st["done"] - (first - 1)

    def randint(*a, **kw):
        v = orig_randint(*a, **kw)
        if st["active"]:
            high = a[1] if len(a) >= 3 else a[0]
            s, d = step_index(), st["draw"]
            w.put(f"s{s}/d{d}/randint", v.reshape(-1))
            w.meta.setdefault("draws", {})[f"s{s}/d{d}"] = {"kind": "randint", "high": int(high)}
            st["draw"] += 1
        return v

    def randperm(n, *a, **kw):
        v = orig_randperm(n, *a, **kw)
        fr = sys._getframe(1)
        line = linecache.getline(fr.f_code.co_filename, fr.f_lineno)
        epoch_perm = fr.f_code.co_name == "run" and "torch.randperm(n, generator=g)" in line
        if st["active"] and not epoch_perm:
            s, d = step_index(), st["draw"]
            w.put(f"s{s}/d{d}/randperm", v)
            w.meta.setdefault("draws", {})[f"s{s}/d{d}"] = {"kind": "randperm", "high": int(n)}
            st["draw"] += 1
        return v

    def dot(a, b, *rest, **kw):
        # A-GEM's dot products (incoming . buffer gradient, then buffer .
        # buffer), in call order: whether the projection branch was taken.
        v = orig_dot(a, b, *rest, **kw)
        if st["active"]:
            s = step_index()
            k = st.setdefault("dots", {}).get(s, 0)
            st["dots"][s] = k + 1
            w.put(f"s{s}/dot{k}", v.reshape(1).double(), "f8")
        return v

    # The hidden activities of every net call inside a training step (not
    # the evaluations between epochs): a forward hook on each rectifier.
    orig_steps = {n: getattr(RS, n) for n in ("bp_step", "bp_baseline_step")}

    def in_step(fn):
        def wrapped(*a, **kw):
            st["instep"], st["call"] = True, -1
            try:
                return fn(*a, **kw)
            finally:
                st["instep"] = False
        return wrapped

    def hooked(net):
        if getattr(net, "_refbatch_hooked", False):
            return
        net._refbatch_hooked = True
        acts = [m for m in net if isinstance(m, torch.nn.ReLU)]
        for l, m in enumerate(acts, start=1):
            def hook(mod, inp, out, l=l):
                if not (st["active"] and st.get("instep")):
                    return
                if l == 1:
                    st["call"] += 1
                w.put(f"s{step_index()}/p{st['call']}/a{l}", out.detach())
            m.register_forward_hook(hook)

    def step_hooked(name):
        fn = orig_steps[name]

        def wrapped(*a, **kw):
            net = a[1] if name == "bp_baseline_step" else a[0]
            hooked(net)
            return in_step(fn)(*a, **kw)
        return wrapped

    for n in orig_steps:
        setattr(RS, n, step_hooked(n))
    RS.Buffer.offer = offer
    torch.randint, torch.randperm, torch.dot = randint, randperm, dot
    try:  # main()'s defaults: --batch 256, --nrem-batches 20, --nrem-gain 3
        RS.run(args.config, args.seed, cfg.get("epochs", 5), 256, 20, 3.0)
    except Done:
        pass
    else:
        sys.exit(f"refbatch: the run ended before waking batch {last - 1}")
    finally:
        torch.randint, torch.randperm, torch.dot = orig_randint, orig_randperm, orig_dot
        RS.Buffer.offer = orig_offer
        for n, fn in orig_steps.items():
            setattr(RS, n, fn)
    w.meta["torch"] = torch.__version__
    w.close()


if __name__ == "__main__":
    main()
