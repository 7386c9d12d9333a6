#!/usr/bin/env python3
"""refstep: record the authors' local learner around waking steps, for the differential check.

Opt-in tooling, never a dependency of the product. It imports the authors' modules (read-only,
from --ref), runs their own run_local for one configuration and seed, and instruments it from
outside: when waking batch --step (1-based, counted over the whole stream) starts, it writes the
full learner state ("pre"), then, for --steps consecutive waking batches, every batch, label and
random draw (torch.randint / torch.randperm results, in call order; torch.poisson's spike counts
under spike_train as s<s>/q<j>/poisson; torch.randn's, e.g. the ladder's mirror night, as
s<s>/n<j>/randn after the step they follow), the activities and errors of
every pass, the state after every update call of the first step, and the state after every
--every-th step ("post<k>"), which recorded batches start an epoch or a task, and (run_local) the
gates' scalars after every step (meta "loop": the novelty EMAs, bout counters, replay count, the
rotation gate's decisions, the replay gate's signal, the next batch's suppression size and the
step's error sb, the signal the rotation and surprise gates read). The run is stopped by an exception once the last state is written.
With --order FILE (little-endian int64, one index per training sample) the first epoch's
permutation is that order instead of torch's draw (torch's is still drawn, so the generator
advances as in a plain run): the check runs both codes through the data order one of our seeds
drew.

Output: <out>/index.json (name -> dtype, shape, byte offset) and <out>/data.bin (little-endian
raw arrays), plus scalars and the effective configuration in index.json's "meta".
"""
from __future__ import annotations

import argparse
import json
import linecache
import os
import sys

import numpy as np


class Done(Exception):
    pass


class Writer:
    def __init__(self, out):
        os.makedirs(out, exist_ok=True)
        self.out = out
        self.f = open(os.path.join(out, "data.bin"), "wb")
        self.index, self.off = {}, 0
        self.meta = {}

    def put(self, name, arr, dtype=None):
        if name in self.index:
            raise ValueError(f"refstep: tensor {name} written twice")
        a = np.asarray(arr.detach().numpy() if hasattr(arr, "detach") else arr)
        if dtype is None:
            dtype = {"f": "f4", "i": "i4", "u": "i4", "b": "i4"}[a.dtype.kind]
        if dtype == "f8" and a.dtype.kind != "f":
            raise ValueError(f"refstep: {name} is not floating point")
        a = np.ascontiguousarray(a.astype("<" + dtype))
        self.index[name] = {"dtype": dtype, "shape": list(a.shape), "offset": self.off}
        self.f.write(a.tobytes())
        self.off += a.nbytes

    def close(self):
        self.f.close()
        with open(os.path.join(self.out, "index.json"), "w") as fh:
            json.dump({"meta": self.meta, "tensors": self.index}, fh, indent=0, sort_keys=True)


