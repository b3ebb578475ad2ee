#!/usr/bin/python3
"""Writes tests/fuse/model.onnx and test_data_set_0: the patterns passes/fuse.c folds
into a producer's epilogue, with outputs computed by torch from the same weights:

  y1 = Relu(Conv3x3(x) + x)                      residual Add, then an activation
  y2 = Clip(Conv1x1(x), 0, 6)                    ReLU6 with constant bound inputs
  y3 = HardSwish(Conv3x3/stride 2(x) + r)        r: [1,5,1,1] input broadcast per channel
  y4 = LeakyRelu(Gemm(flat, W, b), 0.1)          Gemm with a row bias
  y5 = Sigmoid(MatMul(flat, B)) , Tanh(y5 + y5)  MatMul, then an elementwise head

Output channels (5, 7) and columns (13) leave tails in every vector width.
usage: /usr/bin/python3 tests/fuse/make_fuse.py"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from onnx import helper

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
import gen_common as gc  # noqa: E402

rnd = gc.uniform(7)

x = rnd(2, 4, 9, 11)
r = rnd(1, 5, 1, 1)
w1, b1 = rnd(4, 4, 3, 3), rnd(4)
w2 = rnd(7, 4, 1, 1)
w3, b3 = rnd(5, 4, 3, 3), rnd(5)
W, b = rnd(13, 4 * 9 * 11), rnd(13)
B = rnd(4 * 9 * 11, 13)

inits = gc.initializers(
    [(w1, "w1"), (b1, "b1"), (w2, "w2"), (w3, "w3"), (b3, "b3"), (W, "W"), (b, "b"),
     (B, "B"), (np.array(0, np.float32), "lo"), (np.array(6, np.float32), "hi"),
     (np.array([2, -1], np.int64), "shape")])
nodes = [
    helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
    helper.make_node("Add", ["c1", "x"], ["s1"], name="res1"),
    helper.make_node("Relu", ["s1"], ["y1"], name="relu1"),
    helper.make_node("Conv", ["x", "w2"], ["c2"], name="conv2"),
    helper.make_node("Clip", ["c2", "lo", "hi"], ["y2"], name="relu6"),
    helper.make_node("Conv", ["x", "w3", "b3"], ["c3"], name="conv3", pads=[1, 1, 1, 1],
                     strides=[2, 2]),
    helper.make_node("Add", ["r", "c3"], ["s3"], name="res3"),
    helper.make_node("HardSwish", ["s3"], ["y3"], name="hswish"),
    helper.make_node("Reshape", ["x", "shape"], ["flat"], name="flatten"),
    helper.make_node("Gemm", ["flat", "W", "b"], ["g4"], name="gemm", transB=1),
    helper.make_node("LeakyRelu", ["g4"], ["y4"], name="leaky", alpha=0.1),
    helper.make_node("MatMul", ["flat", "B"], ["m5"], name="matmul"),
    helper.make_node("Sigmoid", ["m5"], ["y5"], name="sigmoid"),
    helper.make_node("Add", ["y5", "y5"], ["d5"], name="double"),
    helper.make_node("Tanh", ["d5"], ["y6"], name="tanh"),
]
t = torch.from_numpy
with torch.no_grad():
    y1 = F.relu(F.conv2d(t(x), t(w1), t(b1), padding=1) + t(x))
    y2 = torch.clamp(F.conv2d(t(x), t(w2)), 0, 6)
    y3 = F.hardswish(F.conv2d(t(x), t(w3), t(b3), stride=2, padding=1) + t(r))
    flat = t(x).reshape(2, -1)
    y4 = F.leaky_relu(flat @ t(W).T + t(b), 0.1)
    y5 = torch.sigmoid(flat @ t(B))
    y6 = torch.tanh(y5 + y5)
outs = [y1, y2, y3, y4, y5, y6]
g = gc.float_graph(nodes, "fuse", [("x", x), ("r", r)], outs, inits)
gc.write_case(here, gc.model(g), [x, r], outs)
