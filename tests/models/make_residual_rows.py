#!/usr/bin/python3
"""Writes tests/models/residual_rows/model.onnx and its test data set: a MobileNetV2
inverted residual block with the channels of MobileNetV2's 56x56 stage, at 32x32: x [1, 24, 32, 32] -> 1x1 Conv
(24 -> 144) + Clip(0, 6) -> depthwise 3x3 Conv (144, pad 1) + Clip(0, 6) -> 1x1 Conv
(144 -> 24) + x -> y. The layout pass keeps the expanded tensors channels-last, and the
projection (its residual Add fused in its epilogue) runs in the channel tiles of
passes/tile.c pw_channels_last over the 1024 pixels regrouped into 16 rows of 64, the
residual addressed by its flat pixel (epi_flat), so that the parallel pass can split its
rows (models_residual_rows checks the split). The expected output is computed with
torch, independently of the graph.
usage: /usr/bin/python3 tests/models/make_residual_rows.py"""
import os

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(5)


def w(name, *shape):
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) / 4, name)


inits = [w("we", 144, 24, 1, 1), w("be", 144), w("wd", 144, 1, 3, 3), w("bd", 144),
         w("wp", 24, 144, 1, 1), w("bp", 24),
         numpy_helper.from_array(np.array(0, np.float32), "lo"),
         numpy_helper.from_array(np.array(6, np.float32), "hi")]
nodes = [
    helper.make_node("Conv", ["x", "we", "be"], ["e"], name="expand"),
    helper.make_node("Clip", ["e", "lo", "hi"], ["er"], name="expand_relu6"),
    helper.make_node("Conv", ["er", "wd", "bd"], ["d"], group=144, pads=[1, 1, 1, 1],
                     name="depthwise"),
    helper.make_node("Clip", ["d", "lo", "hi"], ["dr"], name="depthwise_relu6"),
    helper.make_node("Conv", ["dr", "wp", "bp"], ["p"], name="project"),
    helper.make_node("Add", ["x", "p"], ["y"], name="residual"),
]
ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 24, 32, 32])]
outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 24, 32, 32])]
g = helper.make_graph(nodes, "residual_rows", ins, outs, inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(m)
d = os.path.join(os.path.dirname(os.path.abspath(__file__)), "residual_rows")
os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
onnx.save(m, os.path.join(d, "model.onnx"))

x = rng.standard_normal((1, 24, 32, 32)).astype(np.float32)
W = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy()) for t in inits}
tx = torch.from_numpy(x)
e = torch.clamp(F.conv2d(tx, W["we"], W["be"]), 0, 6)
dd = torch.clamp(F.conv2d(e, W["wd"], W["bd"], padding=1, groups=144), 0, 6)
y = tx + F.conv2d(dd, W["wp"], W["bp"])
for name, a in (("input_0", x), ("output_0", y.numpy())):
    with open(os.path.join(d, "test_data_set_0", name + ".pb"), "wb") as f:
        f.write(numpy_helper.from_array(a).SerializeToString())
