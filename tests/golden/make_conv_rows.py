#!/usr/bin/python3
"""Writes tests/golden/conv_rows.onnx: y = Relu(Conv3x3 pad 1 (x) + b) from 16 to 32
channels on a 1x16x24x24 input: on the generic target (4 lanes) the tile pass's blocks of
output channels are few (fewer than passes/tile.c's ROW_TILES_BELOW), so each output
row gets its own tile scratch, and the parallel pass collapses blocks x rows into one
split loop (its work is above the split threshold).
usage: /usr/bin/python3 tests/golden/make_conv_rows.py"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(11)
w = numpy_helper.from_array(rng.uniform(-1, 1, (32, 16, 3, 3)).astype(np.float32), "w")
b = numpy_helper.from_array(rng.uniform(-1, 1, (32,)).astype(np.float32), "b")
nodes = [
    helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c"], ["y"], name="relu"),
]
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 24, 24])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32, 24, 24])
g = helper.make_graph(nodes, "conv_rows", [x], [y], [w, b])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
onnx.checker.check_model(m)
onnx.save(m, os.path.join(os.path.dirname(os.path.abspath(__file__)), "conv_rows.onnx"))
