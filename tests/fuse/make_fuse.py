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

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)
here = os.path.dirname(os.path.abspath(__file__))


def rnd(*shape):
    return rng.uniform(-1, 1, shape).astype(np.float32)


x = rnd(2, 4, 9, 11)
r = rnd(1, 5, 1, 1)
w1, b1 = rnd(4, 4, 3, 3), rnd(4)
w2 = rnd(7, 4, 1, 1)
w3, b3 = rnd(5, 4, 3, 3), rnd(5)
W, b = rnd(13, 4 * 9 * 11), rnd(13)
B = rnd(4 * 9 * 11, 13)

inits = [numpy_helper.from_array(a, n) for a, n in
         [(w1, "w1"), (b1, "b1"), (w2, "w2"), (w3, "w3"), (b3, "b3"), (W, "W"), (b, "b"),
          (B, "B"), (np.array(0, np.float32), "lo"), (np.array(6, np.float32), "hi"),
          (np.array([2, -1], np.int64), "shape")]]
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
vi = lambda n, s: helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
g = helper.make_graph(nodes, "fuse", [vi("x", x.shape), vi("r", r.shape)],
                      [vi("y1", [2, 4, 9, 11]), vi("y2", [2, 7, 9, 11]), vi("y3", [2, 5, 5, 6]),
                       vi("y4", [2, 13]), vi("y5", [2, 13]), vi("y6", [2, 13])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
onnx.checker.check_model(m)
onnx.save(m, os.path.join(here, "model.onnx"))

t = torch.from_numpy
with torch.no_grad():
    y1 = F.relu(F.conv2d(t(x), t(w1), t(b1), padding=1) + t(x))
    y2 = torch.clamp(F.conv2d(t(x), t(w2)), 0, 6)
    y3 = F.hardswish(F.conv2d(t(x), t(w3), t(b3), stride=2, padding=1) + t(r))
    flat = t(x).reshape(2, -1)
    y4 = F.leaky_relu(flat @ t(W).T + t(b), 0.1)
    y5 = torch.sigmoid(flat @ t(B))
    y6 = torch.tanh(y5 + y5)
d = os.path.join(here, "test_data_set_0")
os.makedirs(d, exist_ok=True)
for i, a in enumerate([x, r]):
    onnx.save_tensor(numpy_helper.from_array(a), os.path.join(d, f"input_{i}.pb"))
for i, a in enumerate([y1, y2, y3, y4, y5, y6]):
    onnx.save_tensor(numpy_helper.from_array(a.numpy()), os.path.join(d, f"output_{i}.pb"))
