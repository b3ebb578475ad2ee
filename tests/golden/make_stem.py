#!/usr/bin/python3
"""Writes tests/golden/stem.onnx: y = Relu(Conv3x3 stride 2 pad 1 (x) + b) from 3 to 6
channels on a 1x3x8x11 input, small enough to read the kernel passes/stem.c builds
(generic target, 4 lanes): the phase-split padded copy, a block of 4 output channels
and a partial one of 2, each output row of 6 one 4-lane vector and one overlapping it
to the row's end. usage: /usr/bin/python3 tests/golden/make_stem.py"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)
w = numpy_helper.from_array(rng.uniform(-1, 1, (6, 3, 3, 3)).astype(np.float32), "w")
b = numpy_helper.from_array(rng.uniform(-1, 1, (6,)).astype(np.float32), "b")
nodes = [
    helper.make_node("Conv", ["x", "w", "b"], ["c"], name="stem", pads=[1, 1, 1, 1],
                     strides=[2, 2]),
    helper.make_node("Relu", ["c"], ["y"], name="relu"),
]
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 11])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 6, 4, 6])
g = helper.make_graph(nodes, "stem", [x], [y], [w, b])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
onnx.checker.check_model(m)
onnx.save(m, os.path.join(os.path.dirname(os.path.abspath(__file__)), "stem.onnx"))
