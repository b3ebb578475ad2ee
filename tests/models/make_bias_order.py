#!/usr/bin/python3
"""Writes tests/models/bias_order: float Convs and a Gemm whose bias is added after the
sum of products (ONNX's reference order, and ONNX Runtime's MLAS), not summed into it.

Each contraction's bias is large (|b| >= 2^24, where float32's spacing is 2) and its
products small positive dyadic numbers (x in quarters up to 1, w in {1/4, 1/2}), so every
partial sum of products is exact in float32 in any order, while the bias placement is
not: a sum started at the bias rounds each product < 1 away (y = b), the reference
rounds once (y = fl(S + b)). Each contraction is followed by an Add of -b, which is
exact (Sterbenz) and shows the difference at full scale: fl(S + b) - b, a few units
where a bias-first sum gives 0, far outside check-onnx's tolerance. The shapes pick
kiln's paths: a 3x3 convolution (the tile pass's convolution tiles), a 1x1 one
(pointwise tiles), a 3x3 depthwise one (depthwise row tiles), a 3-channel stride-2 one
(the stem pass), a Gemm with C (matrix tiles) and an NHWC depthwise one between
Transposes (channels-last depthwise tiles); OpenCL takes its GPU tiles, -O0 the plain
nests, KILN_TEST_TARGET=cortex-m4 the microcontroller tiles. Expected outputs: numpy, S summed in float64 (exact here), then
float32 additions in the reference order.

    /usr/bin/python3 tests/models/make_bias_order.py
"""
import os
import sys

import numpy as np
from onnx import helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import gen_common as gc  # noqa: E402

rng = np.random.default_rng(15)
F = np.float32


def quarters(*shape):
    """x in {1/4, 1/2, 3/4, 1}: products with w in {1/4, 1/2} are multiples of 1/16."""
    return (rng.integers(1, 5, shape) / 4).astype(F)


def weights(*shape):
    return (rng.integers(1, 3, shape) / 4).astype(F)


def biases(n):
    """|b| >= 2^24, both signs, exact in float32 (even integers)."""
    sign = np.where(np.arange(n) % 2, -1, 1)
    return (sign * (2.0 ** 24 + 2 * rng.integers(0, 64, n))).astype(F)


def conv_sum(x, w, stride, pad, group):
    """sum over the window and input channels in float64 (exact for these values)."""
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    s = np.zeros((n, m, oh, ow))
    mg = m // group
    for o in range(m):
        g = o // mg
        for ci in range(cg):
            for i in range(kh):
                for j in range(kw):
                    s[:, o] += (xp[:, g * cg + ci, i:i + stride * oh:stride, j:j + stride * ow:stride]
                                * float(w[o, ci, i, j]))
    return s


def after(s, b, shape):
    """fl(fl(S) + b) - b in float32, b broadcast by shape."""
    bb = b.reshape(shape)
    y = (s.astype(F) + bb).astype(F)
    return (y + (-bb)).astype(F)


x = quarters(1, 8, 12, 12)
xs = quarters(1, 3, 16, 16)
a = quarters(4, 32)
cases = [  # name, input, weights, stride, pad, group
    ("conv3x3", "x", weights(16, 8, 3, 3), 1, 1, 1),
    ("pointwise", "x", weights(16, 8, 1, 1), 1, 0, 1),
    ("depthwise", "x", weights(8, 1, 3, 3), 1, 1, 8),
    ("stem", "xs", weights(8, 3, 3, 3), 2, 1, 1),
]
feeds = {"x": x, "xs": xs, "a": a}
nodes, inits, outs = [], [], []
for name, inp, w, stride, pad, group in cases:
    b = biases(w.shape[0])
    nodes.append(helper.make_node("Conv", [inp, name + "_w", name + "_b"], [name + "_y"], name=name,
                                  kernel_shape=list(w.shape[2:]), strides=[stride, stride],
                                  pads=[pad] * 4, group=group))
    nodes.append(helper.make_node("Add", [name + "_y", name + "_nb"], ["y%d" % (len(outs) + 1)],
                                  name=name + "_sub"))
    inits += gc.initializers([(w, name + "_w"), (b, name + "_b"),
                              (-b.reshape(-1, 1, 1), name + "_nb")])
    outs.append(after(conv_sum(feeds[inp], w, stride, pad, group), b, (1, -1, 1, 1)))
gb, gcst = weights(32, 24), biases(24)
nodes.append(helper.make_node("Gemm", ["a", "gemm_b", "gemm_c"], ["gemm_y"], name="gemm"))
nodes.append(helper.make_node("Add", ["gemm_y", "gemm_nc"], ["y%d" % (len(outs) + 1)],
                              name="gemm_sub"))
inits += gc.initializers([(gb, "gemm_b"), (gcst, "gemm_c"), (-gcst, "gemm_nc")])
outs.append(after(a.astype(np.float64) @ gb.astype(np.float64), gcst, (1, -1)))
# a tf2onnx-style NHWC depthwise Conv between the converter's Transposes: the layout
# pass folds both (channels-last depthwise tiles; OpenCL and -O0: lower_dw_cl's nest)
xn = quarters(1, 10, 10, 8)
feeds["xn"] = xn
wn, bn = weights(8, 1, 3, 3), biases(8)
nodes += [helper.make_node("Transpose", ["xn"], ["xn_t"], name="to_nchw", perm=[0, 3, 1, 2]),
          helper.make_node("Conv", ["xn_t", "nhwc_w", "nhwc_b"], ["nhwc_y"], name="nhwc_dw",
                           kernel_shape=[3, 3], pads=[1] * 4, group=8),
          helper.make_node("Transpose", ["nhwc_y"], ["nhwc_yt"], name="to_nhwc", perm=[0, 2, 3, 1]),
          helper.make_node("Add", ["nhwc_yt", "nhwc_nb"], ["y%d" % (len(outs) + 1)],
                           name="nhwc_sub")]
inits += gc.initializers([(wn, "nhwc_w"), (bn, "nhwc_b"), (-bn, "nhwc_nb")])
s6 = conv_sum(xn.transpose(0, 3, 1, 2), wn, 1, 1, 8)
outs.append(after(s6, bn, (1, -1, 1, 1)).transpose(0, 2, 3, 1).copy())

# the test must tell the orders apart: a bias-first float32 sum gives 0 almost everywhere
for y in outs:
    assert np.count_nonzero(y) > 0.9 * y.size, y
g = gc.float_graph(nodes, "bias_order", list(feeds.items()), outs, inits)
gc.write_case(os.path.join(HERE, "bias_order"), gc.model(g, opset=13),
              list(feeds.items()), [("y%d" % (i + 1), y) for i, y in enumerate(outs)])
