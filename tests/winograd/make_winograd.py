#!/usr/bin/python3
"""Writes tests/winograd/model.onnx and test_data_set_0: 3x3 stride-1 convolutions for
passes/winograd.c (F(4x4,3x3) by default, F(2x2,3x3) through a schedule file), with
outputs computed by torch (float64, rounded to float32) from the same weights:

  y1 = Relu(Conv p1 (x) + b1)             19 -> 21 channels, 13x11 (partial tiles, channel
                                          counts no vector width divides)
  y2 = Conv p0 (x2) + b2                  16 -> 24, 15x10 -> 13x8, no padding
  y3 = Relu(Conv p1 (Relu(Conv p1 (x3) + b3a)) + b3b + x3)   ResNet's basic block, 32
                                          channels, 9x14: the residual an input
  y4 = Conv p1 (x4)                       batch 2, 17 -> 18, 7x9, no bias
  y5 = Conv pads t1 l0 b0 r1 (x5) + b5    asymmetric pads, 20 -> 17, 10x6 -> 9x6
  y6 = Clip(Conv p1 (x6) + b6, 0, 6) + Relu(Conv p1 (x6))   two convs of one input,
                                          the residual an arena temporary, 24 -> 40, 6x5
  y7 = Conv p1 (x7) + b7                  16 -> 24, 48x44: 132 tiles of 4x4, enough for
                                          the product by chunks of tile rows (a tail of 4
                                          rows on 8-row tiles; passes/tile.c,
                                          kt_batched_const)

Inputs are uniform in [-1, 1], weights scaled by 1/sqrt(9 cin) as a trained network's
are, so outputs are of order one as in ResNet. usage: /usr/bin/python3
tests/winograd/make_winograd.py"""
import os

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(16)
here = os.path.dirname(os.path.abspath(__file__))


def rnd(*shape):
    return rng.uniform(-1, 1, shape).astype(np.float32)


def wts(co, ci):
    return (rnd(co, ci, 3, 3) * np.float32(np.sqrt(3.0 / (9 * ci)))).astype(np.float32)


x, x2, x3 = rnd(1, 19, 13, 11), rnd(1, 16, 15, 10), rnd(1, 32, 9, 14)
x4, x5, x6 = rnd(2, 17, 7, 9), rnd(1, 20, 10, 6), rnd(1, 24, 6, 5)
w1, b1 = wts(21, 19), rnd(21)
w2, b2 = wts(24, 16), rnd(24)
w3a, b3a, w3b, b3b = wts(32, 32), rnd(32), wts(32, 32), rnd(32)
w4 = wts(18, 17)
w5, b5 = wts(17, 20), rnd(17)
w6, b6, w6r = wts(40, 24), rnd(40), wts(40, 24)
x7, w7, b7 = rnd(1, 16, 48, 44), wts(24, 16), rnd(24)

inits = [numpy_helper.from_array(a, n) for a, n in
         [(w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"), (w3a, "w3a"), (b3a, "b3a"),
          (w3b, "w3b"), (b3b, "b3b"), (w4, "w4"), (w5, "w5"), (b5, "b5"), (w6, "w6"),
          (b6, "b6"), (w6r, "w6r"), (w7, "w7"), (b7, "b7"),
          (np.array(0, np.float32), "lo"), (np.array(6, np.float32), "hi")]]


def conv(name, ins, out, pads=(1, 1, 1, 1)):
    return helper.make_node("Conv", ins, [out], name=name, pads=list(pads),
                            kernel_shape=[3, 3])


nodes = [
    conv("c1", ["x", "w1", "b1"], "a1"),
    helper.make_node("Relu", ["a1"], ["y1"], name="relu1"),
    conv("c2", ["x2", "w2", "b2"], "y2", pads=(0, 0, 0, 0)),
    conv("c3a", ["x3", "w3a", "b3a"], "a3"),
    helper.make_node("Relu", ["a3"], ["r3"], name="relu3a"),
    conv("c3b", ["r3", "w3b", "b3b"], "s3"),
    helper.make_node("Add", ["s3", "x3"], ["t3"], name="res3"),
    helper.make_node("Relu", ["t3"], ["y3"], name="relu3b"),
    conv("c4", ["x4", "w4"], "y4"),
    conv("c5", ["x5", "w5", "b5"], "y5", pads=(1, 0, 0, 1)),
    conv("c6", ["x6", "w6", "b6"], "a6"),
    helper.make_node("Clip", ["a6", "lo", "hi"], ["k6"], name="relu6"),
    conv("c6r", ["x6", "w6r"], "a6r"),
    helper.make_node("Relu", ["a6r"], ["r6"], name="relu6r"),
    helper.make_node("Add", ["k6", "r6"], ["y6"], name="res6"),
    conv("c7", ["x7", "w7", "b7"], "y7"),
]

t = lambda a: torch.from_numpy(a).double()
with torch.no_grad():
    y1 = F.relu(F.conv2d(t(x), t(w1), t(b1), padding=1))
    y2 = F.conv2d(t(x2), t(w2), t(b2))
    r3 = F.relu(F.conv2d(t(x3), t(w3a), t(b3a), padding=1))
    y3 = F.relu(F.conv2d(r3, t(w3b), t(b3b), padding=1) + t(x3))
    y4 = F.conv2d(t(x4), t(w4), padding=1)
    # F.pad takes (left, right, top, bottom)
    y5 = F.conv2d(F.pad(t(x5), (0, 1, 1, 0)), t(w5), t(b5))
    y6 = torch.clamp(F.conv2d(t(x6), t(w6), t(b6), padding=1), 0, 6) + \
        F.relu(F.conv2d(t(x6), t(w6r), padding=1))
    y7 = F.conv2d(t(x7), t(w7), t(b7), padding=1)
outs = [y.float() for y in (y1, y2, y3, y4, y5, y6, y7)]
ins = [("x", x), ("x2", x2), ("x3", x3), ("x4", x4), ("x5", x5), ("x6", x6), ("x7", x7)]

vi = lambda n, sh: helper.make_tensor_value_info(n, TensorProto.FLOAT, list(sh))
g = helper.make_graph(nodes, "winograd", [vi(n, a.shape) for n, a in ins],
                      [vi(f"y{i + 1}", y.shape) for i, y in enumerate(outs)], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
onnx.save(m, os.path.join(here, "model.onnx"))

d = os.path.join(here, "test_data_set_0")
os.makedirs(d, exist_ok=True)
for i, (_, a) in enumerate(ins):
    onnx.save_tensor(numpy_helper.from_array(a), os.path.join(d, f"input_{i}.pb"))
for i, a in enumerate(outs):
    onnx.save_tensor(numpy_helper.from_array(a.numpy()), os.path.join(d, f"output_{i}.pb"))
