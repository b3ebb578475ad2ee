#!/usr/bin/python3
"""Writes tests/golden/transpose_ones.onnx: PyTorch's batch_first encoder pattern,
x [1, 4, 8] -> Transpose(1, 0, 2) -> [4, 1, 8] -> MatMul -> Transpose(1, 0, 2) -> Add x,
whose Transposes move only an axis of extent 1 (passes/transpose.c makes them Reshapes,
which passes/plan.c then runs in place of their input), and a Transpose (2, 1, 0) of x
that also reorders axes of extent above 1 (it stays a Transpose); and the same graph
at opset 4 as transpose_ones_opset4.onnx, where Reshape takes its shape as an attribute:
there the Transposes stay.
usage: /usr/bin/python3 tests/golden/make_transpose_ones.py"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

w = numpy_helper.from_array(np.arange(64, dtype=np.float32).reshape(8, 8) / 64, "w")
nodes = [
    helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0, 2], name="to_seq_first"),
    helper.make_node("MatMul", ["t", "w"], ["m"], name="proj"),
    helper.make_node("Transpose", ["m"], ["b"], perm=[1, 0, 2], name="to_batch_first"),
    helper.make_node("Add", ["x", "b"], ["y"], name="residual"),
    helper.make_node("Transpose", ["x"], ["z"], perm=[2, 1, 0], name="reorders"),
]
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8])
outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8]),
        helper.make_tensor_value_info("z", TensorProto.FLOAT, [8, 4, 1])]
g = helper.make_graph(nodes, "transpose_ones", [x], outs, [w])
for opset, name in ((13, "transpose_ones.onnx"), (4, "transpose_ones_opset4.onnx")):
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(os.path.dirname(os.path.abspath(__file__)), name))
