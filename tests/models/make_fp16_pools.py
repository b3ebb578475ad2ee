#!/usr/bin/python3
"""Writes tests/models/fp16_pools: the pools of a float16 export. A tf2onnx-style NHWC
input x, transposed to NCHW, read by a padded strided MaxPool, an AveragePool (through
Relu) and a GlobalLpPool (p=1), each transposed back to an NHWC output, an AveragePool
with count_include_pad and ceil_mode, an LpPool (p=2), a GlobalAveragePool transposed
and reshaped (a classifier's tail) and a GlobalMaxPool; passes/layout.c folds the
Transposes into the pools as it does in float32 (nhwc_pools). A second, NCHW input x2
holds large values (1000 to 1669, all different) whose window sums and squares leave
float16's range (65504): a MaxPool with its Indices, a dilated AveragePool, an LpPool
(p=2), a GlobalAveragePool and a GlobalLpPool (p=2) must accumulate in float32, as kiln
does for float16 everywhere (docs/decisions.md), to give finite results.

Expected outputs: numpy in float64 from the float16 inputs and the ONNX operator
definitions (each window's taps inside the input; the average's divisor counts the taps
inside the input, or with count_include_pad inside the padded input), rounded to float16
once per output (the float16 rule of docs/models.md); checked against ONNX Runtime when
ORT_NODE's onnxruntime-node is installed and has the float16 kernel.
usage: /usr/bin/python3 tests/models/make_fp16_pools.py"""
import math
import os

import numpy as np
import onnx
from onnx import TensorProto as T, helper

import casegen

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(35)


def pool(x, kind, k, s=(1, 1), pads=(0, 0, 0, 0), d=(1, 1), ceil=False, include_pad=False, p=2):
    """NCHW 2-D pool of x (float64): 'max', 'avg' or 'lp'; for 'max' also the flat NCHW
    index of the first maximum of each window."""
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
    idx = np.zeros((n, c, out[0], out[1]), dtype=np.int64)
    base = (np.arange(n)[:, None] * c + np.arange(c)[None, :]) * h * w
    for oy in range(out[0]):
        for ox in range(out[1]):
            taps, flat, padded = [], [], 0
            for ky in range(k[0]):
                for kx in range(k[1]):
                    iy = oy * s[0] - pads[0] + ky * d[0]
                    ix = ox * s[1] - pads[1] + kx * d[1]
                    if -pads[0] <= iy < h + pads[2] and -pads[1] <= ix < w + pads[3]:
                        padded += 1
                    if 0 <= iy < h and 0 <= ix < w:
                        taps.append(x[:, :, iy, ix])
                        flat.append(iy * w + ix)
            t = np.stack(taps, axis=-1)
            if kind == "max":
                y[:, :, oy, ox] = t.max(axis=-1)
                idx[:, :, oy, ox] = base + np.array(flat)[t.argmax(axis=-1)]
            elif kind == "lp":
                y[:, :, oy, ox] = (np.abs(t) ** p).sum(axis=-1) ** (1 / p)
            else:
                y[:, :, oy, ox] = t.sum(axis=-1) / (padded if include_pad else len(taps))
    return (y, idx) if kind == "max" else y


to_nchw, to_nhwc = [0, 3, 1, 2], [0, 2, 3, 1]
N, H, W, C = 2, 9, 11, 6
x = helper.make_tensor_value_info("x", T.FLOAT16, [N, H, W, C])
x2 = helper.make_tensor_value_info("x2", T.FLOAT16, [1, 4, 7, 8])
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
    helper.make_node("GlobalLpPool", ["t"], ["glp"], p=1, name="glp"),
    helper.make_node("Transpose", ["glp"], ["y_glp"], perm=to_nhwc, name="t_glp"),
    helper.make_node("MaxPool", ["x2"], ["y2_max", "y2_idx"], kernel_shape=[2, 3],
                     pads=[0, 1, 1, 1], name="maxpool2"),
    helper.make_node("AveragePool", ["x2"], ["y2_avg"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                     strides=[1, 2], name="avgpool2"),
    helper.make_node("LpPool", ["x2"], ["y2_lp"], kernel_shape=[2, 2], p=2, name="lppool2"),
    helper.make_node("GlobalAveragePool", ["x2"], ["y2_gap"], name="gap2"),
    helper.make_node("GlobalLpPool", ["x2"], ["y2_glp"], p=2, name="glp2"),
]
xv = (rng.standard_normal((N, H, W, C)) * 3).astype(np.float16)
x2v = (1000 + 3 * rng.permutation(224)).reshape(1, 4, 7, 8).astype(np.float16)
t = xv.astype(np.float64).transpose(to_nchw)
t2 = x2v.astype(np.float64)
mp2, mp2_idx = pool(t2, "max", (2, 3), pads=(0, 1, 1, 1))
refs = {
    "y_max": pool(t, "max", (3, 3), (2, 2), (1, 1, 1, 1))[0].transpose(to_nhwc),
    "y_avg": np.maximum(pool(t, "avg", (3, 2), (2, 1), (1, 0, 1, 1)), 0).transpose(to_nhwc),
    "y_avgpad": pool(t, "avg", (3, 3), (2, 2), (1, 1, 0, 0), ceil=True, include_pad=True),
    "y_lp": pool(t, "lp", (2, 2), (1, 2)),
    "y_gap": t.mean(axis=(2, 3)),
    "y_gmp": t.max(axis=(2, 3), keepdims=True),
    "y_glp": np.abs(t).sum(axis=(2, 3), keepdims=True).transpose(to_nhwc),
    "y2_max": mp2,
    "y2_idx": mp2_idx,
    "y2_avg": pool(t2, "avg", (3, 3), (1, 2), (1, 1, 1, 1)),
    "y2_lp": pool(t2, "lp", (2, 2)),
    "y2_gap": t2.mean(axis=(2, 3), keepdims=True),
    "y2_glp": np.sqrt((t2 ** 2).sum(axis=(2, 3), keepdims=True)),
}
ys = [v if v.dtype == np.int64 else v.astype(np.float16) for v in refs.values()]
for name, v in zip(refs, ys):
    assert np.all(np.isfinite(v.astype(np.float64))), name
outs = [helper.make_tensor_value_info(n, T.INT64 if v.dtype == np.int64 else T.FLOAT16,
                                      list(v.shape)) for n, v in zip(refs, ys)]
flat = onnx.numpy_helper.from_array(np.array([N, C], dtype=np.int64), "flat")
g = helper.make_graph(nodes, "fp16_pools", [x, x2], outs, [flat])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="kiln-tests")
m.ir_version = 7
onnx.checker.check_model(m)
if os.path.isdir(casegen.ORT):
    try:
        got = casegen.ort_run(m, {"x": xv, "x2": x2v})
    except Exception as e:  # noqa: BLE001 (a float16 kernel ONNX Runtime lacks)
        print("not checked against ONNX Runtime:", e)
    else:
        for name, a, b in zip(refs, got, ys):
            casegen.check_close(a, b, name, rtol=2e-3)
        print("checked against ONNX Runtime")
casegen.write_case(os.path.join(HERE, "fp16_pools"), m, [([xv, x2v], ys)])
print("wrote fp16_pools")
