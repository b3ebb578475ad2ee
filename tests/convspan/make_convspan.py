#!/usr/bin/python3
"""Writes tests/convspan/model.onnx and test_data_set_0: float windowed convolutions whose
output rows are narrower than the register tile, which the tile pass computes in span
tiles (passes/tile.c, conv_plane: each tile takes consecutive pixels of the output
plane, across its rows, each read at its own offset), with outputs computed by torch
(float64, rounded to float32) from the same weights (c1-c3 span where spans.sched asks):

  y1 = Relu(Conv 3x3 s2 p1 (x1) + b1)        24 -> 40 channels, 14x14 -> 7x7 (a
                                             partial block of 8 channels)
  y2 = Relu(Conv 5x5 p2 (x2) + b2 + x3)      20 -> 33, 7x7, a residual graph input
  y3 = Clip(Conv 3x3 p1 (x4) + b3, 0, 6)     16 -> 36, 6x5 (5 pixels a row)
  y4 = Relu(Conv 3x3 p1 (x5) + b4)           128 -> 136, 7x7: U of F(2x2) 1.1 MB, past
                                             x86-64-avx512's 1 MB L2, so the direct
                                             convolution (passes/winograd.c,
                                             wg_direct_streams), its weights prefetched

Inputs are uniform in [-1, 1], weights scaled by 1/sqrt(k*k*cin) as a trained network's
are. usage: /usr/bin/python3 tests/convspan/make_convspan.py"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from onnx import helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import gen_common as gc  # noqa: E402

rnd = gc.uniform(23)
here = os.path.dirname(os.path.abspath(__file__))


def wts(co, ci, k):
    return (rnd(co, ci, k, k) * np.float32(np.sqrt(3.0 / (k * k * ci)))).astype(np.float32)


x1, x2, x3 = rnd(1, 24, 14, 14), rnd(1, 20, 7, 7), rnd(1, 33, 7, 7)
x4, x5 = rnd(1, 16, 6, 5), rnd(1, 128, 7, 7)
w1, b1 = wts(40, 24, 3), rnd(40)
w2, b2 = wts(33, 20, 5), rnd(33)
w3, b3 = wts(36, 16, 3), rnd(36)
w4, b4 = wts(136, 128, 3), rnd(136)

inits = gc.initializers([(w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"), (w3, "w3"),
                         (b3, "b3"), (w4, "w4"), (b4, "b4"), (np.array(0, np.float32), "lo"),
                         (np.array(6, np.float32), "hi")])


def conv(name, ins, out, k, s, p):
    return helper.make_node("Conv", ins, [out], name=name, pads=[p] * 4, strides=[s, s],
                            kernel_shape=[k, k])


nodes = [
    conv("c1", ["x1", "w1", "b1"], "a1", 3, 2, 1),
    helper.make_node("Relu", ["a1"], ["y1"], name="relu1"),
    conv("c2", ["x2", "w2", "b2"], "a2", 5, 1, 2),
    helper.make_node("Add", ["a2", "x3"], ["s2"], name="res2"),
    helper.make_node("Relu", ["s2"], ["y2"], name="relu2"),
    conv("c3", ["x4", "w3", "b3"], "a3", 3, 1, 1),
    helper.make_node("Clip", ["a3", "lo", "hi"], ["y3"], name="clip3"),
    conv("c4", ["x5", "w4", "b4"], "a4", 3, 1, 1),
    helper.make_node("Relu", ["a4"], ["y4"], name="relu4"),
]

t = lambda a: torch.from_numpy(a).double()
with torch.no_grad():
    y1 = F.relu(F.conv2d(t(x1), t(w1), t(b1), stride=2, padding=1))
    y2 = F.relu(F.conv2d(t(x2), t(w2), t(b2), padding=2) + t(x3))
    y3 = torch.clamp(F.conv2d(t(x4), t(w3), t(b3), padding=1), 0, 6)
    y4 = F.relu(F.conv2d(t(x5), t(w4), t(b4), padding=1))
outs = [y.float() for y in (y1, y2, y3, y4)]
ins = [("x1", x1), ("x2", x2), ("x3", x3), ("x4", x4), ("x5", x5)]

gc.write_case(here, gc.model(gc.float_graph(nodes, "convspan", ins, outs, inits), check=False),
              [a for _, a in ins], outs)
