#!/usr/bin/python3
"""Writes tests/models/strided_7x7 (model.onnx and a test data set, the expected outputs
computed with torch, independently of the graph):

  strided_7x7: the head of ResNet's layer4.0, narrowed: x [1, 64, 14, 14] ->
    3x3 Conv stride 2 pad 1 (64 -> 64) + Relu -> y [1, 64, 7, 7] ("conv"), and
    1x1 Conv stride 2 (64 -> 800) -> z [1, 800, 7, 7] ("down"). On x86-64-zen4 (vectors
    on units of half their width) "conv" reads its padding in the kernel (pad=1,
    passes/tile.c conv_pad_inplace_suits) and "down" runs in tiles of 3 vectors by one
    output row of 7 pixels, 800 = 16 x 48 + 32 channels, the last block a partial one
    (pw_strided_row3); on x86-64-avx512 pad=2 and 2 vectors (tests/models/strided_7x7.sh).
usage: /usr/bin/python3 tests/models/make_strided_7x7.py"""
import os

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(17)
here = os.path.dirname(os.path.abspath(__file__))


def w(name, *shape):
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) / 8, name)


inits = [w("wc", 64, 64, 3, 3), w("bc", 64), w("wd", 800, 64, 1, 1), w("bd", 800)]
nodes = [helper.make_node("Conv", ["x", "wc", "bc"], ["c0"], name="conv", kernel_shape=[3, 3],
                          strides=[2, 2], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c0"], ["y"]),
         helper.make_node("Conv", ["x", "wd", "bd"], ["z"], name="down", kernel_shape=[1, 1],
                          strides=[2, 2])]
xshape = [1, 64, 14, 14]
g = helper.make_graph(nodes, "strided_7x7",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, xshape)],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64, 7, 7]),
                       helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 800, 7, 7])],
                      inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(m)
d = os.path.join(here, "strided_7x7")
os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
onnx.save(m, os.path.join(d, "model.onnx"))
x = rng.standard_normal(xshape).astype(np.float32)
W = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy()) for t in inits}
with torch.no_grad():
    tx = torch.from_numpy(x)
    y = F.relu(F.conv2d(tx, W["wc"], W["bc"], stride=2, padding=1)).numpy()
    z = F.conv2d(tx, W["wd"], W["bd"], stride=2).numpy()
for f, arr, n in (("input_0", x, "x"), ("output_0", y, "y"), ("output_1", z, "z")):
    with open(os.path.join(d, "test_data_set_0", f + ".pb"), "wb") as fh:
        fh.write(numpy_helper.from_array(arr, n).SerializeToString())
