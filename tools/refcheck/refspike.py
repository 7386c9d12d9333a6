#!/usr/bin/env python3
"""refspike: record the authors' spiking conversion (models/spiking.py: calibrate_thresholds and
spike_eval, as scripts/val_spike.py calls them) on weights their own run_local trained, for the
differential check (core/spike/refcheck_test.go).

Opt-in tooling, never a dependency of the product. It imports the authors' modules (read-only,
from --ref), trains --config with their run_local for --batches waking batches (stopped from
outside), and writes: the rate net (W<l> (n_l, n_{l-1}), b<l>, gain<l>, mask<l> where sparse, k<l>),
the standardisation (mu, sd), the calibration images (calX, standardised training images) and
their thresholds (thr<l>), the folded first layer spike_eval builds (W1f, b1f), and for each of
--samples test images, one spike_eval call of batch 1 at T_s = --ts: the intensities (s<i>/P),
the label, every uniform torch.rand drew (s<i>/u, T_s x 784: a pixel spikes when u < P, the tape
of the Bernoulli input), the spike counts per layer, the synaptic events and whether it was
classified correctly.

Output: <out>/index.json and <out>/data.bin, in refstep.py's format.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

from refstep import Done, Writer


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ref", required=True, help="the authors' src directory (run_seq.py, models/)")
    ap.add_argument("--mnist", required=True, help="directory of the four MNIST idx .gz files")
    ap.add_argument("--config", default="g16_sgd_refr_s10_w512_static")
    ap.add_argument("--batches", type=int, default=200, help="waking batches trained before the conversion")
    ap.add_argument("--calib", type=int, default=2000, help="calibration images (val_spike.py: 2000)")
    ap.add_argument("--samples", type=int, default=100, help="test images evaluated")
    ap.add_argument("--ts", type=int, default=8, help="time steps T_s")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    sys.path.insert(0, os.path.abspath(args.ref))
    import torch
    torch.set_num_threads(1)
    import run_mnist as RM
    import run_seq as RS
    from models.spiking import calibrate_thresholds, spike_eval

    RM.DATA = os.path.abspath(args.mnist)
    cfg = RS.CONFIGS[args.config]
    st = {"n": 0, "net": None}
    orig_offer = RS.Buffer.offer

    def offer(self, *a, **kw):
        r = orig_offer(self, *a, **kw)
        fr = sys._getframe(1)
        if fr.f_code.co_name == "run_local":
            st["n"] += 1
            if st["n"] == args.batches:
                st["net"] = fr.f_locals["net"]
                raise Done
        return r

    RS.Buffer.offer = offer
    try:
        RS.run_local(args.config, 0, 5, 16, cfg.get("batch_replay", 256), 3.0, cadence=cfg.get("cadence", 1))
    except Done:
        pass
    finally:
        RS.Buffer.offer = orig_offer
    net = st["net"]
    if net is None:
        sys.exit(f"refspike: run_local ended before waking batch {args.batches}")
    net.training = False
    for s in getattr(net, "suppress", None) or []:
        if s is not None:
            s.zero_()

    w = Writer(args.out)
    w.meta.update(config=args.config, args=vars(args), sizes=list(net.sizes), torch=torch.__version__)
    mask = getattr(net, "mask", None)
    for l in range(1, net.L + 1):
        w.put(f"W{l}", net.W[l])
        w.put(f"b{l}", net.b[l])
        if mask is not None and mask[l] is not None:
            w.put(f"mask{l}", mask[l])
        if l < net.L:
            w.put(f"gain{l}", net.gain[l])
            w.meta[f"k{l}"] = net._k(l, net.sizes[l]) if net.kwta else net.sizes[l]
    Xtr, _, Xte, yte = RM.load_mnist()
    mu, sd = RM._MU, RM._SD
    calX = RS.to_t(Xtr[:args.calib])
    w.put("mu", mu)
    w.put("sd", sd)
    w.put("calX", calX)
    thr = calibrate_thresholds(net, calX)
    w.put("thr", np.array(thr[1:], dtype=np.float64), "f8")
    # The folded first layer, as spike_eval computes it.
    g1 = net.gain[1]
    W1f = (g1[:, None] * net.W[1]) / torch.as_tensor(sd)[None, :]
    w.put("W1f", W1f)
    w.put("b1f", net.b[1] - W1f @ torch.as_tensor(mu))

    raw = RM._XTE_RAW
    orig_rand = torch.rand
    tape = []

    def rand(*a, **kw):
        v = orig_rand(*a, **kw)
        tape.append(v.clone())
        return v

    torch.rand = rand
    try:
        for i in range(args.samples):
            tape.clear()
            acc, spikes, events = spike_eval(net, raw[i:i + 1], mu, sd, yte[i:i + 1], args.ts, thr, seed=0)
            w.put(f"s{i}/P", raw[i])
            w.put(f"s{i}/y", np.array([yte[i]]))
            w.put(f"s{i}/u", torch.cat(tape).reshape(args.ts, -1))
            w.put(f"s{i}/spikes", np.array(spikes, dtype=np.float64), "f8")
            w.put(f"s{i}/events", np.array([events], dtype=np.float64), "f8")
            w.put(f"s{i}/correct", np.array([int(round(acc))]))
    finally:
        torch.rand = orig_rand
    w.close()


if __name__ == "__main__":
    main()
