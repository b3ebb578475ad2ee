#!/usr/bin/python3
"""Writes tests/models/dw_odd_rows_se (model.onnx and a test data set, the expected outputs
computed with torch, independently of the graph):

  dw_odd_rows_se: EfficientNet-B0's features.6.0 block, narrowed: x [1, 24, 14, 14] ->
    1x1 Conv (24 -> 672) + SiLU -> 5x5 depthwise Conv stride 2 pad 2 + SiLU -> squeeze
    and excite (GlobalAveragePool -> 1x1 Conv 672 -> 8 + SiLU -> 1x1 Conv 8 -> 672 +
    Sigmoid, times the depthwise output) -> 1x1 Conv (672 -> 8) -> y [1, 8, 7, 7]; the
    squeeze's means are a second output g [1, 672, 1, 1]. At 2 threads the depthwise
    kernel, which computes the squeeze, runs in 7 bands of one output row with each
    tile's sum kept and added after the bands (passes/depthwise.c dwc_odd_rows_banded,
    dwc_pool_tiles), not by channel blocks (tests/models/dw_odd_rows_se.sh).
usage: /usr/bin/python3 tests/models/make_dw_odd_rows_se.py"""
import os

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(12)
here = os.path.dirname(os.path.abspath(__file__))


def w(name, *shape):
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) / 4, name)


inits = [w("we", 672, 24, 1, 1), w("be", 672), w("wd", 672, 1, 5, 5), w("bd", 672),
         w("ws1", 8, 672, 1, 1), w("bs1", 8), w("ws2", 672, 8, 1, 1), w("bs2", 672),
         w("wp", 8, 672, 1, 1), w("bp", 8)]
nodes = [helper.make_node("Conv", ["x", "we", "be"], ["e0"], name="expand"),
         helper.make_node("Sigmoid", ["e0"], ["e1"]),
         helper.make_node("Mul", ["e0", "e1"], ["e"]),
         helper.make_node("Conv", ["e", "wd", "bd"], ["d0"], name="dw", group=672,
                          kernel_shape=[5, 5], pads=[2, 2, 2, 2], strides=[2, 2]),
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
xshape, yshape, gshape = [1, 24, 14, 14], [1, 8, 7, 7], [1, 672, 1, 1]
g = helper.make_graph(nodes, "dw_odd_rows_se",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, xshape)],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, yshape),
                       helper.make_tensor_value_info("g", TensorProto.FLOAT, gshape)], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(m)
d = os.path.join(here, "dw_odd_rows_se")
os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
onnx.save(m, os.path.join(d, "model.onnx"))
x = rng.standard_normal(xshape).astype(np.float32)
W = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy()) for t in inits}
with torch.no_grad():
    e = F.silu(F.conv2d(torch.from_numpy(x), W["we"], W["be"]))
    dd = F.silu(F.conv2d(e, W["wd"], W["bd"], stride=2, padding=2, groups=672))
    gg = dd.mean(dim=(2, 3), keepdim=True)
    s = torch.sigmoid(F.conv2d(F.silu(F.conv2d(gg, W["ws1"], W["bs1"])), W["ws2"], W["bs2"]))
    y = F.conv2d(dd * s, W["wp"], W["bp"]).numpy()
for f, arr, n in (("input_0", x, "x"), ("output_0", y, "y"), ("output_1", gg.numpy(), "g")):
    with open(os.path.join(d, "test_data_set_0", f + ".pb"), "wb") as fh:
        fh.write(numpy_helper.from_array(arr, n).SerializeToString())
