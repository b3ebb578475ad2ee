#!/usr/bin/python3
"""Writes tests/golden/add_relu.onnx: y = Relu(Conv(x) + x) and z = Relu(x + x) read
twice, the residual pattern passes/fuse.c folds (the golden case shows which Relu
nodes it folds). usage: /usr/bin/python3 tests/golden/make_add_relu.py"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

w = numpy_helper.from_array(np.full((2, 2, 1, 1), 0.5, np.float32), "w")
nodes = [
    helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
    helper.make_node("Add", ["c", "x"], ["s"], name="add"),
    helper.make_node("Relu", ["s"], ["y"], name="relu"),
    helper.make_node("Add", ["x", "x"], ["d"], name="add2"),
    helper.make_node("Relu", ["d"], ["z"], name="relu2"),
    helper.make_node("Neg", ["d"], ["n"], name="neg"),  # d has two readers: not fused
]
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 3])
outs = [helper.make_tensor_value_info(v, TensorProto.FLOAT, [1, 2, 3, 3]) for v in "yzn"]
g = helper.make_graph(nodes, "add_relu", [x], outs, [w])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(m)
onnx.save(m, os.path.join(os.path.dirname(os.path.abspath(__file__)), "add_relu.onnx"))
