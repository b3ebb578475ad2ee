#!/usr/bin/python3
"""Writes tests/winograd_pf/model.onnx and test_data_set_0: a 3x3 stride-1 convolution
whose Winograd products are big enough for their packed U to be prefetched a block ahead
across the products (passes/tile.c, kt_batched_const: mm_bpf with mm_geom.bnext), with the
output computed by numpy in float64 (rounded to float32) from the same weights:

  y = Relu(Conv p1 (x) + b)    128 -> 256 channels, 10x10: F(2x2) gives 16 products of
                               25 tiles x 128 x 256 (U 2 MB, past x86-64-avx512's 1 MB L2:
                               the three passes; 128 KB a product, 8 blocks of 32 columns)

Inputs are uniform in [-1, 1], weights scaled by 1/sqrt(9 cin) as a trained network's
are. usage: /usr/bin/python3 tests/winograd_pf/make_winograd_pf.py"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import gen_common as gc  # noqa: E402

rng = np.random.default_rng(23)
C, CO, H, W = 128, 256, 10, 10
x = rng.uniform(-1, 1, (1, C, H, W)).astype(np.float32)
w = (rng.uniform(-1, 1, (CO, C, 3, 3)) * np.sqrt(3.0 / (9 * C))).astype(np.float32)
b = rng.uniform(-1, 1, CO).astype(np.float32)
xp = np.pad(x[0].astype(np.float64), ((0, 0), (1, 1), (1, 1)))
acc = np.zeros((CO, H, W))
for i in range(3):
    for j in range(3):
        acc += np.einsum("oc,chw->ohw", w[:, :, i, j].astype(np.float64), xp[:, i:i + H, j:j + W])
y = np.maximum(acc + b.astype(np.float64)[:, None, None], 0)[None].astype(np.float32)
g = helper.make_graph(
    [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="c", pads=[1, 1, 1, 1]),
     helper.make_node("Relu", ["c"], ["y"])], "winograd_pf",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C, H, W])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, CO, H, W])],
    [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
gc.write_case(HERE, gc.model(g, opset=13, ir_version=8), [("x", x)], [("y", y)])
