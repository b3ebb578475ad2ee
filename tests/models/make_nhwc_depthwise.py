#!/usr/bin/python3
"""Writes tests/models/nhwc_depthwise: depthwise convolutions of a tf2onnx-style NHWC
export, each between the converter's Transposes. An NHWC input, transposed to NCHW, read
by a 3x3 depthwise Conv with bias and Clip(0, 6) (fused into it), a strided dilated one
without bias followed by Relu, and one whose result is added to its own input (a
residual, the epilogue operand read channels-first); each result transposed back to an
NHWC output. passes/layout.c folds the Transposes into the depthwise Convs (kn.layout;
ir/lower/nn.c lower_dw_cl), golden layout_depthwise; the residual's Transpose stays for
the Add operand.

Expected outputs: numpy in float64 from the ONNX Conv definition, rounded to float32;
checked against ONNX Runtime when ORT_NODE's onnxruntime-node is installed.
usage: /usr/bin/python3 tests/models/make_nhwc_depthwise.py"""
import os

import numpy as np
import onnx
from onnx import TensorProto as T, helper, numpy_helper

import casegen

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(34)


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


to_nchw, to_nhwc = [0, 3, 1, 2], [0, 2, 3, 1]
N, H, W, C = 2, 10, 9, 16
w1 = rng.standard_normal((C, 1, 3, 3)).astype(np.float32)
b1 = rng.standard_normal(C).astype(np.float32)
w2 = rng.standard_normal((C, 1, 3, 3)).astype(np.float32)
w3 = rng.standard_normal((C, 1, 5, 5)).astype(np.float32) * np.float32(0.2)
b3 = rng.standard_normal(C).astype(np.float32)
inits = [numpy_helper.from_array(a, n) for a, n in
         ((w1, "w1"), (b1, "b1"), (w2, "w2"), (w3, "w3"), (b3, "b3"),
          (np.array(0, np.float32), "lo"), (np.array(6, np.float32), "hi"))]
x = helper.make_tensor_value_info("x", T.FLOAT, [N, H, W, C])
nodes = [
    helper.make_node("Transpose", ["x"], ["t"], perm=to_nchw, name="t_in"),
    helper.make_node("Conv", ["t", "w1", "b1"], ["c1"], group=C, kernel_shape=[3, 3],
                     pads=[1, 1, 1, 1], name="dw1"),
    helper.make_node("Clip", ["c1", "lo", "hi"], ["r1"], name="relu6"),
    helper.make_node("Transpose", ["r1"], ["y1"], perm=to_nhwc, name="t1"),
    helper.make_node("Conv", ["t", "w2"], ["c2"], group=C, kernel_shape=[3, 3], strides=[2, 2],
                     dilations=[2, 1], pads=[2, 1, 1, 0], name="dw2"),
    helper.make_node("Relu", ["c2"], ["r2"], name="relu"),
    helper.make_node("Transpose", ["r2"], ["y2"], perm=to_nhwc, name="t2"),
    helper.make_node("Conv", ["t", "w3", "b3"], ["c3"], group=C, kernel_shape=[5, 5],
                     pads=[2, 2, 2, 2], name="dw3"),
    helper.make_node("Add", ["c3", "t"], ["a3"], name="residual"),
    helper.make_node("Transpose", ["a3"], ["y3"], perm=to_nhwc, name="t3"),
]
xv = rng.standard_normal((N, H, W, C)).astype(np.float32)
t = xv.astype(np.float64).transpose(to_nchw)
f64 = lambda a: a.astype(np.float64)  # noqa: E731
refs = {
    "y1": np.clip(dwconv(t, f64(w1), f64(b1), pads=(1, 1, 1, 1)), 0, 6).transpose(to_nhwc),
    "y2": np.maximum(dwconv(t, f64(w2), s=(2, 2), pads=(2, 1, 1, 0), d=(2, 1)), 0)
    .transpose(to_nhwc),
    "y3": (dwconv(t, f64(w3), f64(b3), pads=(2, 2, 2, 2)) + t).transpose(to_nhwc),
}
outs = [helper.make_tensor_value_info(n, T.FLOAT, list(v.shape)) for n, v in refs.items()]
g = helper.make_graph(nodes, "nhwc_depthwise", [x], outs, inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="kiln-tests")
m.ir_version = 7
onnx.checker.check_model(m)
ys = [v.astype(np.float32) for v in refs.values()]
if os.path.isdir(casegen.ORT):
    for name, a, b in zip(refs, casegen.ort_run(m, {"x": xv}), ys):
        casegen.check_close(a, b, name)
    print("checked against ONNX Runtime")
casegen.write_case(os.path.join(HERE, "nhwc_depthwise"), m, [([xv], ys)])
print("wrote nhwc_depthwise")
