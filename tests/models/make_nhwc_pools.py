#!/usr/bin/python3
"""Writes tests/models/nhwc_pools: the pools of a tf2onnx-style NHWC export, each wrapped
in the Transposes the converter puts around it. An NHWC input, transposed to NCHW, read
by a padded strided MaxPool (transposed back to an NHWC output), an AveragePool without
and one with count_include_pad (ceil_mode: the last window overhangs the padding), the
first through a Relu to an NHWC output, an LpPool (p=2, strided), a GlobalAveragePool
transposed to NHWC and reshaped (a classifier's tail) and a GlobalMaxPool; a second, NCHW
input through a dilated MaxPool to an NHWC output. passes/layout.c folds the Transposes
into the pools (kn.layout; golden layout_pools) but the last: a pool takes a
channels-last output only with a channels-last input.

Expected outputs: numpy in float64 from the ONNX operator definitions (each window's
taps inside the input; the average's divisor counts the taps inside the input, or with
count_include_pad inside the padded input), rounded to float32; checked against ONNX
Runtime when ORT_NODE's onnxruntime-node is installed.
usage: /usr/bin/python3 tests/models/make_nhwc_pools.py"""
import math
import os

import numpy as np
import onnx
from onnx import TensorProto as T, helper

import casegen

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(33)


def pool(x, kind, k, s=(1, 1), pads=(0, 0, 0, 0), d=(1, 1), ceil=False, include_pad=False, p=2):
    """NCHW 2-D pool of x (float64): 'max', 'avg' or 'lp'."""
    n, c, h, w = x.shape
    ins, out = (h, w), []
    for a in range(2):
        ext = (k[a] - 1) * d[a] + 1
        span = ins[a] + pads[a] + pads[2 + a] - ext
        o = (math.ceil(span / s[a]) if ceil else span // s[a]) + 1
        if ceil and (o - 1) * s[a] >= ins[a] + pads[a]:  # a window starting in the end pad
            o -= 1
        out.append(o)
    y = np.zeros((n, c, out[0], out[1]))
    for oy in range(out[0]):
        for ox in range(out[1]):
            taps, padded = [], 0
            for ky in range(k[0]):
                for kx in range(k[1]):
                    iy = oy * s[0] - pads[0] + ky * d[0]
                    ix = ox * s[1] - pads[1] + kx * d[1]
                    if -pads[0] <= iy < h + pads[2] and -pads[1] <= ix < w + pads[3]:
                        padded += 1
                    if 0 <= iy < h and 0 <= ix < w:
                        taps.append(x[:, :, iy, ix])
            t = np.stack(taps, axis=-1)
            if kind == "max":
                y[:, :, oy, ox] = t.max(axis=-1)
            elif kind == "lp":
                y[:, :, oy, ox] = (np.abs(t) ** p).sum(axis=-1) ** (1 / p)
            else:
                y[:, :, oy, ox] = t.sum(axis=-1) / (padded if include_pad else len(taps))
    return y


to_nchw, to_nhwc = [0, 3, 1, 2], [0, 2, 3, 1]
N, H, W, C = 2, 9, 11, 6
x = helper.make_tensor_value_info("x", T.FLOAT, [N, H, W, C])
x2 = helper.make_tensor_value_info("x2", T.FLOAT, [1, 4, 7, 8])
nodes = [
    helper.make_node("Transpose", ["x"], ["t"], perm=to_nchw, name="t_in"),
    helper.make_node("MaxPool", ["t"], ["mp"], kernel_shape=[3, 3], strides=[2, 2],
                     pads=[1, 1, 1, 1], name="maxpool"),
    helper.make_node("Transpose", ["mp"], ["y_max"], perm=to_nhwc, name="t_max"),
    helper.make_node("AveragePool", ["t"], ["ap"], kernel_shape=[3, 2], strides=[2, 1],
                     pads=[1, 0, 1, 1], name="avgpool"),
    helper.make_node("Relu", ["ap"], ["apr"], name="relu"),
    helper.make_node("Transpose", ["apr"], ["y_avg"], perm=to_nhwc, name="t_avg"),
    helper.make_node("AveragePool", ["t"], ["y_avgpad"], kernel_shape=[3, 3], strides=[2, 2],
                     pads=[1, 1, 0, 0], count_include_pad=1, ceil_mode=1, name="avgpool_pad"),
    helper.make_node("LpPool", ["t"], ["y_lp"], kernel_shape=[2, 2], strides=[1, 2], p=2,
                     name="lppool"),
    helper.make_node("GlobalAveragePool", ["t"], ["gap"], name="gap"),
    helper.make_node("Transpose", ["gap"], ["gapt"], perm=to_nhwc, name="t_gap"),
    helper.make_node("Reshape", ["gapt", "flat"], ["y_gap"], name="flatten"),
    helper.make_node("GlobalMaxPool", ["t"], ["y_gmp"], name="gmp"),
    helper.make_node("MaxPool", ["x2"], ["mp2"], kernel_shape=[2, 3], dilations=[1, 2],
                     pads=[0, 1, 1, 0], name="maxpool2"),
    helper.make_node("Transpose", ["mp2"], ["y_max2"], perm=to_nhwc, name="t_max2"),
]
xv = rng.standard_normal((N, H, W, C)).astype(np.float32)
x2v = rng.standard_normal((1, 4, 7, 8)).astype(np.float32)
t = xv.astype(np.float64).transpose(to_nchw)
refs = {
    "y_max": pool(t, "max", (3, 3), (2, 2), (1, 1, 1, 1)).transpose(to_nhwc),
    "y_avg": np.maximum(pool(t, "avg", (3, 2), (2, 1), (1, 0, 1, 1)), 0).transpose(to_nhwc),
    "y_avgpad": pool(t, "avg", (3, 3), (2, 2), (1, 1, 0, 0), ceil=True, include_pad=True),
    "y_lp": pool(t, "lp", (2, 2), (1, 2)),
    "y_gap": t.mean(axis=(2, 3)),
    "y_gmp": t.max(axis=(2, 3), keepdims=True),
    "y_max2": pool(x2v.astype(np.float64), "max", (2, 3), pads=(0, 1, 1, 0),
                   d=(1, 2)).transpose(to_nhwc),
}
outs = [helper.make_tensor_value_info(n, T.FLOAT, list(v.shape)) for n, v in refs.items()]
flat = onnx.numpy_helper.from_array(np.array([N, C], dtype=np.int64), "flat")
g = helper.make_graph(nodes, "nhwc_pools", [x, x2], outs, [flat])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="kiln-tests")
m.ir_version = 7
onnx.checker.check_model(m)
ys = [v.astype(np.float32) for v in refs.values()]
if os.path.isdir(casegen.ORT):
    for name, a, b in zip(refs, casegen.ort_run(m, {"x": xv, "x2": x2v}), ys):
        casegen.check_close(a, b, name)
    print("checked against ONNX Runtime")
casegen.write_case(os.path.join(HERE, "nhwc_pools"), m, [([xv, x2v], ys)])
print("wrote nhwc_pools")
