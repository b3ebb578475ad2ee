#!/usr/bin/python3
"""Writes tests/diff/cases/transpose_concat_const: Transposes of two inputs and a
constant concatenated along a negative axis, then Relu and a Transpose back, which
passes/transpose.c rewrites into one Concat along the renamed axis with the constant
transposed at compile time. The expected output is numpy's. CTest diff_cases_* run it
through C, LLVM and OpenCL.

usage: /usr/bin/python3 tests/diff/make_transpose_cases.py"""
import os
import sys

import numpy as np
from onnx import TensorProto as T, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "models"))
import casegen  # noqa: E402

rng = np.random.default_rng(5)
a = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
b = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
p = [0, 2, 3, 1]
c = rng.standard_normal((2, 4, 2, 3)).astype(np.float32)
cat = np.concatenate([a.transpose(p), c, b.transpose(p)], axis=-2)  # [2, 4, 12, 3]
y = np.maximum(cat, 0).transpose(0, 3, 1, 2)
nodes = [helper.make_node("Transpose", ["a"], ["ta"], perm=p, name="ta"),
         helper.make_node("Transpose", ["b"], ["tb"], perm=p, name="tb"),
         helper.make_node("Concat", ["ta", "c", "tb"], ["cat"], axis=-2, name="cat"),
         helper.make_node("Relu", ["cat"], ["r"], name="relu"),
         helper.make_node("Transpose", ["r"], ["y"], perm=[0, 3, 1, 2], name="back")]
g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("a", T.FLOAT, a.shape),
                                   helper.make_tensor_value_info("b", T.FLOAT, b.shape)],
                      [helper.make_tensor_value_info("y", T.FLOAT, y.shape)],
                      [numpy_helper.from_array(c, "c")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 7
casegen.write_case(os.path.join(HERE, "cases", "transpose_concat_const"), m, [([a, b], [y])])
