#!/usr/bin/python3
"""Writes tests/sescale/model.onnx and test_data_set_0: squeeze-and-excite blocks for
passes/sescale.c (the channel scale applied in the loads of the Mul's one reader), with
outputs computed by numpy from the same weights:

  a = x * sigmoid(W2 silu(W1 mean(x) + b1) + b2)   x: 1x24x10x10 (P = 100: a partial
  y1 = Conv1x1(a) + b3                             pixel block in every vector width)
  y2 = Conv1x1(x * g) for g a graph input [1,24,1,1]
  m = e * g2, read by two Conv1x1 (not fused: two readers)  -> y3, y4
  y5 = Conv1x1(f * h)  f: 1x8x7x7 (P = 49, 7x7 layers), h: [8,1,1]
  y6, y7, y8 = Conv1x1(u * k) with readers that load u several times (the channel tiles
  of 7x7 and 14x14 layers, a 3x3 image in the convolution tiles), so the Mul is kept as
  a vector loop per channel instead: u 1x40x7x7 -> 80, 1x96x14x14 -> 72, 1x40x3x3 -> 80

usage: /usr/bin/python3 tests/sescale/make_sescale.py"""
import os
import sys

import numpy as np
from onnx import helper

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
import gen_common as gc  # noqa: E402

rnd = gc.uniform(5)

C = 24
x = rnd(1, C, 10, 10)
g = rnd(1, C, 1, 1)
e = rnd(1, C, 10, 10)
g2 = rnd(1, C, 1, 1)
f = rnd(1, 8, 7, 7)
h = rnd(8, 1, 1)
w1, b1 = rnd(6, C, 1, 1), rnd(6)
w2, b2 = rnd(C, 6, 1, 1), rnd(C)
w3, b3 = rnd(16, C, 1, 1), rnd(16)
w4 = rnd(20, C, 1, 1)
w5 = rnd(8, C, 1, 1)
w6 = rnd(12, C, 1, 1)
w7 = rnd(16, 8, 1, 1)
u6, k6, w8 = rnd(1, 40, 7, 7), rnd(1, 40, 1, 1), rnd(80, 40, 1, 1)
u7, k7, w9 = rnd(1, 96, 14, 14), rnd(1, 96, 1, 1), rnd(72, 96, 1, 1)
u8, k8, w10 = rnd(1, 40, 3, 3), rnd(40, 1, 1), rnd(80, 40, 1, 1)
inits = gc.initializers(
    [(w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"), (w3, "w3"), (b3, "b3"), (w4, "w4"),
     (w5, "w5"), (w6, "w6"), (w7, "w7"), (h, "h"), (w8, "w8"), (w9, "w9"), (w10, "w10"),
     (k8, "k8")])
N = helper.make_node
nodes = [
    N("GlobalAveragePool", ["x"], ["p"], name="squeeze"),
    N("Conv", ["p", "w1", "b1"], ["f1"], name="fc1"),
    N("Sigmoid", ["f1"], ["f1s"], name="sig1"),
    N("Mul", ["f1", "f1s"], ["f1a"], name="silu"),
    N("Conv", ["f1a", "w2", "b2"], ["f2"], name="fc2"),
    N("Sigmoid", ["f2"], ["s"], name="gate"),
    N("Mul", ["x", "s"], ["a"], name="excite"),
    N("Conv", ["a", "w3", "b3"], ["y1"], name="project"),
    N("Mul", ["x", "g"], ["a2"], name="scale2"),
    N("Conv", ["a2", "w4"], ["y2"], name="project2"),
    N("Mul", ["e", "g2"], ["m"], name="scale3"),
    N("Conv", ["m", "w5"], ["y3"], name="reader1"),
    N("Conv", ["m", "w6"], ["y4"], name="reader2"),
    N("Mul", ["f", "h"], ["a5"], name="scale5"),
    N("Conv", ["a5", "w7"], ["y5"], name="project5"),
    N("Mul", ["u6", "k6"], ["a6"], name="scale6"),
    N("Conv", ["a6", "w8"], ["y6"], name="project6"),
    N("Mul", ["k7", "u7"], ["a7"], name="scale7"),
    N("Conv", ["a7", "w9"], ["y7"], name="project7"),
    N("Mul", ["u8", "k8"], ["a8"], name="scale8"),
    N("Conv", ["a8", "w10"], ["y8"], name="project8"),
]


def conv1(a, w, b=None):
    y = np.einsum("mc,nchw->nmhw", w[:, :, 0, 0], a)
    return y + b[None, :, None, None] if b is not None else y


sig = lambda v: 1 / (1 + np.exp(-v))
p = x.mean(axis=(2, 3), keepdims=True)
f1 = conv1(p, w1, b1)
s = sig(conv1(f1 * sig(f1), w2, b2))
outs = [conv1(x * s, w3, b3), conv1(x * g, w4), conv1(e * g2, w5), conv1(e * g2, w6),
        conv1(f * h[None], w7), conv1(u6 * k6, w8), conv1(k7 * u7, w9), conv1(u8 * k8[None], w10)]

ins = [("x", x), ("g", g), ("e", e), ("g2", g2), ("f", f), ("u6", u6), ("k6", k6), ("u7", u7),
       ("k7", k7), ("u8", u8)]
graph = gc.float_graph(nodes, "sescale", ins, outs, inits)
gc.write_case(here, gc.model(graph), [a for _, a in ins], [y.astype(np.float32) for y in outs])
