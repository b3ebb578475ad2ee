#!/usr/bin/python3
"""Writes tests/depthwise/model.onnx and test_data_set_0: depthwise convolutions
(group == channels) for passes/depthwise.c, with outputs computed by torch from the
same weights:

  y1 = Clip(DW3x3 pad 1 (x) + b, 0, 6)          ReLU6; 11 channels, rows of 70
  y2 = HardSwish(DW3x3 stride 2 pad 1 (x) + r)   r: [1,11,1,1] broadcast per channel
  y3 = Relu(DW3x3 dilation 2, pads t2 l1 b0 r3)  asymmetric pads, no bias
  y4 = Silu(DW5x5 stride 2 pad 2 (x) + b)        the 'Silu' step given as kn.epilogue
  y5 = Relu(DW3x3 pad 1 (x) + x)                 residual read as vectors
  y6 = DW3x3 no pad (x)                          no border at all
  y7 = DW7x7 pad 3 (z) + b                       z: 2x3x6x5, every output a border one
  y8 = DW1d k5 pad 2 (s) + b                     s: 2x7x30, 1-D, batch 2
  y9 = DW3x3 stride 2 dilation 2, pads t0 l2 b1 r1, strided with a dilation
  y10 = DW3x3 pad 1 (n) + b           n: 1x5x14x14, rows narrower than 16 lanes (8 + 4)
  y11 = Relu(DW3x3 pad 1 (e))         e: 1x4x7x7 (a 4-lane vector and a scalar)
  y12..y15 = GlobalAveragePool of y1, y4, y7, y8   squeeze-and-excite's squeeze, which
                                      passes/depthwise.c computes in the convolution
  y16 = Silu(DW5x5 pad 2 (n)) + b     EfficientNet's 14x14 5x5 layers: a row is one vector
                                      and an overlapping one ending at its end (8 + 8)
  y17 = Silu(DW5x5 pad 2 (e)) + b     7x7: 4 + 4 lanes, overlapping by one output
  y18, y19 = GlobalAveragePool of y16, y17   the overlapped outputs counted once
  y20 = Silu(DW3x3 pad 1 (q) + b)     q: 2x6x16x20, batch 2: bands of 8 output rows
                                      (2 a batch) with the channels inside each band
  y21 = GlobalAveragePool of y20      summed per band, the bands added after them

Widths leave tails in every vector width (70 - 2 = 68 interior columns: 4-, 8- and
16-lane tiles and scalar remainders).
usage: /usr/bin/python3 tests/depthwise/make_depthwise.py"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from onnx import helper

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
import gen_common as gc  # noqa: E402

rnd = gc.uniform(11)

C = 11
x = rnd(1, C, 9, 70)
r = rnd(1, C, 1, 1)
z = rnd(2, 3, 6, 5)
s = rnd(2, 7, 30)
w1, b1 = rnd(C, 1, 3, 3), rnd(C)
w2 = rnd(C, 1, 3, 3)
w3 = rnd(C, 1, 3, 3)
w4, b4 = rnd(C, 1, 5, 5), rnd(C)
w5 = rnd(C, 1, 3, 3)
w6 = rnd(C, 1, 3, 3)
w7, b7 = rnd(3, 1, 7, 7), rnd(3)
w8, b8 = rnd(7, 1, 5), rnd(7)
w9 = rnd(C, 1, 3, 3)
n14 = rnd(1, 5, 14, 14)
e7 = rnd(1, 4, 7, 7)
w10, b10 = rnd(5, 1, 3, 3), rnd(5)
w11 = rnd(4, 1, 3, 3)
w16, b16 = rnd(5, 1, 5, 5), rnd(5)
w17, b17 = rnd(4, 1, 5, 5), rnd(4)
q = rnd(2, 6, 16, 20)
w20, b20 = rnd(6, 1, 3, 3), rnd(6)

inits = gc.initializers(
    [(w1, "w1"), (b1, "b1"), (w2, "w2"), (w3, "w3"), (w4, "w4"), (b4, "b4"), (w5, "w5"),
     (w6, "w6"), (w7, "w7"), (b7, "b7"), (w8, "w8"), (b8, "b8"), (w9, "w9"),
     (w10, "w10"), (b10, "b10"), (w11, "w11"),
     (w16, "w16"), (b16, "b16"), (w17, "w17"), (b17, "b17"), (w20, "w20"), (b20, "b20"),
     (np.array(0, np.float32), "lo"), (np.array(6, np.float32), "hi")])


def conv(name, ins, out, **kw):
    return helper.make_node("Conv", ins, [out], name=name, **kw)


silu = conv("dw4", ["x", "w4", "b4"], "y4", group=C, pads=[2, 2, 2, 2], strides=[2, 2])
silu.attribute.append(helper.make_attribute("kn.epilogue", ["Silu"]))
silu16 = conv("dw16", ["n", "w16", "b16"], "y16", group=5, pads=[2, 2, 2, 2])
silu16.attribute.append(helper.make_attribute("kn.epilogue", ["Silu"]))
silu17 = conv("dw17", ["e", "w17", "b17"], "y17", group=4, pads=[2, 2, 2, 2])
silu17.attribute.append(helper.make_attribute("kn.epilogue", ["Silu"]))
silu20 = conv("dw20", ["q", "w20", "b20"], "y20", group=6, pads=[1, 1, 1, 1])
silu20.attribute.append(helper.make_attribute("kn.epilogue", ["Silu"]))
nodes = [
    conv("dw1", ["x", "w1", "b1"], "c1", group=C, pads=[1, 1, 1, 1]),
    helper.make_node("Clip", ["c1", "lo", "hi"], ["y1"], name="relu6"),
    conv("dw2", ["x", "w2"], "c2", group=C, pads=[1, 1, 1, 1], strides=[2, 2]),
    helper.make_node("Add", ["c2", "r"], ["s2"], name="res2"),
    helper.make_node("HardSwish", ["s2"], ["y2"], name="hswish"),
    conv("dw3", ["x", "w3"], "c3", group=C, pads=[2, 1, 0, 3], dilations=[2, 2]),
    helper.make_node("Relu", ["c3"], ["y3"], name="relu3"),
    silu,
    conv("dw5", ["x", "w5"], "c5", group=C, pads=[1, 1, 1, 1]),
    helper.make_node("Add", ["c5", "x"], ["s5"], name="res5"),
    helper.make_node("Relu", ["s5"], ["y5"], name="relu5"),
    conv("dw6", ["x", "w6"], "y6", group=C),
    conv("dw7", ["z", "w7", "b7"], "y7", group=3, pads=[3, 3, 3, 3]),
    conv("dw8", ["s", "w8", "b8"], "y8", group=7, pads=[2, 2]),
    conv("dw9", ["x", "w9"], "y9", group=C, pads=[0, 2, 1, 1], strides=[2, 2], dilations=[2, 2]),
    conv("dw10", ["n", "w10", "b10"], "y10", group=5, pads=[1, 1, 1, 1]),
    conv("dw11", ["e", "w11"], "c11", group=4, pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c11"], ["y11"], name="relu11"),
    helper.make_node("GlobalAveragePool", ["y1"], ["y12"], name="pool1"),
    helper.make_node("GlobalAveragePool", ["y4"], ["y13"], name="pool4"),
    helper.make_node("GlobalAveragePool", ["y7"], ["y14"], name="pool7"),
    helper.make_node("GlobalAveragePool", ["y8"], ["y15"], name="pool8"),
    silu16,
    silu17,
    helper.make_node("GlobalAveragePool", ["y16"], ["y18"], name="pool16"),
    helper.make_node("GlobalAveragePool", ["y17"], ["y19"], name="pool17"),
    silu20,
    helper.make_node("GlobalAveragePool", ["y20"], ["y21"], name="pool20"),
]

t = torch.from_numpy
with torch.no_grad():
    X = t(x)
    y1 = torch.clamp(F.conv2d(X, t(w1), t(b1), padding=1, groups=C), 0, 6)
    y2 = F.hardswish(F.conv2d(X, t(w2), padding=1, stride=2, groups=C) + t(r))
    # F.pad takes (left, right, top, bottom)
    y3 = F.relu(F.conv2d(F.pad(X, (1, 3, 2, 0)), t(w3), dilation=2, groups=C))
    y4 = F.silu(F.conv2d(X, t(w4), t(b4), padding=2, stride=2, groups=C))
    y5 = F.relu(F.conv2d(X, t(w5), padding=1, groups=C) + X)
    y6 = F.conv2d(X, t(w6), groups=C)
    y7 = F.conv2d(t(z), t(w7), t(b7), padding=3, groups=3)
    y8 = F.conv1d(t(s), t(w8), t(b8), padding=2, groups=7)
    y9 = F.conv2d(F.pad(X, (2, 1, 0, 1)), t(w9), stride=2, dilation=2, groups=C)
    y10 = F.conv2d(t(n14), t(w10), t(b10), padding=1, groups=5)
    y11 = F.relu(F.conv2d(t(e7), t(w11), padding=1, groups=4))
    y16 = F.silu(F.conv2d(t(n14), t(w16), t(b16), padding=2, groups=5))
    y17 = F.silu(F.conv2d(t(e7), t(w17), t(b17), padding=2, groups=4))
    pools = [a.mean(dim=tuple(range(2, a.dim())), keepdim=True) for a in (y1, y4, y7, y8)]
    pools2 = [a.mean(dim=(2, 3), keepdim=True) for a in (y16, y17)]
    y20 = F.silu(F.conv2d(t(q), t(w20), t(b20), padding=1, groups=6))
    y21 = y20.mean(dim=(2, 3), keepdim=True)
outs = [y1, y2, y3, y4, y5, y6, y7, y8, y9, y10, y11] + pools + [y16, y17] + pools2 + [y20, y21]

ins = [("x", x), ("r", r), ("z", z), ("s", s), ("n", n14), ("e", e7), ("q", q)]
g = gc.float_graph(nodes, "depthwise", ins, outs, inits)
gc.write_case(here, gc.model(g, check=False), [a for _, a in ins], outs)
