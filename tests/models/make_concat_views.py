#!/usr/bin/python3
"""Writes tests/models/concat_views/model.onnx and its test data set: a SqueezeNet fire module, x [1, 4, 8, 8] ->
squeeze 1x1 Conv (4 -> 4) + Relu -> expand 1x1 Conv (4 -> 8) + Relu and expand 3x3 Conv
(4 -> 8, pad 1) + Relu -> Concat along the channels with x itself -> MaxPool 2x2 -> y
[1, 20, 4, 4]; and z = c * c of c = Concat(Relu(u), Sigmoid(u)), u [1, 1, 5, 5] (25 floats:
the second part would start 100 bytes in, off the 64-byte alignment). The memory plan (passes/plan.c, concat_views)
places both expand outputs in their parts of y (no copy; the copy of the graph input x
stays), places Relu(u) at the start of c and keeps the copy of Sigmoid(u), and on
microcontrollers keeps every copy (golden concat_views_*). The expected outputs are
computed with torch, independently of the graph.
usage: /usr/bin/python3 tests/models/make_concat_views.py"""
import os

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(3)


def w(name, *shape):
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) / 4, name)


inits = [w("ws", 4, 4, 1, 1), w("we1", 8, 4, 1, 1), w("we3", 8, 4, 3, 3)]
nodes = [
    helper.make_node("Conv", ["x", "ws"], ["s"], name="squeeze"),
    helper.make_node("Relu", ["s"], ["sr"], name="squeeze_relu"),
    helper.make_node("Conv", ["sr", "we1"], ["e1"], name="expand1x1"),
    helper.make_node("Relu", ["e1"], ["e1r"], name="expand1x1_relu"),
    helper.make_node("Conv", ["sr", "we3"], ["e3"], pads=[1, 1, 1, 1], name="expand3x3"),
    helper.make_node("Relu", ["e3"], ["e3r"], name="expand3x3_relu"),
    helper.make_node("Concat", ["e1r", "e3r", "x"], ["c"], axis=1, name="fire_concat"),
    helper.make_node("MaxPool", ["c"], ["y"], kernel_shape=[2, 2], strides=[2, 2], name="pool"),
    helper.make_node("Relu", ["u"], ["ur"], name="u_relu"),
    helper.make_node("Sigmoid", ["u"], ["us"], name="u_sigmoid"),
    helper.make_node("Concat", ["ur", "us"], ["zc"], axis=1, name="unaligned_concat"),
    helper.make_node("Mul", ["zc", "zc"], ["z"], name="square"),
]
ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8]),
       helper.make_tensor_value_info("u", TensorProto.FLOAT, [1, 1, 5, 5])]
outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 20, 4, 4]),
        helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 2, 5, 5])]
g = helper.make_graph(nodes, "concat_views", ins, outs, inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(m)
d = os.path.join(os.path.dirname(os.path.abspath(__file__)), "concat_views")
os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
onnx.save(m, os.path.join(d, "model.onnx"))

x = rng.standard_normal((1, 4, 8, 8)).astype(np.float32)
u = rng.standard_normal((1, 1, 5, 5)).astype(np.float32)
W = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy()) for t in inits}
tx, tu = torch.from_numpy(x), torch.from_numpy(u)
sr = F.relu(F.conv2d(tx, W["ws"]))
c = torch.cat([F.relu(F.conv2d(sr, W["we1"])), F.relu(F.conv2d(sr, W["we3"], padding=1)), tx], 1)
y = F.max_pool2d(c, 2, 2)
zc = torch.cat([F.relu(tu), torch.sigmoid(tu)], 1)
z = zc * zc
for name, a in (("input_0", x), ("input_1", u), ("output_0", y.numpy()), ("output_1", z.numpy())):
    with open(os.path.join(d, "test_data_set_0", name + ".pb"), "wb") as f:
        f.write(numpy_helper.from_array(a).SerializeToString())
