#!/usr/bin/python3
"""Writes tests/golden/depthwise.onnx: y = Clip(DepthwiseConv3x3 pad 1 (x) + b, 0, 6) on a
1x3x4x7 input, small enough to read the kernel passes/depthwise.c builds: top and
bottom border rows, left and right border columns, one 4-lane vector tile and a scalar
tail (generic target). usage: /usr/bin/python3 tests/golden/make_depthwise.py"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(3)
w = numpy_helper.from_array(rng.uniform(-1, 1, (3, 1, 3, 3)).astype(np.float32), "w")
b = numpy_helper.from_array(rng.uniform(-1, 1, (3,)).astype(np.float32), "b")
lo = numpy_helper.from_array(np.array(0, np.float32), "lo")
hi = numpy_helper.from_array(np.array(6, np.float32), "hi")
nodes = [
    helper.make_node("Conv", ["x", "w", "b"], ["c"], name="dw", group=3, pads=[1, 1, 1, 1]),
    helper.make_node("Clip", ["c", "lo", "hi"], ["y"], name="relu6"),
]
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 7])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 4, 7])
g = helper.make_graph(nodes, "depthwise", [x], [y], [w, b, lo, hi])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
onnx.checker.check_model(m)
onnx.save(m, os.path.join(os.path.dirname(os.path.abspath(__file__)), "depthwise.onnx"))
