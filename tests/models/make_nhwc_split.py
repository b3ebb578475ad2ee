#!/usr/bin/python3
"""Writes tests/models/nhwc_split and nhwc_resize. nhwc_split: a channels-last block whose Transpose (NCHW -> NHWC) is
read by two elementwise branches (Relu; Add of a per-channel constant), each transposed
back before its own consumer (Mul, Sigmoid). passes/transpose.c gives each branch its
own copy of the shared Transpose, sinks it and cancels it against the branch's inverse:
no Transpose is left (golden transpose_split). nhwc_resize: NCHW -> NHWC, a nearest
Resize doubling H and W in NHWC, back to NCHW, Relu: the first Transpose sinks through
the Resize (its sizes permuted) and cancels with the second (golden transpose_resize).
Expected outputs: numpy (float64, rounded to float32).
usage: /usr/bin/python3 tests/models/make_nhwc_split.py"""
import os

import numpy as np
import onnx
from onnx import TensorProto as T, helper, numpy_helper

import casegen

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(21)

x = helper.make_tensor_value_info("x", T.FLOAT, [2, 3, 4, 5])
ys = [helper.make_tensor_value_info(n, T.FLOAT, [2, 3, 4, 5]) for n in ("y1", "y2")]
cv = rng.standard_normal((1, 1, 1, 3)).astype(np.float32)
nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 3, 1], name="t_in"),
         helper.make_node("Relu", ["t"], ["a"], name="relu"),
         helper.make_node("Add", ["t", "c"], ["b"], name="add"),
         helper.make_node("Transpose", ["a"], ["a2"], perm=[0, 3, 1, 2], name="ta"),
         helper.make_node("Transpose", ["b"], ["b2"], perm=[0, 3, 1, 2], name="tb"),
         helper.make_node("Mul", ["a2", "a2"], ["y1"], name="m1"),
         helper.make_node("Sigmoid", ["b2"], ["y2"], name="s2")]
g = helper.make_graph(nodes, "nhwc_split", [x], ys, [numpy_helper.from_array(cv, "c")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="kiln-tests")
m.ir_version = 7

xv = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
t = xv.astype(np.float64).transpose(0, 2, 3, 1)
a = np.maximum(t, 0).transpose(0, 3, 1, 2)
b = (t + cv.astype(np.float64)).transpose(0, 3, 1, 2)
y1 = (a * a).astype(np.float32)
y2 = (1 / (1 + np.exp(-b))).astype(np.float32)
casegen.write_case(os.path.join(HERE, "nhwc_split"), m, [([xv], [y1, y2])])
onnx.save(m, os.path.join(HERE, "..", "golden", "transpose_split.onnx"))

x = helper.make_tensor_value_info("x", T.FLOAT, [1, 3, 4, 5])
y = helper.make_tensor_value_info("y", T.FLOAT, [1, 3, 8, 10])
sizes = numpy_helper.from_array(np.array([1, 8, 10, 3], dtype=np.int64), "sizes")
nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 3, 1], name="t_in"),
         helper.make_node("Resize", ["t", "", "", "sizes"], ["r"], mode="nearest", name="up"),
         helper.make_node("Transpose", ["r"], ["r2"], perm=[0, 3, 1, 2], name="t_out"),
         helper.make_node("Relu", ["r2"], ["y"], name="relu")]
g = helper.make_graph(nodes, "nhwc_resize", [x], [y], [sizes])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="kiln-tests")
m.ir_version = 7
xv = rng.standard_normal((1, 3, 4, 5)).astype(np.float32)
# nearest, half_pixel, round_prefer_floor at scale 2: output index i reads i // 2
yv = np.maximum(xv.repeat(2, axis=2).repeat(2, axis=3), 0).astype(np.float32)
casegen.write_case(os.path.join(HERE, "nhwc_resize"), m, [([xv], [yv])])
onnx.save(m, os.path.join(HERE, "..", "golden", "transpose_resize.onnx"))
print("wrote nhwc_split, nhwc_resize")
