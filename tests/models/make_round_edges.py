#!/usr/bin/python3
"""Writes tests/models/round_edges: ONNX Round (half to even) on the f32 values where a
rounding without libm can go wrong (the C printer's kn_rintf, codegen/c/cprint.c: |x| +
2^23 - 2^23 with the sign put back): ties on both sides of 0, the largest ties below
2^23, values at and above 2^23 (already integers), infinities, NaN, signed zeros, the
neighbours of 0.5 and a subnormal. Expected output: numpy's rint (half to even).

    /usr/bin/python3 tests/models/make_round_edges.py
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import gen_common as gc  # noqa: E402

x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 4194303.5, 4194304.5, 8388607.5, -8388607.5,
              8388608.0, -8388609.0, 16777216.0, 1e30, -1e30, np.inf, -np.inf, np.nan, 0.0, -0.0,
              np.nextafter(np.float32(0.5), np.float32(0)), np.nextafter(np.float32(0.5), np.float32(1)),
              -np.nextafter(np.float32(0.5), np.float32(0)), 1e-45, -1e-45, 3.4999998, 7.5],
             np.float32)
y = np.rint(x).astype(np.float32)
node = helper.make_node("Round", ["x"], ["y"], name="round")
g = helper.make_graph([node], "round_edges",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(y.shape))])
gc.write_case(os.path.join(HERE, "round_edges"), gc.model(g, opset=13, ir_version=7),
              [("x", x)], [("y", y)])
