#!/usr/bin/python3
"""Writes tests/models/pool_bands/model.onnx and its test data set: SqueezeNet's stem at
119x119: x [1, 3, 119, 119] -> 3x3 Conv stride 2 (3 -> 64) + Relu -> 3x3 MaxPool stride 2
(59 -> 29 rows) -> 1x1 Conv (64 -> 16) + Relu -> y. The convolutions split their output
rows between the threads; the MaxPool (channels x rows, no weights) is split into bands
of its rows like them (passes/parallel.c band()), 29 rows in 10 bands of 3 with a guard
on the last, rather than by its 64 channels (models_pool_bands checks the cross-core
figure of --dump-schedule and the output on two threads). The expected output is
computed with torch, independently of the graph.
usage: /usr/bin/python3 tests/models/make_pool_bands.py"""
import os

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)


def w(name, *shape):
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) / 4, name)


inits = [w("w0", 64, 3, 3, 3), w("b0", 64), w("w1", 16, 64, 1, 1), w("b1", 16)]
nodes = [
    helper.make_node("Conv", ["x", "w0", "b0"], ["c0"], strides=[2, 2], name="stem"),
    helper.make_node("Relu", ["c0"], ["r0"], name="stem_relu"),
    helper.make_node("MaxPool", ["r0"], ["p"], kernel_shape=[3, 3], strides=[2, 2],
                     name="pool"),
    helper.make_node("Conv", ["p", "w1", "b1"], ["c1"], name="squeeze"),
    helper.make_node("Relu", ["c1"], ["y"], name="squeeze_relu"),
]
ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 119, 119])]
outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 29, 29])]
g = helper.make_graph(nodes, "pool_bands", ins, outs, inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(m)
d = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pool_bands")
os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
onnx.save(m, os.path.join(d, "model.onnx"))

x = rng.standard_normal((1, 3, 119, 119)).astype(np.float32)
W = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy()) for t in inits}
with torch.no_grad():
    t = F.relu(F.conv2d(torch.from_numpy(x), W["w0"], W["b0"], stride=2))
    t = F.max_pool2d(t, 3, 2)
    y = F.relu(F.conv2d(t, W["w1"], W["b1"])).numpy()
for name, arr in (("input_0", x), ("output_0", y)):
    with open(os.path.join(d, "test_data_set_0", name + ".pb"), "wb") as f:
        f.write(numpy_helper.from_array(arr, "x" if name == "input_0" else "y").SerializeToString())
