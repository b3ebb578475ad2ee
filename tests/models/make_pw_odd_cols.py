#!/usr/bin/python3
"""Writes tests/models/pw_odd_cols (model.onnx and a test data set, the expected output
computed with torch, independently of the graph):

  pw_odd_cols: an EfficientNet-B0 MBConv block at 14x14, narrowed: x [1, 16, 14, 14] ->
    1x1 Conv (16 -> 96) + SiLU -> 3x3 depthwise Conv pad 1 + SiLU -> squeeze and excite
    (GlobalAveragePool -> 1x1 Conv 96 -> 8 + SiLU -> 1x1 Conv 8 -> 96 + Sigmoid, times
    the depthwise output) -> 1x1 Conv (96 -> 80) -> y [1, 80, 14, 14]. The projection's
    80 output channels are 5 vectors of 16: on x86-64-avx512 its tiles hold one vector,
    not two with a partial block of one (passes/tile.c pw_odd_cols;
    tests/models/pw_odd_cols.sh).
usage: /usr/bin/python3 tests/models/make_pw_odd_cols.py"""
import os

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(16)
here = os.path.dirname(os.path.abspath(__file__))


def w(name, *shape):
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) / 4, name)


inits = [w("we", 96, 16, 1, 1), w("be", 96), w("wd", 96, 1, 3, 3), w("bd", 96),
         w("ws1", 8, 96, 1, 1), w("bs1", 8), w("ws2", 96, 8, 1, 1), w("bs2", 96),
         w("wp", 80, 96, 1, 1), w("bp", 80)]
nodes = [helper.make_node("Conv", ["x", "we", "be"], ["e0"], name="expand"),
         helper.make_node("Sigmoid", ["e0"], ["e1"]),
         helper.make_node("Mul", ["e0", "e1"], ["e"]),
         helper.make_node("Conv", ["e", "wd", "bd"], ["d0"], name="dw", group=96,
                          kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         helper.make_node("Sigmoid", ["d0"], ["d1"]),
         helper.make_node("Mul", ["d0", "d1"], ["d"]),
         helper.make_node("GlobalAveragePool", ["d"], ["g"], name="squeeze"),
         helper.make_node("Conv", ["g", "ws1", "bs1"], ["s0"], name="fc1"),
         helper.make_node("Sigmoid", ["s0"], ["s1"]),
         helper.make_node("Mul", ["s0", "s1"], ["s2"]),
         helper.make_node("Conv", ["s2", "ws2", "bs2"], ["s3"], name="fc2"),
         helper.make_node("Sigmoid", ["s3"], ["s4"]),
         helper.make_node("Mul", ["d", "s4"], ["ds"], name="scale"),
         helper.make_node("Conv", ["ds", "wp", "bp"], ["y"], name="project")]
xshape, yshape = [1, 16, 14, 14], [1, 80, 14, 14]
g = helper.make_graph(nodes, "pw_odd_cols",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, xshape)],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, yshape)], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(m)
d = os.path.join(here, "pw_odd_cols")
os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
onnx.save(m, os.path.join(d, "model.onnx"))
x = rng.standard_normal(xshape).astype(np.float32)
W = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy()) for t in inits}
with torch.no_grad():
    e = F.silu(F.conv2d(torch.from_numpy(x), W["we"], W["be"]))
    dd = F.silu(F.conv2d(e, W["wd"], W["bd"], padding=1, groups=96))
    gg = dd.mean(dim=(2, 3), keepdim=True)
    s = torch.sigmoid(F.conv2d(F.silu(F.conv2d(gg, W["ws1"], W["bs1"])), W["ws2"], W["bs2"]))
    y = F.conv2d(dd * s, W["wp"], W["bp"]).numpy()
for f, arr, n in (("input_0", x, "x"), ("output_0", y, "y")):
    with open(os.path.join(d, "test_data_set_0", f + ".pb"), "wb") as fh:
        fh.write(numpy_helper.from_array(arr, n).SerializeToString())
