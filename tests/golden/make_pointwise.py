#!/usr/bin/python3
"""Writes tests/golden/pointwise.onnx: y = Relu(Conv1x1 (x) + b), 2 -> 5 channels on a
1x2x7x10 input, small enough to read the pixel tiles passes/tile.c builds for a pointwise
convolution (tile_pointwise; generic target: 4 lanes, blocks of 8 pixels): x packed
into blocks, 8 full blocks in a loop marked parallel, the partial block of 6 pixels.
usage: /usr/bin/python3 tests/golden/make_pointwise.py"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(4)
w = numpy_helper.from_array(rng.uniform(-1, 1, (5, 2, 1, 1)).astype(np.float32), "w")
b = numpy_helper.from_array(rng.uniform(-1, 1, (5,)).astype(np.float32), "b")
nodes = [
    helper.make_node("Conv", ["x", "w", "b"], ["c"], name="pw"),
    helper.make_node("Relu", ["c"], ["y"], name="relu"),
]
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 7, 10])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5, 7, 10])
g = helper.make_graph(nodes, "pointwise", [x], [y], [w, b])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
onnx.checker.check_model(m)
onnx.save(m, os.path.join(os.path.dirname(os.path.abspath(__file__)), "pointwise.onnx"))
