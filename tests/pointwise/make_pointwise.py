#!/usr/bin/python3
"""Writes tests/pointwise/model.onnx and test_data_set_0: pointwise (1x1, no
padding, one group) convolutions for the pixel tiles of passes/tile.c (tile_pointwise),
with outputs computed by torch from the same weights:

  y1 = Relu(Conv1x1 (x) + b)           x: 1x5x9x10, 90 pixels: many blocks (the block
                                       loop outermost) and a partial block; 13 channels
                                       out, a partial tile of output channels
  y2 = Conv1x1 (x) + x2                3 channels out, no bias, a y-shaped residual
  y3 = Sigmoid(Conv1x1 (u) + r) * 2    u: 1x7x6x6 (few blocks: output channels outermost),
                                       r: [1,9,1,1] per channel; 'Mul' by a scalar
  y4 = Conv1x1 (v) + b                 v: 2x4x5x7, batch 2
  y5 = Conv1d k1 (s) + b               s: 1x6x37, 1-D
  y6 = Conv1x1 (x) + q                 q: [1,1,9,10], varies along both spatial axes
  y7 = Silu(Conv3x3 pad 1 (x) + r7)    not pointwise: the channel tiles of tile_conv, 32
                                       channels out (full blocks on 4, 8 and 16 lanes)
                                       whose epilogue runs on vectors of channels, with
                                       r7: [1,32,1,1] per channel
  y8 = Conv1x1 stride 2 (z) + b8       z: 2x24x38x38 (139 KB a batch: more than half
                                       the L2 of the avx2 and generic targets), so x is
                                       subsampled as it is packed (pw_pack_strided);
                                       19x19 = 361 pixels out, batch 2
  y9 = Relu(Conv1x1 (e) + b9 + e2)     e: 1x40x7x7, 48 out, a y-shaped residual
  y10 = (Conv1x1 (f) + b10) * k10      f: 2x64x5x5, batch 2, 36 out, k10 [1,36,1,1]
  y11 = Clip(Conv1x1 (g), 0, 6)        g: 1x72x10x11 (110 pixels), 40 out: reduces channels
  y12 = Conv1d k1 (h) + b12            h: 1x48x30, 33 out
  y9..y12 have few pixels: the channel tiles of tile_conv (pw_channel_tiles) on 16 lanes
  (y9..y12), 8 (y10..y12) and 4 (y10, y12); pixel tiles where not.

Pixel counts leave partial blocks in every vector width (4, 8 and 16 lanes).
usage: /usr/bin/python3 tests/pointwise/make_pointwise.py"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from onnx import helper

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
import gen_common as gc  # noqa: E402

rnd = gc.uniform(5)

x = rnd(1, 5, 9, 10)
x2 = rnd(1, 3, 9, 10)
u = rnd(1, 7, 6, 6)
r = rnd(1, 9, 1, 1)
v = rnd(2, 4, 5, 7)
s = rnd(1, 6, 37)
q = rnd(1, 1, 9, 10)
w1, b1 = rnd(13, 5, 1, 1), rnd(13)
w2 = rnd(3, 5, 1, 1)
w3 = rnd(9, 7, 1, 1)
w4, b4 = rnd(6, 4, 1, 1), rnd(6)
w5, b5 = rnd(11, 6, 1), rnd(11)
w6 = rnd(4, 5, 1, 1)
w7, r7 = rnd(32, 5, 3, 3), rnd(1, 32, 1, 1)
z, w8, b8 = rnd(2, 24, 38, 38), rnd(10, 24, 1, 1), rnd(10)
e, e2, w9, b9 = rnd(1, 40, 7, 7), rnd(1, 48, 7, 7), rnd(48, 40, 1, 1), rnd(48)
f, w10, b10, k10 = rnd(2, 64, 5, 5), rnd(36, 64, 1, 1), rnd(36), rnd(1, 36, 1, 1)
g, w11 = rnd(1, 72, 10, 11), rnd(40, 72, 1, 1)
h, w12, b12 = rnd(1, 48, 30), rnd(33, 48, 1), rnd(33)
inits = gc.initializers(
    [(w1, "w1"), (b1, "b1"), (w2, "w2"), (w3, "w3"), (w4, "w4"), (b4, "b4"), (w5, "w5"),
     (b5, "b5"), (w6, "w6"), (w7, "w7"), (r7, "r7"), (np.array(2, np.float32), "two"),
     (w8, "w8"), (b8, "b8"), (w9, "w9"), (b9, "b9"), (w10, "w10"), (b10, "b10"),
     (k10, "k10"), (w11, "w11"), (w12, "w12"), (b12, "b12"),
     (np.array(0, np.float32), "lo"), (np.array(6, np.float32), "hi")])


def conv(name, ins, out):
    return helper.make_node("Conv", ins, [out], name=name)


nodes = [
    conv("pw1", ["x", "w1", "b1"], "c1"),
    helper.make_node("Relu", ["c1"], ["y1"], name="relu1"),
    conv("pw2", ["x", "w2"], "c2"),
    helper.make_node("Add", ["c2", "x2"], ["y2"], name="res2"),
    conv("pw3", ["u", "w3"], "c3"),
    helper.make_node("Add", ["c3", "r"], ["s3"], name="add3"),
    helper.make_node("Sigmoid", ["s3"], ["g3"], name="sig3"),
    helper.make_node("Mul", ["g3", "two"], ["y3"], name="mul3"),
    conv("pw4", ["v", "w4", "b4"], "y4"),
    conv("pw5", ["s", "w5", "b5"], "y5"),
    conv("pw6", ["x", "w6"], "c6"),
    helper.make_node("Add", ["c6", "q"], ["y6"], name="add6"),
    helper.make_node("Conv", ["x", "w7"], ["c7"], name="conv7", pads=[1, 1, 1, 1]),
    helper.make_node("Add", ["c7", "r7"], ["s7"], name="add7"),
    helper.make_node("Sigmoid", ["s7"], ["g7"], name="sig7"),
    helper.make_node("Mul", ["s7", "g7"], ["y7"], name="silu7"),
    helper.make_node("Conv", ["z", "w8", "b8"], ["y8"], name="pw8", strides=[2, 2]),
    conv("pw9", ["e", "w9", "b9"], "c9"),
    helper.make_node("Add", ["c9", "e2"], ["s9"], name="res9"),
    helper.make_node("Relu", ["s9"], ["y9"], name="relu9"),
    conv("pw10", ["f", "w10", "b10"], "c10"),
    helper.make_node("Mul", ["c10", "k10"], ["y10"], name="scale10"),
    conv("pw11", ["g", "w11"], "c11"),
    helper.make_node("Clip", ["c11", "lo", "hi"], ["y11"], name="relu6_11"),
    conv("pw12", ["h", "w12", "b12"], "y12"),
]

t = torch.from_numpy
with torch.no_grad():
    X = t(x)
    y1 = F.relu(F.conv2d(X, t(w1), t(b1)))
    y2 = F.conv2d(X, t(w2)) + t(x2)
    y3 = torch.sigmoid(F.conv2d(t(u), t(w3)) + t(r)) * 2
    y4 = F.conv2d(t(v), t(w4), t(b4))
    y5 = F.conv1d(t(s), t(w5), t(b5))
    y6 = F.conv2d(X, t(w6)) + t(q)
    y7 = F.silu(F.conv2d(X, t(w7), padding=1) + t(r7))
    y8 = F.conv2d(t(z), t(w8), t(b8), stride=2)
    y9 = F.relu(F.conv2d(t(e), t(w9), t(b9)) + t(e2))
    y10 = F.conv2d(t(f), t(w10), t(b10)) * t(k10)
    y11 = torch.clamp(F.conv2d(t(g), t(w11)), 0, 6)
    y12 = F.conv1d(t(h), t(w12), t(b12))
outs = [y1, y2, y3, y4, y5, y6, y7, y8, y9, y10, y11, y12]
ins = [("x", x), ("x2", x2), ("u", u), ("r", r), ("v", v), ("s", s), ("q", q), ("z", z),
       ("e", e), ("e2", e2), ("f", f), ("g", g), ("h", h)]

g = gc.float_graph(nodes, "pointwise", ins, outs, inits)
gc.write_case(here, gc.model(g), [a for _, a in ins], outs)
