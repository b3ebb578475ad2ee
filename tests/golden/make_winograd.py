#!/usr/bin/python3
"""Writes tests/golden/winograd.onnx: y = Relu(Conv3x3 pad 1 (x) + b) from 17 to 31
channels on a 1x17x7x8 input, small enough to read the kernel passes/winograd.c builds
(generic target, 4 lanes): the zero-padded copy in blocks of 4 channels (a partial
one), the F(2x2, 3x3) input transform, 16 tiled products over 16 tiles and the output
transform with the bias and the Relu, partial tiles and a partial block of output
channels (31 = 7 x 4 + 3; Cin * Cout = 527, past the 512 the default asks of an
F(2x2) convolution). usage: /usr/bin/python3 tests/golden/make_winograd.py"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(16)
w = numpy_helper.from_array(rng.uniform(-1, 1, (31, 17, 3, 3)).astype(np.float32), "w")
b = numpy_helper.from_array(rng.uniform(-1, 1, (31,)).astype(np.float32), "b")
nodes = [
    helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c"], ["y"], name="relu"),
]
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 17, 7, 8])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 31, 7, 8])
g = helper.make_graph(nodes, "winograd", [x], [y], [w, b])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
onnx.checker.check_model(m)
onnx.save(m, os.path.join(os.path.dirname(os.path.abspath(__file__)), "winograd.onnx"))
