#!/usr/bin/python3
"""Writes tests/cli/mm_tiles.onnx: three MatMuls of an input by constant matrices, the
shapes passes/tile.c's kt_widen decides between on a 32-register AVX-512 target:
a [48, 64] x [64, 256] product (6 rows x 4 vectors: 24 multiply-adds per 10 loads, where
8 x 2 made 16), [48, 64] x [64, 160] (8 x 2: 160 columns are 2 blocks of 64 and a partial
one of 32, or 3 of 48 and one of 16, where 8 x 2 has 5 whole blocks) and [16, 64] x [64,
256] (8 x 2: 16 rows are fewer than 4 tiles of 6).
usage: /usr/bin/python3 tests/cli/make_mm_tiles.py"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(16)


def arr(name, *shape):
    return numpy_helper.from_array(rng.uniform(-1, 1, shape).astype(np.float32), name)


inits = [arr("b1", 64, 256), arr("b2", 64, 160), arr("b3", 64, 256)]
nodes = [
    helper.make_node("MatMul", ["x", "b1"], ["y1"], name="wide"),
    helper.make_node("MatMul", ["x", "b2"], ["y2"], name="partial"),
    helper.make_node("MatMul", ["z", "b3"], ["y3"], name="few_rows"),
]
ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [48, 64]),
       helper.make_tensor_value_info("z", TensorProto.FLOAT, [16, 64])]
outs = [helper.make_tensor_value_info("y1", TensorProto.FLOAT, [48, 256]),
        helper.make_tensor_value_info("y2", TensorProto.FLOAT, [48, 160]),
        helper.make_tensor_value_info("y3", TensorProto.FLOAT, [16, 256])]
g = helper.make_graph(nodes, "mm_tiles", ins, outs, inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(m)
onnx.save(m, os.path.join(os.path.dirname(os.path.abspath(__file__)), "mm_tiles.onnx"))