def dump_state(w, tag, net, loc):
    """The learner's state and the run loop's state (read from run_local's frame)."""
    import torch
    L = net.L
    for l in range(1, L + 1):
        w.put(f"{tag}/W{l}", net.W[l])
        w.put(f"{tag}/b{l}", net.b[l])
        w.put(f"{tag}/mW{l}", net.mW[l])
        w.put(f"{tag}/vW{l}", net.vW[l])
        w.put(f"{tag}/mb{l}", net.mb[l])
        w.put(f"{tag}/vb{l}", net.vb[l])
        if l < L:
            w.put(f"{tag}/B{l}", net.B[l])
            w.put(f"{tag}/mB{l}", net.mB[l])
            w.put(f"{tag}/vB{l}", net.vB[l])
            w.put(f"{tag}/sign{l}", net.sign[l])
            w.put(f"{tag}/ebar{l}", net.e_bar[l])
            if net.mask[l] is not None:
                w.put(f"{tag}/mask{l}", net.mask[l])
            sup = net.suppress[l] if getattr(net, "suppress", None) is not None else None
            if sup is not None:
                w.put(f"{tag}/sup{l}", sup)
        if net.S[l] is not None:
            for nm in ("S", "Bs", "mS", "vS", "mBs", "vBs"):
                w.put(f"{tag}/{nm}{l}", getattr(net, nm)[l])
    if getattr(net, "W_slow", None) is not None:
        for l in range(1, L + 1):
            w.put(f"{tag}/Wslow{l}", net.W_slow[l])
            w.put(f"{tag}/bslow{l}", net.b_slow[l])
            if l < L:
                w.put(f"{tag}/Bslow{l}", net.B_slow[l])
    w.put(f"{tag}/t", np.array([net.t]))
    ge = getattr(net, "g_ema", None)
    if ge is not None:
        for l in range(2, L + 1):
            if ge[l] is not None:
                w.put(f"{tag}/gema{l}", np.array([ge[l]], dtype=np.float64), "f8")
                w.put(f"{tag}/kpeff{l}", np.array([net.kp_eff[l]], dtype=np.float64), "f8")
    buf = loc.get("buf")
    if buf is None:  # the substrate ladder's fit_cortex: no buffer
        return
    if buf.X:
        w.put(f"{tag}/bufX", torch.stack(buf.X))
        w.put(f"{tag}/bufY", np.array(buf.Y))
    w.put(f"{tag}/bufSeen", np.array([buf.seen]))
    if "eta0" not in loc:  # the night reference's run(): no local schedule state
        return
    w.put(f"{tag}/gstep", np.array([loc["gstep"]]))
    for l in range(1, L):
        w.put(f"{tag}/pressure{l}", loc["S"][l])
        if loc.get("mirror_bias") is not None:
            w.put(f"{tag}/mirrorAct{l}", 1.0 - loc["mirror_bias"][l])
    # The rest masks' own state: refr_press and refr_frac's per-unit rest pressure Sr, refr_util's
    # long-term use trace (run_local's locals; written under those masks only, as ours holds them).
    mp = loc.get("mask_policy")
    if mp in ("refr_press", "refr_frac"):
        for l in range(1, L):
            w.put(f"{tag}/restP{l}", loc["Sr"][l])
    if mp == "refr_util":
        for l in range(1, L):
            w.put(f"{tag}/longUse{l}", loc["long_use"][l])
    sc = {k: loc.get(k) for k in ("surprise_ema", "surprise_slow", "err0_sum", "err0_n", "block_ctr",
                                  "off_ctr", "replay_used")}
    w.meta[tag] = sc


def loop_scalars(net, loc):
    """The gates' state after a waking step (run_local's locals), for the step-by-step gate
    record: the novelty EMAs, the chance-level error, the bout counters, the replay count, the
    rotation gate's decisions so far (the sum and count of ach_on), the replay gate's signal
    (the last gate_log entry and the entry count) and the suppression the next batch runs
    under (the number of suppressed units, summed over the hidden layers, or -1 for none)."""
    d = {k: loc.get(k) for k in ("surprise_ema", "surprise_slow", "err0_sum", "err0_n", "block_ctr",
                                 "off_ctr", "replay_used")}
    ach, gl = loc.get("ach_on") or [], loc.get("gate_log") or []
    d["ach_on"], d["ach_n"] = float(sum(ach)), len(ach)
    d["gate_n"], d["gate_signal"] = len(gl), (float(gl[-1]) if gl else None)
    sup = net.suppress
    d["sup_n"] = -1.0 if sup is None else float(sum(float(s.sum()) for s in sup[1:]))
    return d


