#!/usr/bin/env python3
"""reffitbp: record the authors' dense backprop MLP of the substrate ladder (run_mnist.fit_bp) around
training batches, for the differential check (core/backprop/refcheck_test.go).

Opt-in tooling, never a dependency of the product. It imports the authors' modules (read-only,
from --ref), loads MNIST with their load_mnist and runs their own fit_bp for one of run_mnist's
mlp_bp* configurations and a seed, with their main()'s arguments (--epochs 30, --batch 256), and
instruments it from outside: a batch starts when fit_bp calls the optimiser's zero_grad, so when
batch --step (1-based, counted over the whole run) starts it writes the state ("pre": weights
W<l> in torch's (out, in) layout, biases b<l>, torch.optim.Adam's moments mW<l>, vW<l>, mb<l>,
vb<l> and step count t); then, for --steps batches, every batch and label ("s<s>/X", "s<s>/y"),
the forward pass's hidden activities after each rectifier ("s<s>/p0/a<l>"), its output
("s<s>/out") and loss ("s<s>/loss", float64 of torch's float32), the state after every --every-th
batch ("post<k>"), and which recorded batches start an epoch. fit_bp makes no random draw inside
a batch and has no buffer: the state holds bufSeen = 0 (no sample offered), as refbatch.py's
state of a run without a buffer would, so that the check loads it as the batch protocol's.

Output: <out>/index.json and <out>/data.bin, in refstep.py's format.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

from refstep import Done, Writer


def dump_state(w, tag, net, opt):
    """fit_bp's learner state: the Sequential's Linear layers and their Adam state."""
    import torch
    lins = [m for m in net if isinstance(m, torch.nn.Linear)]
    steps = set()
    for l, lin in enumerate(lins, start=1):
        for nm, p in (("W", lin.weight), ("b", lin.bias)):
            w.put(f"{tag}/{nm}{l}", p.data)
            s = opt.state.get(p)
            if s:
                w.put(f"{tag}/m{nm}{l}", s["exp_avg"])
                w.put(f"{tag}/v{nm}{l}", s["exp_avg_sq"])
                steps.add(int(s["step"]))
            else:  # before the first step: torch's Adam has no state yet
                w.put(f"{tag}/m{nm}{l}", torch.zeros_like(p))
                w.put(f"{tag}/v{nm}{l}", torch.zeros_like(p))
                steps.add(0)
    if len(steps) != 1:
        raise SystemExit(f"reffitbp: {tag}: the parameters' Adam step counts differ: {sorted(steps)}")
    w.put(f"{tag}/t", np.array([steps.pop()]))
    w.put(f"{tag}/bufSeen", np.array([0]))  # fit_bp has no buffer


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ref", required=True, help="the authors' src directory (run_mnist.py, models/)")
    ap.add_argument("--mnist", required=True, help="directory of the four MNIST idx .gz files")
    ap.add_argument("--config", required=True, help="one of run_mnist's mlp_bp* configurations")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--step", type=int, default=40, help="first batch recorded (1-based)")
    ap.add_argument("--steps", type=int, default=1, help="batches recorded")
    ap.add_argument("--every", type=int, default=1, help="state written after every n-th recorded batch")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if args.step < 1 or args.steps < 1 or args.every < 1:
        sys.exit("reffitbp: --step, --steps and --every must be at least 1")

    sys.path.insert(0, os.path.abspath(args.ref))
    import torch
    torch.set_num_threads(1)
    import run_mnist as RM

    cfg = RM.CONFIGS.get(args.config)
    if cfg is None or not args.config.startswith("mlp_bp"):  # run_mnist's run() trains only these with fit_bp
        sys.exit(f"reffitbp: {args.config}: only run_mnist's mlp_bp* configurations (fit_bp) are instrumented")
    RM.DATA = os.path.abspath(args.mnist)

    w = Writer(args.out)
    w.meta["config"] = {k: (list(v) if isinstance(v, tuple) else v) for k, v in cfg.items()}
    w.meta["args"] = vars(args)
    st = {"batch": 0, "active": False, "step": 0}
    first, last = args.step, args.step + args.steps

    Adam = torch.optim.Adam
    orig_zero, orig_step = Adam.zero_grad, Adam.step

    def fit_frame():
        # fit_bp's frame: the caller's, past torch's own wrappers (Optimizer's
        # profiling hook wraps step when the optimiser is built).
        fr = sys._getframe(2)
        for _ in range(4):
            if fr is None or fr.f_code.co_name == "fit_bp":
                return fr
            fr = fr.f_back
        return None

    def hook(net):
        # The forward pass's hidden activities (after each rectifier) and output.
        if getattr(net, "_reffitbp_hooked", False):
            return
        net._reffitbp_hooked = True
        acts = [m for m in net if isinstance(m, torch.nn.ReLU)]
        for l, m in enumerate(acts, start=1):
            def rec(mod, inp, out, l=l):
                if st["active"]:
                    w.put(f"s{st['step']}/p0/a{l}", out.detach())
            m.register_forward_hook(rec)

        def rec_out(mod, inp, out):
            if st["active"]:
                w.put(f"s{st['step']}/out", out.detach())
        net[-1].register_forward_hook(rec_out)

    def zero_grad(self, *a, **kw):
        fr = fit_frame()
        if fr is not None:
            loc = fr.f_locals
            hook(loc["net"])
            st["batch"] += 1
            k = st["batch"]
            if k == first:
                dump_state(w, "pre", loc["net"], self)
                group = self.param_groups[0]
                w.meta["lr"] = float(group["lr"])
                w.meta["weight_decay"] = float(group["weight_decay"])
                w.meta["betas"] = [float(b) for b in group["betas"]]
                w.meta["eps"] = float(group["eps"])
                w.meta["amsgrad"] = bool(group.get("amsgrad", False))
                w.meta["batch"] = loc["batch"]
                w.meta["sizes"] = [m.in_features for m in loc["net"] if isinstance(m, torch.nn.Linear)] + [10]
                st["active"] = True
            if k == last:
                w.meta["steps"] = args.steps
                raise Done
            if st["active"]:
                s = k - first
                st["step"] = s
                idx = loc["idx"]
                w.put(f"s{s}/X", loc["Xt"][idx])
                w.put(f"s{s}/y", loc["Yt"][idx].argmax(1))
                w.meta.setdefault("starts", {})[f"s{s}"] = {"epoch": loc["i"] == 0, "task": False}
        return orig_zero(self, *a, **kw)

    def step(self, *a, **kw):
        r = orig_step(self, *a, **kw)
        fr = fit_frame()
        if fr is not None and st["active"]:
            s, loc = st["step"], fr.f_locals
            w.put(f"s{s}/loss", np.array([loc["loss"].item()], dtype=np.float64), "f8")
            if (s + 1) % args.every == 0:
                dump_state(w, f"post{s + 1}", loc["net"], self)
        return r

    Adam.zero_grad, Adam.step = zero_grad, step
    try:  # run_mnist's run() and main(): load_mnist, then fit_bp(--epochs 30, --batch 256)
        Xtr, ytr, _, _ = RM.load_mnist()
        RM.seed_everything(args.seed)
        RM.fit_bp(Xtr, ytr, args.seed, 30, 256, hidden=cfg["hidden"])
    except Done:
        pass
    else:
        sys.exit(f"reffitbp: the run ended before batch {last}")
    finally:
        Adam.zero_grad, Adam.step = orig_zero, orig_step
    w.meta["torch"] = torch.__version__
    w.close()


if __name__ == "__main__":
    main()
