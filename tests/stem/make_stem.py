#!/usr/bin/python3
"""Writes tests/stem/model.onnx and test_data_set_0: convolutions over few input
channels (a CNN's first layer) for passes/stem.c, with outputs computed by torch from
the same weights:

  y1 = Relu(Conv3x3 s2 p1 (x) + b)        3 -> 32 channels (MobileNet's stem), x 23x37
  y2 = Conv7x7 s2 p3 (x)                  3 -> 13, no bias (ResNet's; a partial block)
  y3 = Clip(Conv3x3 s2 (x) + b, 0, 6)     3 -> 16, no padding (SqueezeNet's)
  y4 = Relu(Conv5x5 (l) + b)              1 -> 6 at stride 1 (LeNet-5's), l 28x28
  y5 = Silu(Conv3x3 dilation 2, pads t1 l2 b0 r1 (q))   4 -> 9, 'Silu' as kn.epilogue
  y6 = Conv3x3 s3 p1 (u) + Relu(v)        2 -> 10, stride 3; the residual is an arena
                                          temporary (row tails in narrower vectors)
  y7 = (Conv3x3 s2 p1 (z) + b) * k        batch 2, rows of 35 outputs; k [1,8,1,1]
  y8 = Conv1d k5 s2 p2 (s) + b            1-D, batch 2
  y9 = Relu(Conv3x3 s2 p1 (Transpose(h))) an NHWC input (passes/layout.c folds the
                                          Transpose into the Conv: x read by its strides)
  y10 = Conv3x3 s2 p1 (x) + r             the residual a graph input (row tails overlap)

Output rows of 19, 18, 24, 28, 13, 35, 25 and 10 leave tails in 4-, 8- and 16-lane
vectors. usage: /usr/bin/python3 tests/stem/make_stem.py"""
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

x = rnd(1, 3, 23, 37)
l = rnd(1, 1, 28, 28)
q = rnd(1, 4, 13, 29)
u = rnd(1, 2, 23, 37)
v = rnd(1, 10, 8, 13)
z = rnd(2, 3, 9, 70)
s = rnd(2, 3, 50)
h = rnd(1, 17, 19, 3)
r = rnd(1, 8, 12, 19)
w1, b1 = rnd(32, 3, 3, 3), rnd(32)
w2 = rnd(13, 3, 7, 7)
w3, b3 = rnd(16, 3, 3, 3), rnd(16)
w4, b4 = rnd(6, 1, 5, 5), rnd(6)
w5 = rnd(9, 4, 3, 3)
w6 = rnd(10, 2, 3, 3)
w7, b7, k7 = rnd(8, 3, 3, 3), rnd(8), rnd(1, 8, 1, 1)
w8, b8 = rnd(10, 3, 5), rnd(10)
w9 = rnd(12, 3, 3, 3)
w10 = rnd(8, 3, 3, 3)

inits = gc.initializers(
    [(w1, "w1"), (b1, "b1"), (w2, "w2"), (w3, "w3"), (b3, "b3"), (w4, "w4"), (b4, "b4"),
     (w5, "w5"), (w6, "w6"), (w7, "w7"), (b7, "b7"), (k7, "k7"), (w8, "w8"), (b8, "b8"),
     (w9, "w9"), (w10, "w10"),
     (np.array(0, np.float32), "lo"), (np.array(6, np.float32), "hi")])


def conv(name, ins, out, **kw):
    return helper.make_node("Conv", ins, [out], name=name, **kw)


silu = conv("c5", ["q", "w5"], "y5", pads=[1, 2, 0, 1], dilations=[2, 2])
silu.attribute.append(helper.make_attribute("kn.epilogue", ["Silu"]))
nodes = [
    conv("c1", ["x", "w1", "b1"], "a1", pads=[1, 1, 1, 1], strides=[2, 2]),
    helper.make_node("Relu", ["a1"], ["y1"], name="relu1"),
    conv("c2", ["x", "w2"], "y2", pads=[3, 3, 3, 3], strides=[2, 2]),
    conv("c3", ["x", "w3", "b3"], "a3", strides=[2, 2]),
    helper.make_node("Clip", ["a3", "lo", "hi"], ["y3"], name="relu6"),
    conv("c4", ["l", "w4", "b4"], "a4"),
    helper.make_node("Relu", ["a4"], ["y4"], name="relu4"),
    silu,
    helper.make_node("Relu", ["v"], ["rv"], name="relu_v"),
    conv("c6", ["u", "w6"], "a6", pads=[1, 1, 1, 1], strides=[3, 3]),
    helper.make_node("Add", ["a6", "rv"], ["y6"], name="res6"),
    conv("c7", ["z", "w7", "b7"], "a7", pads=[1, 1, 1, 1], strides=[2, 2]),
    helper.make_node("Mul", ["a7", "k7"], ["y7"], name="scale7"),
    conv("c8", ["s", "w8", "b8"], "y8", pads=[2, 2], strides=[2]),
    helper.make_node("Transpose", ["h"], ["ht"], name="nchw", perm=[0, 3, 1, 2]),
    conv("c9", ["ht", "w9"], "a9", pads=[1, 1, 1, 1], strides=[2, 2]),
    helper.make_node("Relu", ["a9"], ["y9"], name="relu9"),
    conv("c10", ["x", "w10"], "a10", pads=[1, 1, 1, 1], strides=[2, 2]),
    helper.make_node("Add", ["a10", "r"], ["y10"], name="res10"),
]

t = torch.from_numpy
with torch.no_grad():
    X = t(x)
    y1 = F.relu(F.conv2d(X, t(w1), t(b1), padding=1, stride=2))
    y2 = F.conv2d(X, t(w2), padding=3, stride=2)
    y3 = torch.clamp(F.conv2d(X, t(w3), t(b3), stride=2), 0, 6)
    y4 = F.relu(F.conv2d(t(l), t(w4), t(b4)))
    # F.pad takes (left, right, top, bottom)
    y5 = F.silu(F.conv2d(F.pad(t(q), (2, 1, 1, 0)), t(w5), dilation=2))
    y6 = F.conv2d(t(u), t(w6), padding=1, stride=3) + F.relu(t(v))
    y7 = (F.conv2d(t(z), t(w7), t(b7), padding=1, stride=2)) * t(k7)
    y8 = F.conv1d(t(s), t(w8), t(b8), padding=2, stride=2)
    y9 = F.relu(F.conv2d(t(h).permute(0, 3, 1, 2), t(w9), padding=1, stride=2))
    y10 = F.conv2d(X, t(w10), padding=1, stride=2) + t(r)
outs = [y1, y2, y3, y4, y5, y6, y7, y8, y9, y10]
ins = [("x", x), ("l", l), ("q", q), ("u", u), ("v", v), ("z", z), ("s", s), ("h", h), ("r", r)]

g = gc.float_graph(nodes, "stem", ins, outs, inits)
gc.write_case(here, gc.model(g, check=False), [a for _, a in ins], outs)