def cifar_archive(src, dst, counts=None):
    """Write dst/cifar-10-python.tar.gz, the pickled CIFAR-10 the authors' loader reads, from the
    binary batches in src (each record: a label byte, then 3,072 pixel bytes, channel-major, the
    same order as the pickled version's rows). Left uncompressed: tarfile detects that. With
    counts ({batch name: n}), each batch holds its first n records (a batch not named: none)."""
    import io
    import pickle
    import tarfile
    rec = 3073
    with tarfile.open(os.path.join(dst, "cifar-10-python.tar.gz"), "w") as tf:
        for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
            n = -1 if counts is None else counts.get(name, 0)
            raw = (np.fromfile(os.path.join(src, name + ".bin"), dtype=np.uint8, count=n * rec if n > 0 else -1).reshape(-1, rec)
                   if n else np.zeros((0, rec), np.uint8))
            blob = pickle.dumps({b"data": np.ascontiguousarray(raw[:, 1:]), b"labels": raw[:, 0].astype(int).tolist()})
            info = tarfile.TarInfo(f"cifar-10-batches-py/{name}")
            info.size = len(blob)
            tf.addfile(info, io.BytesIO(blob))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ref", required=True, help="the authors' src directory (run_seq.py, models/)")
    ap.add_argument("--mnist", required=True, help="directory of the four MNIST idx .gz files")
    ap.add_argument("--cifar", help="directory of CIFAR-10's binary batches (data_batch_<i>.bin, test_batch.bin), "
                    "for the configs on raw CIFAR-10 (dataset \"cifar\")")
    ap.add_argument("--config", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--step", type=int, default=70, help="first waking batch recorded (1-based)")
    ap.add_argument("--steps", type=int, default=1, help="waking batches recorded")
    ap.add_argument("--every", type=int, default=1, help="state written after every n-th recorded batch")
    ap.add_argument("--order", help="file of little-endian int64: the first epoch's sample order, instead of torch's draw")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if args.step < 1 or args.steps < 1 or args.every < 1:
        sys.exit("refstep: --step, --steps and --every must be at least 1")

    sys.path.insert(0, os.path.abspath(args.ref))
    import torch
    torch.set_num_threads(1)
    import run_mnist as RM
    import run_seq as RS
    from models.cortex import CortexNet

    ladder = args.config not in RS.CONFIGS and args.config in RM.CONFIGS  # run_mnist's substrate ladder
    if not ladder and args.config not in RS.CONFIGS:
        sys.exit(f"refstep: unknown config {args.config!r}")
    cfg = RM.CONFIGS[args.config] if ladder else RS.CONFIGS[args.config]
    local = cfg.get("schedule") == "local"
    if ladder and (args.config.startswith("mlp_bp") or cfg.get("model", "ctx") != "ctx"):  # main() runs mlp_bp* with fit_bp
        sys.exit(f"refstep: {args.config}: only the ladder's local learner is instrumented")
    if not ladder and (not (local or (cfg.get("model") == "ctx" and cfg.get("schedule") is None)) or cfg.get("dataset") not in (None, "mnist", "cifar")):
        sys.exit(f"refstep: {args.config}: only the local learner on MNIST or raw CIFAR-10 (run_local, or run() with model ctx) is instrumented")
    RM.DATA = os.path.abspath(args.mnist)
    if cfg.get("dataset") == "cifar":
        if not args.cifar:
            sys.exit(f"refstep: {args.config} is on CIFAR-10: --cifar names its binary batches")
        tmp = args.out.rstrip("/") + "-cifar"  # beside --out (the check's temporary directory)
        os.makedirs(tmp, exist_ok=True)
        cifar_archive(os.path.abspath(args.cifar), tmp)
        RS.CIFAR_DIR = tmp  # the authors' loader reads its archive (and caches gray.npz) there

    order = None
    if args.order:
        order = np.fromfile(args.order, dtype="<i8")
        if order.size == 0 or not np.array_equal(np.sort(order), np.arange(order.size)):
            sys.exit(f"refstep: --order {args.order}: not a permutation of 0..n-1 ({order.size} entries)")

    w = Writer(args.out)
    w.meta["config"] = {k: (list(v) if isinstance(v, tuple) else v) for k, v in cfg.items()}
    w.meta["args"] = vars(args)
    st = {"wake": 0, "active": False, "step": 0, "pass": 0, "update": 0, "draw": 0, "spike": 0}
    first, last = args.step, args.step + args.steps

    orig_relax, orig_update = CortexNet.relax, CortexNet.local_update
    orig_randint, orig_randperm, orig_poisson = torch.randint, torch.randperm, torch.poisson
    orig_randn = torch.randn

    def loop_frame(depth):
        """run_local's or run()'s frame (run() calls relax and local_update through ctx_step)."""
        fr = sys._getframe(depth + 1)
        if fr.f_code.co_name == "ctx_step":
            fr = fr.f_back
        return fr if fr.f_code.co_name in ("run_local", "run", "fit_cortex") else None

    def relax(self, X, Y, T, gamma):
        fr = loop_frame(1)
        if fr is not None and self.training:
            st["wake"] += 1
            k = st["wake"]
            if k == first:
                dump_state(w, "pre", self, fr.f_locals)
                loc = fr.f_locals
                if ladder:  # fit_cortex: one update per batch at eta_ep
                    w.meta["eta_wake"] = loc["eta_ep"]
                    w.meta["batch_wake"] = loc["batch"]
                    # T and gamma are unused under the sweep (one pass): then 0, 0
                    w.meta["relax"] = [0, 0] if self.sweep else [loc["T"], loc["gamma"]]
                elif local:
                    w.meta["eta_wake"] = loc["eta0"] * loc["batch_wake"] / 256
                    w.meta["eta_replay"] = loc["eta0"] * loc["nrem_gain"]
                    w.meta["batch_replay"] = loc["batch_replay"]
                else:  # run(): ctx_step at 1e-3 on waking batches, nights at 1e-3 * nrem_gain
                    w.meta["eta_wake"] = 1e-3
                    w.meta["eta_replay"] = 1e-3 * loc["nrem_gain"]
                    w.meta["night_batch"] = cfg.get("night_batch", loc["batch"])
                    w.meta["night_batches"] = loc["nrem_batches"]
                    w.meta["batch_wake"] = loc["batch"]
                w.meta["sizes"] = list(self.sizes)
                st["active"] = True
            elif st["active"] and (k - first) % args.every == 0:
                dump_state(w, f"post{k - first}", self, fr.f_locals)
            if local and (st["active"] or k == first):
                # The gates' state after the previous step ("pre": before the first), every step.
                rec = loop_scalars(self, fr.f_locals)
                rec["sb"] = st.pop("sb", None)  # the error of the step just ended (none before the first)
                w.meta.setdefault("loop", {})["pre" if k == first else f"s{k - first - 1}"] = rec
            if st["active"] or k == first:
                # Epoch and task starts: the loop's end-of-epoch and end-of-task work ran
                # before this batch (step and ep are run_local's loop variables).
                loc = fr.f_locals
                start = loc["step"] == 0 if local else loc["i"] == 0
                w.meta.setdefault("starts", {})[f"s{k - first}"] = {"epoch": start, "task": start and loc["ep"] == 0 and not ladder}
            if k == last:
                w.meta["steps"] = args.steps
                raise Done
            if st["active"]:
                st["step"], st["pass"], st["update"], st["draw"], st["spike"], st["norm"] = k - first, 0, 0, 0, 0, 0
                s = st["step"]
                w.put(f"s{s}/X", X)
                w.put(f"s{s}/y", Y.argmax(1))
        out = orig_relax(self, X, Y, T, gamma)
        if st["active"]:
            s, p = st["step"], st["pass"]
            _, a, eps = out
            for l in range(1, self.L):  # every pass's activities: where a k-WTA set first differs
                w.put(f"s{s}/p{p}/a{l}", a[l])
            if s == 0:
                for l in range(1, self.L + 1):
                    w.put(f"s0/p{p}/eps{l}", eps[l])
            if s == 0 and p > 0:
                w.put(f"s0/p{p}/X", X)
                w.put(f"s0/p{p}/y", Y.argmax(1))
            if p == 0 and local:
                # The waking batch's error, as run_local computes it for its gates (the same
                # float32 operations on the same tensor): the step's gate record carries it.
                st["sb"] = float((eps[self.L] ** 2).sum(1).mean())
            st["pass"] += 1
        return out

    def local_update(self, x, a, eps, eta, *rest, **kw):
        r = orig_update(self, x, a, eps, eta, *rest, **kw)
        if st["active"]:
            s, u = st["step"], st["update"]
            w.meta.setdefault("updates", {})[f"s{s}/u{u}"] = {
                "eta": float(eta), "masked": kw.get("syn_mask") is not None, "replay": kw.get("replay")}
            if s == 0:
                dump_state(w, f"s0/u{u}", self, loop_frame(1).f_locals)
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
        epoch_perm = fr.f_code.co_name in ("run_local", "run", "fit_cortex") and "torch.randperm(n, generator=g)" in line
        if epoch_perm and order is not None and "ordered" not in w.meta:  # the first epoch only
            if n != order.size:
                sys.exit(f"refstep: --order {args.order} has {order.size} entries; the first epoch draws a permutation of {n}")
            w.meta["ordered"] = int(n)
            v = torch.from_numpy(order.astype(np.int64))
        if st["active"] and not epoch_perm:  # the epoch's permutation is in the recorded batches
            s, d = st["step"], st["draw"]
            w.put(f"s{s}/d{d}/randperm", v)
            w.meta.setdefault("draws", {})[f"s{s}/d{d}"] = {"kind": "randperm", "high": int(n)}
            st["draw"] += 1
        return v

    def poisson(rates, *a, **kw):
        # spike-count training's counts (torch's global generator): taped
        # in call order, one (batch, width) tensor per call, s<s>/q<j>.
        v = orig_poisson(rates, *a, **kw)
        if st["active"]:
            s, j = st["step"], st["spike"]
            w.put(f"s{s}/q{j}/poisson", v)
            fr = sys._getframe(1)  # CortexNet.act(self, l, x): the layer drawn
            w.meta.setdefault("spikes", {})[f"s{s}/q{j}"] = {"layer": int(fr.f_locals.get("l", -1))}
            st["spike"] += 1
        return v

    def randn(*a, **kw):
        # The mirror night's noise (fit_cortex's generator g): taped in call
        # order after the step it follows, s<s>/n<j>/randn.
        v = orig_randn(*a, **kw)
        if st["active"]:
            s, j = st["step"], st["norm"]
            w.put(f"s{s}/n{j}/randn", v)
            st["norm"] += 1
        return v

    CortexNet.relax, CortexNet.local_update = relax, local_update
    torch.randint, torch.randperm, torch.poisson, torch.randn = randint, randperm, poisson, randn
    c = cfg
    try:
        if ladder:  # run_mnist's main(): --epochs 30, --batch 256
            Xtr, ytr, _, _ = RM.load_mnist()
            RM.fit_cortex(Xtr, ytr, args.seed, 30, 256, cfg)
        elif local:
            RS.run_local(args.config, args.seed, c.get("epochs", 5), c.get("batch_wake", 64), 256, 3.0,
                         cadence=c.get("cadence", 9))
        else:  # main()'s defaults: --batch 256, --nrem-batches 20, --nrem-gain 3
            RS.run(args.config, args.seed, c.get("epochs", 5), 256, 20, 3.0)
    except Done:
        pass
    else:
        sys.exit(f"refstep: the run ended before waking batch {last}")
    finally:
        torch.randint, torch.randperm, torch.poisson, torch.randn = orig_randint, orig_randperm, orig_poisson, orig_randn
    w.meta["torch"] = torch.__version__
    w.close()


if __name__ == "__main__":
    main()
