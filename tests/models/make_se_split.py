#!/usr/bin/python3
"""Writes tests/models/se_split/model.onnx and its test data set: EfficientNet-B0's
features.2.0 MBConv block at 40x40: x [1, 24, 40, 40] -> 1x1 Conv (24 -> 144) + SiLU ->
depthwise 3x3 Conv (144, pad 1) + SiLU -> squeeze-and-excite (GlobalAveragePool, 1x1 Conv
144 -> 6 + SiLU, 1x1 Conv 6 -> 144, Sigmoid) -> Mul by the scale -> 1x1 Conv (144 -> 24)
-> y. The Mul reads the depthwise output, split between the threads, and the 144 scales,
computed on the calling thread: passes/parallel.c sources_split looks past so small an
operand, so the Mul is split too (models_se_split checks its tasks and the output on two
threads). The expected output is computed with torch, independently of the graph.
usage: /usr/bin/python3 tests/models/make_se_split.py"""
import os

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(11)


def w(name, *shape):
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) / 4, name)


inits = [w("we", 144, 24, 1, 1), w("be", 144), w("wd", 144, 1, 3, 3), w("bd", 144),
         w("ws", 6, 144, 1, 1), w("bs", 6), w("wx", 144, 6, 1, 1), w("bx", 144),
         w("wp", 24, 144, 1, 1), w("bp", 24)]


def silu(x, name):
    return [helper.make_node("Sigmoid", [x], [x + "_sig"], name=name + "_sigmoid"),
            helper.make_node("Mul", [x, x + "_sig"], [x + "_silu"], name=name + "_silu")]


nodes = [helper.make_node("Conv", ["x", "we", "be"], ["e"], name="expand")] + silu("e", "expand")
nodes += [helper.make_node("Conv", ["e_silu", "wd", "bd"], ["d"], group=144, pads=[1, 1, 1, 1],
                           name="depthwise")] + silu("d", "depthwise")
nodes += [helper.make_node("GlobalAveragePool", ["d_silu"], ["g"], name="pool"),
          helper.make_node("Conv", ["g", "ws", "bs"], ["s"], name="squeeze")] + silu("s", "squeeze")
nodes += [helper.make_node("Conv", ["s_silu", "wx", "bx"], ["x2"], name="excite"),
          helper.make_node("Sigmoid", ["x2"], ["scale"], name="excite_sigmoid"),
          helper.make_node("Mul", ["d_silu", "scale"], ["m"], name="se_scale"),
          helper.make_node("Conv", ["m", "wp", "bp"], ["y"], name="project")]
ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 24, 40, 40])]
outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 24, 40, 40])]
g = helper.make_graph(nodes, "se_split", ins, outs, inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(m)
d = os.path.join(os.path.dirname(os.path.abspath(__file__)), "se_split")
os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
onnx.save(m, os.path.join(d, "model.onnx"))

x = rng.standard_normal((1, 24, 40, 40)).astype(np.float32)
W = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy()) for t in inits}
with torch.no_grad():
    t = F.silu(F.conv2d(torch.from_numpy(x), W["we"], W["be"]))
    t = F.silu(F.conv2d(t, W["wd"], W["bd"], padding=1, groups=144))
    s = F.silu(F.conv2d(t.mean((2, 3), keepdim=True), W["ws"], W["bs"]))
    s = torch.sigmoid(F.conv2d(s, W["wx"], W["bx"]))
    y = F.conv2d(t * s, W["wp"], W["bp"]).numpy()
for name, arr in (("input_0", x), ("output_0", y)):
    with open(os.path.join(d, "test_data_set_0", name + ".pb"), "wb") as f:
        f.write(numpy_helper.from_array(arr, "x" if name == "input_0" else "y").SerializeToString())
