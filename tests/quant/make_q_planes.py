#!/usr/bin/python3
"""Writes tests/quant/models/q_planes: a per-tensor QuantizeLinear of f32 x [1, 3, 4, 6] to
uint8 (scale 0.05, zero point 131). On microcontrollers its 4-element steps run in a loop
over the 3 planes of 4 x 6 and one over a plane's 6 steps (ir/lower/quant.c quant_steps:
each access inside its plane, so that a band of rows can be quantized in place in its
parent, passes/views.c). Values from -12 to 12 (both saturation ends) with exact halves.
Expected output from the operator definition with numpy: saturate(rint(x / scale) + zero
point), rint rounding half to even, the division in float32.

    /usr/bin/python3 tests/quant/make_q_planes.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(72)
x = rng.uniform(-12, 12, (1, 3, 4, 6)).astype(np.float32)
x.reshape(-1)[:8] = np.float32([0.025, 0.075, -0.025, -0.125, 2.5, -6.55, 12.0, -12.0])
s, z = np.float32(0.05), np.uint8(131)
node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="q")
inits = [numpy_helper.from_array(np.array(s), "s"), numpy_helper.from_array(np.array(z), "z")]
g = helper.make_graph([node], "q_planes",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 6])],
                      [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, 3, 4, 6])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 7
onnx.checker.check_model(m)
d = os.path.join(HERE, "models", "q_planes")
os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
onnx.save(m, os.path.join(d, "model.onnx"))
y = np.clip(np.rint(x / s) + np.float32(z), 0, 255).astype(np.uint8)
for fn, name, a in (("input_0", "x", x), ("output_0", "y", y)):
    with open(os.path.join(d, "test_data_set_0", fn + ".pb"), "wb") as f:
        f.write(numpy_helper.from_array(a, name).SerializeToString())
