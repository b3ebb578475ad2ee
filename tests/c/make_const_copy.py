#!/usr/bin/python3
"""Writes tests/c/const_copy.onnx: a model whose only output is a constant int32 [10]
{-1, 0, -1, 0, 0, 0, 0, 0, 5, 6}, which N.c copies from its weights with memmove. GCC 12.2
with AVX-512 copies it by pieces as -1 0 -1 0 -1 0 -1 0 5 6 unless -mstore-max=128
(docs/generated-c.md); tests/c/test_const_copy.c checks what kiln_add_model() builds."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

v = np.array([-1, 0, -1, 0, 0, 0, 0, 0, 5, 6], dtype=np.int32)
g = helper.make_graph(
    [helper.make_node("Constant", [], ["y"], value=numpy_helper.from_array(v, "v"))],
    "const_copy", [], [helper.make_tensor_value_info("y", TensorProto.INT32, [10])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, os.path.join(os.path.dirname(os.path.abspath(__file__)), "const_copy.onnx"))
