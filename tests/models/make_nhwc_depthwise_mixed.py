#!/usr/bin/python3
"""Writes tests/models/nhwc_depthwise_mixed: depthwise convolutions of a tf2onnx-style
export that read an NHWC input (through the converter's Transpose to NCHW) and whose
results stay channels-first. passes/layout.c folds the input Transpose into those where
passes/depthwise.c would stage a padded copy anyway: a strided Conv with bias and Relu,
a strided dilated one, and a 5x5 Conv on 9-column rows with a residual Add of a second,
NCHW input (the epilogue operand read channels-first); the 3x3 Conv on 24-column rows
of a third input keeps its Transpose (golden layout_depthwise_mixed; the measurements
are in docs/decisions.md).

Expected outputs: numpy in float64 from the ONNX Conv definition, rounded to float32;
checked against ONNX Runtime when ORT_NODE's onnxruntime-node is installed.
usage: /usr/bin/python3 tests/models/make_nhwc_depthwise_mixed.py"""
import os

import numpy as np
import onnx
from onnx import TensorProto as T, helper, numpy_helper

import casegen

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(36)


def dwconv(x, w, b=None, s=(1, 1), pads=(0, 0, 0, 0), d=(1, 1)):
    """Depthwise 2-D convolution of NCHW x (float64) with w [C,1,kh,kw]."""
    n, c, h, wd = x.shape
    kh, kw = w.shape[2:]
    xp = np.pad(x, [(0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])])
    oh = (h + pads[0] + pads[2] - ((kh - 1) * d[0] + 1)) // s[0] + 1
    ow = (wd + pads[1] + pads[3] - ((kw - 1) * d[1] + 1)) // s[1] + 1
    y = np.zeros((n, c, oh, ow))
    for ky in range(kh):
        for kx in range(kw):
            tap = xp[:, :, ky * d[0]:ky * d[0] + (oh - 1) * s[0] + 1:s[0],
                     kx * d[1]:kx * d[1] + (ow - 1) * s[1] + 1:s[1]]
            y += tap * w[:, 0, ky, kx].reshape(1, c, 1, 1)
    if b is not None:
        y += b.reshape(1, c, 1, 1)
    return y


to_nchw = [0, 3, 1, 2]
N, H, W, C = 2, 10, 9, 16
C3, H3, W3 = 8, 6, 24
f = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
w1, b1, w2 = f(C, 1, 3, 3), f(C), f(C, 1, 3, 3)
w3, b3 = f(C, 1, 5, 5) * np.float32(0.2), f(C)
w4, b4 = f(C3, 1, 3, 3), f(C3)
inits = [numpy_helper.from_array(a, n) for a, n in
         ((w1, "w1"), (b1, "b1"), (w2, "w2"), (w3, "w3"), (b3, "b3"), (w4, "w4"), (b4, "b4"))]
x = helper.make_tensor_value_info("x", T.FLOAT, [N, H, W, C])
x2 = helper.make_tensor_value_info("x2", T.FLOAT, [N, C, H, W])
x3 = helper.make_tensor_value_info("x3", T.FLOAT, [1, H3, W3, C3])
nodes = [
    helper.make_node("Transpose", ["x"], ["t"], perm=to_nchw, name="t_in"),
    helper.make_node("Conv", ["t", "w1", "b1"], ["c1"], group=C, kernel_shape=[3, 3],
                     strides=[2, 2], pads=[1, 1, 1, 1], name="dw_s2"),
    helper.make_node("Relu", ["c1"], ["y1"], name="relu"),
    helper.make_node("Conv", ["t", "w2"], ["y2"], group=C, kernel_shape=[3, 3], strides=[2, 2],
                     dilations=[2, 2], pads=[2, 1, 1, 2], name="dw_s2_dilated"),
    helper.make_node("Conv", ["t", "w3", "b3"], ["c3"], group=C, kernel_shape=[5, 5],
                     pads=[2, 2, 2, 2], name="dw_k5"),
    helper.make_node("Add", ["c3", "x2"], ["y3"], name="residual"),
    helper.make_node("Transpose", ["x3"], ["t3"], perm=to_nchw, name="t_in3"),
    helper.make_node("Conv", ["t3", "w4", "b4"], ["y4"], group=C3, kernel_shape=[3, 3],
                     pads=[1, 1, 1, 1], name="dw_wide"),
]
xv, x2v, x3v = f(N, H, W, C), f(N, C, H, W), f(1, H3, W3, C3)
t = xv.astype(np.float64).transpose(to_nchw)
f64 = lambda a: a.astype(np.float64)  # noqa: E731
refs = {
    "y1": np.maximum(dwconv(t, f64(w1), f64(b1), s=(2, 2), pads=(1, 1, 1, 1)), 0),
    "y2": dwconv(t, f64(w2), s=(2, 2), pads=(2, 1, 1, 2), d=(2, 2)),
    "y3": dwconv(t, f64(w3), f64(b3), pads=(2, 2, 2, 2)) + f64(x2v),
    "y4": dwconv(f64(x3v).transpose(to_nchw), f64(w4), f64(b4), pads=(1, 1, 1, 1)),
}
outs = [helper.make_tensor_value_info(n, T.FLOAT, list(v.shape)) for n, v in refs.items()]
g = helper.make_graph(nodes, "nhwc_depthwise_mixed", [x, x2, x3], outs, inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="kiln-tests")
m.ir_version = 7
onnx.checker.check_model(m)
ys = [v.astype(np.float32) for v in refs.values()]
if os.path.isdir(casegen.ORT):
    for name, a, b in zip(refs, casegen.ort_run(m, {"x": xv, "x2": x2v, "x3": x3v}), ys):
        casegen.check_close(a, b, name)
    print("checked against ONNX Runtime")
casegen.write_case(os.path.join(HERE, "nhwc_depthwise_mixed"), m, [([xv, x2v, x3v], ys)])
print("wrote nhwc_depthwise_mixed")
