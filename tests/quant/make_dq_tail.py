#!/usr/bin/python3
"""Writes tests/quant/models/dq_tail: two per-tensor DequantizeLinear nodes, uint8 x
[1, 3, 3, 3] (27 elements, zero point 131) and int8 u [10] (zero point -7), whose float
outputs are 4 elements a step on microcontrollers with vectors (ir/lower/quant.c; Helium's
C: KN_DQ4FU / KN_DQ4FS) and the last 3 and 2 one at a time. Expected outputs from the
operator definition with numpy: (x - zero point) as int32, times the float32 scale.

    /usr/bin/python3 tests/quant/make_dq_tail.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(27)
x = rng.integers(0, 256, (1, 3, 3, 3), dtype=np.uint8)
u = rng.integers(-128, 128, (10,), dtype=np.int8)
xs, xz, us, uz = np.float32(0.037), np.uint8(131), np.float32(0.5), np.int8(-7)
nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["y"], name="dq_u8"),
         helper.make_node("DequantizeLinear", ["u", "us", "uz"], ["v"], name="dq_s8")]
inits = [numpy_helper.from_array(np.array(a), n) for a, n in ((xs, "xs"), (xz, "xz"), (us, "us"), (uz, "uz"))]
g = helper.make_graph(nodes, "dq_tail",
                      [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 3, 3, 3]),
                       helper.make_tensor_value_info("u", TensorProto.INT8, [10])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 3, 3]),
                       helper.make_tensor_value_info("v", TensorProto.FLOAT, [10])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 7
onnx.checker.check_model(m)
d = os.path.join(HERE, "models", "dq_tail")
os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
onnx.save(m, os.path.join(d, "model.onnx"))
y = (x.astype(np.int32) - np.int32(xz)).astype(np.float32) * xs
v = (u.astype(np.int32) - np.int32(uz)).astype(np.float32) * us
for name, a, k in (("input", x, 0), ("input", u, 1), ("output", y, 0), ("output", v, 1)):
    t = numpy_helper.from_array(a, ["x", "u", "y", "v"][(name == "output") * 2 + k])
    with open(os.path.join(d, "test_data_set_0", f"{name}_{k}.pb"), "wb") as f:
        f.write(t.SerializeToString())
