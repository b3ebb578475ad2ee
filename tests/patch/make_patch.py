#!/usr/bin/python3
"""Writes tests/patch/{stem,odd}/model.onnx and test_data_set_0: the first layers of a
CNN as one chain from the input, with an expansion large enough that passes/patch.c runs
them in bands of rows on microcontroller targets, and outputs computed by torch from the
same weights (the chain ends where its output has two readers: a tail of two 5x5 convolutions at the
stem's output resolution, holding most of the multiply-adds, and a residual Add):

  stem  x: 1x3x48x48 -> Conv 3x3 s2 pad 1 (8) Clip 0 6 -> DW 3x3 pad 1 Clip -> 1x1 (8)
        -> 1x1 (48) Clip -> DW 3x3 s2 pad 1 Clip -> 1x1 (8): s 1x8x12x12
        (MobileNetV2's stem and its first two blocks, without the residuals)
  odd   x: 2x4x37x29 -> Conv 5x3 s2 pads (t2 l1 b1 r1) (6) Relu -> DW 3x3 dilation 2
        pads 2 -> 1x1 (36) Relu -> DW 3x3 s2 pads (t1 l1 b0 r1) -> 1x1 (5): s 2x5x9x8
        (batch 2, odd heights, asymmetric pads, a dilated window, no bias on the last)
  deep  x: 1x3x64x64 -> Conv 3x3 s2 pad 1 (8) Relu -> DW 3x3 pad 1 Relu -> 1x1 (16) Relu
        -> DW 3x3 s2 Relu -> 1x1 (32) Relu -> DW 3x3 Relu -> 1x1 (32) Relu -> DW 3x3 s2
        Relu -> 1x1 (32): s 1x32x8x8 (MobileNetV1's first blocks: deep enough that the
        bands carry their halo rows from one band to the next instead of recomputing them)
  both  y1 = Conv5x5 pad 2 (Relu(Conv5x5 pad 2 (s), c -> w c), w c -> c) + s,
        w = 4 (stem), 16 (odd)

(all three) y1 as above, w = 4 (stem), 16 (odd), 2 (deep)

usage: /usr/bin/python3 tests/patch/make_patch.py"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from onnx import helper

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
import gen_common as gc  # noqa: E402

t = torch.from_numpy


def case(name, x, layers, seed, widen):
    """layers: (cout, k (kh, kw), stride, pads [t, l, b, r], dil, groups ('dw' or 1),
    act (None, 'relu', 'clip'), bias)."""
    rnd = gc.uniform(seed)
    inits = [(np.array(0, np.float32), "lo"), (np.array(6, np.float32), "hi")]
    nodes = []
    cur, c = "x", x.shape[1]
    h = t(x)
    for i, (co, k, s, pads, dil, grp, act, bias) in enumerate(layers):
        g = c if grp == "dw" else 1
        co = c if grp == "dw" else co
        w = rnd(co, c // g, k[0], k[1]) * (2.0 / np.sqrt(c // g * k[0] * k[1]))
        b = rnd(co) if bias else None
        inits.append((w.astype(np.float32), f"w{i}"))
        ins = [cur, f"w{i}"]
        if bias:
            inits.append((b.astype(np.float32), f"b{i}"))
            ins.append(f"b{i}")
        last = i == len(layers) - 1
        out = "y1" if last and not act else f"c{i}"
        nodes.append(helper.make_node("Conv", ins, [out], name=f"conv{i}", group=g, pads=pads,
                                      strides=[s, s], dilations=[dil, dil],
                                      kernel_shape=list(k)))
        with torch.no_grad():
            h = F.conv2d(F.pad(h, (pads[1], pads[3], pads[0], pads[2])), t(w),
                         t(b) if bias else None, stride=s, dilation=dil, groups=g)
            if act == "relu":
                h = F.relu(h)
            if act == "clip":
                h = torch.clamp(h, 0, 6)
        if act:
            a = "y1" if last else f"a{i}"
            if act == "relu":
                nodes.append(helper.make_node("Relu", [out], [a], name=f"act{i}"))
            else:
                nodes.append(helper.make_node("Clip", [out, "lo", "hi"], [a], name=f"act{i}"))
            out = a
        cur, c = out, co
    # a tail at the stem's resolution holding most of the multiply-adds (passes/patch.c
    # recomputes at most 5% more), reading the stem's output twice (so the chain ends
    # there): y1 = Conv5x5(Relu(Conv5x5(s)), w c -> c) + s
    s_out, c4 = cur, widen * c
    w5 = rnd(c4, c, 5, 5) * (2.0 / np.sqrt(c * 25))
    w6 = rnd(c, c4, 5, 5) * (2.0 / np.sqrt(c4 * 25))
    inits += [(w5.astype(np.float32), "w_t0"), (w6.astype(np.float32), "w_t1")]
    nodes[-1].output[0] = "s" if nodes[-1].output[0] == "y1" else nodes[-1].output[0]
    s_out = nodes[-1].output[0]
    nodes += [helper.make_node("Conv", [s_out, "w_t0"], ["t0"], name="tail0", pads=[2, 2, 2, 2]),
              helper.make_node("Relu", ["t0"], ["t0r"], name="tail0_relu"),
              helper.make_node("Conv", ["t0r", "w_t1"], ["t1"], name="tail1", pads=[2, 2, 2, 2]),
              helper.make_node("Add", ["t1", s_out], ["y1"], name="residual")]
    with torch.no_grad():
        h = F.conv2d(F.relu(F.conv2d(h, t(w5), padding=2)), t(w6), padding=2) + h
    y = h.numpy()
    g = gc.float_graph(nodes, name, [("x", x)], [y], gc.initializers(inits))
    d = os.path.join(here, name)
    os.makedirs(d, exist_ok=True)
    gc.write_case(d, gc.model(g), [x], [y])


case("stem", gc.uniform(1)(1, 3, 48, 48), [
    (8, (3, 3), 2, [1, 1, 1, 1], 1, 1, "clip", True),
    (8, (3, 3), 1, [1, 1, 1, 1], 1, "dw", "clip", True),
    (8, (1, 1), 1, [0, 0, 0, 0], 1, 1, None, True),
    (48, (1, 1), 1, [0, 0, 0, 0], 1, 1, "clip", True),
    (48, (3, 3), 2, [1, 1, 1, 1], 1, "dw", "clip", True),
    (8, (1, 1), 1, [0, 0, 0, 0], 1, 1, None, True),
], 2, 4)
case("odd", gc.uniform(3)(2, 4, 37, 29), [
    (6, (5, 3), 2, [2, 1, 1, 1], 1, 1, "relu", True),
    (6, (3, 3), 1, [2, 2, 2, 2], 2, "dw", None, True),
    (36, (1, 1), 1, [0, 0, 0, 0], 1, 1, "relu", True),
    (36, (3, 3), 2, [1, 1, 0, 1], 1, "dw", None, True),
    (5, (1, 1), 1, [0, 0, 0, 0], 1, 1, None, False),
], 4, 16)
case("deep", gc.uniform(5)(1, 3, 64, 64), [
    (8, (3, 3), 2, [1, 1, 1, 1], 1, 1, "relu", True),
    (8, (3, 3), 1, [1, 1, 1, 1], 1, "dw", "relu", True),
    (16, (1, 1), 1, [0, 0, 0, 0], 1, 1, "relu", True),
    (16, (3, 3), 2, [1, 1, 1, 1], 1, "dw", "relu", True),
    (32, (1, 1), 1, [0, 0, 0, 0], 1, 1, "relu", True),
    (32, (3, 3), 1, [1, 1, 1, 1], 1, "dw", "relu", True),
    (32, (1, 1), 1, [0, 0, 0, 0], 1, 1, "relu", True),
    (32, (3, 3), 2, [1, 1, 1, 1], 1, "dw", "relu", True),
    (32, (1, 1), 1, [0, 0, 0, 0], 1, 1, None, True),
], 6, 2)
