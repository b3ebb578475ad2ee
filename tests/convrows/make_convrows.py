#!/usr/bin/python3
"""Writes tests/convrows: convolutions with few blocks of output channels that are large
enough to be split, so passes/tile.c gives each output row its own tile scratch and the
parallel pass splits blocks x rows (conv_row_tiles). Three branches from one input:
16 -> 32 channels 3x3 pad 1 + Relu (whole blocks), 16 -> 40 3x3 pad 1 (a partial block
after the whole ones), 16 -> 64 3x3 stride 2 pad 1 plus a residual read at every output
(the epilogue's operand in the transposing loop). References from numpy in float64.
usage: /usr/bin/python3 tests/convrows/make_convrows.py"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(20261204)
H = W = 32
x = rng.uniform(-1, 1, (1, 16, H, W)).astype(np.float32)
res = rng.uniform(-1, 1, (1, 64, 16, 16)).astype(np.float32)


def conv(x, w, b, stride, pad):
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.zeros((n, c, h + 2 * pad, wd + 2 * pad))
    xp[:, :, pad:pad + h, pad:pad + wd] = x
    oh = (h + 2 * pad - kh) // stride + 1
    ow = (wd + 2 * pad - kw) // stride + 1
    y = np.zeros((n, m, oh, ow)) + b.astype(np.float64)[None, :, None, None]
    for i in range(kh):
        for j in range(kw):
            win = xp[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
            y += np.einsum("nchw,mc->nmhw", win, w[:, :, i, j].astype(np.float64))
    return y


inits, nodes, outs, refs = [], [], [], []
for name, m, stride, extra in [("a", 32, 1, "relu"), ("b", 40, 1, None), ("c", 64, 2, "res")]:
    w = rng.uniform(-0.3, 0.3, (m, 16, 3, 3)).astype(np.float32)
    b = rng.uniform(-1, 1, (m,)).astype(np.float32)
    inits += [numpy_helper.from_array(w, "w" + name), numpy_helper.from_array(b, "b" + name)]
    y = conv(x.astype(np.float64), w, b, stride, 1)
    conv_out = "y" + name if extra is None else "c" + name
    nodes.append(helper.make_node("Conv", ["x", "w" + name, "b" + name], [conv_out],
                                  name="conv_" + name, pads=[1, 1, 1, 1], strides=[stride, stride]))
    if extra == "relu":
        nodes.append(helper.make_node("Relu", [conv_out], ["y" + name], name="relu_" + name))
        y = np.maximum(y, 0)
    elif extra == "res":
        nodes.append(helper.make_node("Add", [conv_out, "r"], ["y" + name], name="add_" + name))
        y = y + res
    outs.append(helper.make_tensor_value_info("y" + name, TensorProto.FLOAT, list(y.shape)))
    refs.append(y.astype(np.float32))
ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape)),
       helper.make_tensor_value_info("r", TensorProto.FLOAT, list(res.shape))]
g = helper.make_graph(nodes, "convrows", ins, outs, inits)
model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
onnx.checker.check_model(model)
d = os.path.dirname(os.path.abspath(__file__))
onnx.save(model, os.path.join(d, "model.onnx"))
t = os.path.join(d, "test_data_set_0")
os.makedirs(t, exist_ok=True)
for i, (nm, v) in enumerate([("x", x), ("r", res)]):
    with open(os.path.join(t, "input_%d.pb" % i), "wb") as f:
        f.write(numpy_helper.from_array(v, nm).SerializeToString())
for i, v in enumerate(refs):
    with open(os.path.join(t, "output_%d.pb" % i), "wb") as f:
        f.write(numpy_helper.from_array(v, "y" + "abc"[i]).SerializeToString())
