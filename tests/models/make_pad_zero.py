#!/usr/bin/python3
"""Writes tests/models/pad_zero/model.onnx and its test data set: torch's export of
AvgPool2d over a feature map, x [1, 8, 5, 5] -> Relu -> Pad with all pads 0 (the pads an
input constant, as torch writes it) -> AveragePool 5x5 -> y [1, 8, 1, 1]. A Pad with no
pads lowers to one copy of the whole (ir/lower/tensor.c lower_pad), which the memory plan
turns into shared storage (passes/plan.c copy_alias: golden pad_zero_memory). The
expected output is computed with torch, independently of the graph.
usage: /usr/bin/python3 tests/models/make_pad_zero.py"""
import os

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(5)
pads = numpy_helper.from_array(np.zeros(8, np.int64), "pads")
nodes = [
    helper.make_node("Relu", ["x"], ["r"], name="relu"),
    helper.make_node("Pad", ["r", "pads"], ["p"], mode="constant", name="pad"),
    helper.make_node("AveragePool", ["p"], ["y"], kernel_shape=[5, 5], strides=[5, 5],
                     name="pool"),
]
ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 5, 5])]
outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 1, 1])]
g = helper.make_graph(nodes, "pad_zero", ins, outs, [pads])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(m)
d = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pad_zero")
os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
onnx.save(m, os.path.join(d, "model.onnx"))
x = rng.standard_normal((1, 8, 5, 5)).astype(np.float32)
y = F.avg_pool2d(F.relu(torch.from_numpy(x)), 5, 5).numpy()
for name, a in (("input_0", x), ("output_0", y)):
    t = numpy_helper.from_array(a, "x" if name == "input_0" else "y")
    with open(os.path.join(d, "test_data_set_0", name + ".pb"), "wb") as f:
        f.write(t.SerializeToString())
