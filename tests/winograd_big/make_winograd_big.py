#!/usr/bin/python3
"""Writes tests/winograd_big/model.onnx and test_data_set_0: 3x3 stride-1 convolutions
whose transformed weights U (16 * Kp * Cout floats of F(2x2, 3x3)) do not fit the 256 KB
L2 of the x86-64-avx2 target (8 lanes) the tests compile them for,
for passes/winograd.c's chunked form over big Us (one parallel loop over chunks of tiles
in per-thread scratch, where the three passes over arena scratch ran before), with
outputs computed by torch (float64, rounded to float32) from the same weights:

  y1 = Relu(Conv p1 (x) + b1)             48 -> 96 channels, 13x11: F(2x2), 42 tiles
                                          (partial ones), U = 16 * 48 * 96 * 4 = 295 KB
  y2 = Conv p1 (x2) + b2 + x3             40 -> 115, 10x9: F(2x2), 25 tiles, U 294 KB,
                                          a residual graph input, Cout no vector width
                                          divides

Inputs are uniform in [-1, 1], weights scaled by 1/sqrt(9 cin) as a trained network's
are. usage: /usr/bin/python3 tests/winograd_big/make_winograd_big.py"""
import os

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(17)
here = os.path.dirname(os.path.abspath(__file__))


def rnd(*shape):
    return rng.uniform(-1, 1, shape).astype(np.float32)


def wts(co, ci):
    return (rnd(co, ci, 3, 3) * np.float32(np.sqrt(3.0 / (9 * ci)))).astype(np.float32)


x, x2, x3 = rnd(1, 48, 13, 11), rnd(1, 40, 10, 9), rnd(1, 115, 10, 9)
w1, b1 = wts(96, 48), rnd(96)
w2, b2 = wts(115, 40), rnd(115)

inits = [numpy_helper.from_array(a, n) for a, n in
         [(w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2")]]


def conv(name, ins, out):
    return helper.make_node("Conv", ins, [out], name=name, pads=[1, 1, 1, 1],
                            kernel_shape=[3, 3])


nodes = [
    conv("c1", ["x", "w1", "b1"], "a1"),
    helper.make_node("Relu", ["a1"], ["y1"], name="relu1"),
    conv("c2", ["x2", "w2", "b2"], "a2"),
    helper.make_node("Add", ["a2", "x3"], ["y2"], name="res2"),
]

t = lambda a: torch.from_numpy(a).double()
with torch.no_grad():
    y1 = F.relu(F.conv2d(t(x), t(w1), t(b1), padding=1))
    y2 = F.conv2d(t(x2), t(w2), t(b2), padding=1) + t(x3)
outs = [y.float() for y in (y1, y2)]
ins = [("x", x), ("x2", x2), ("x3", x3)]

vi = lambda n, sh: helper.make_tensor_value_info(n, TensorProto.FLOAT, list(sh))
g = helper.make_graph(nodes, "winograd_big", [vi(n, a.shape) for n, a in ins],
                      [vi(f"y{i + 1}", y.shape) for i, y in enumerate(outs)], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
onnx.save(m, os.path.join(here, "model.onnx"))

d = os.path.join(here, "test_data_set_0")
os.makedirs(d, exist_ok=True)
for i, (_, a) in enumerate(ins):
    onnx.save_tensor(numpy_helper.from_array(a), os.path.join(d, f"input_{i}.pb"))
for i, a in enumerate(outs):
    onnx.save_tensor(numpy_helper.from_array(a.numpy()), os.path.join(d, f"output_{i}.pb"))
