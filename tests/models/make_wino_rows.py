#!/usr/bin/python3
"""Writes tests/models/wino_rows/model.onnx and its test data set: two 3x3 convolutions of
32 channels at 32x32 (pad 1) with a Relu between: x [1, 32, 32, 32] -> Conv + Relu -> Conv
-> y. Each runs as Winograd F(4x4, 3x3) over 64 tiles (passes/winograd.c); its 36
products (147 KB of transformed weights) are split by halves of the tiles, as the input
and output transforms split by tile rows, not by the 36 transform positions
(passes/tile.c kt_batched_const; models_wino_rows checks the cross-core figure of
--dump-schedule and the output on two threads). The expected output is computed with
torch, independently of the graph.
usage: /usr/bin/python3 tests/models/make_wino_rows.py"""
import os

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(13)


def w(name, *shape):
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) / 8, name)


inits = [w("w0", 32, 32, 3, 3), w("b0", 32), w("w1", 32, 32, 3, 3), w("b1", 32)]
nodes = [
    helper.make_node("Conv", ["x", "w0", "b0"], ["c0"], pads=[1, 1, 1, 1], name="conv0"),
    helper.make_node("Relu", ["c0"], ["r0"], name="relu0"),
    helper.make_node("Conv", ["r0", "w1", "b1"], ["y"], pads=[1, 1, 1, 1], name="conv1"),
]
ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, 32, 32])]
outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32, 32, 32])]
g = helper.make_graph(nodes, "wino_rows", ins, outs, inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(m)
d = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wino_rows")
os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
onnx.save(m, os.path.join(d, "model.onnx"))

x = rng.standard_normal((1, 32, 32, 32)).astype(np.float32)
W = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy()) for t in inits}
with torch.no_grad():
    t = F.relu(F.conv2d(torch.from_numpy(x), W["w0"], W["b0"], padding=1))
    y = F.conv2d(t, W["w1"], W["b1"], padding=1).numpy()
for name, arr in (("input_0", x), ("output_0", y)):
    with open(os.path.join(d, "test_data_set_0", name + ".pb"), "wb") as f:
        f.write(numpy_helper.from_array(arr, "x" if name == "input_0" else "y").SerializeToString())
