#!/usr/bin/python3
"""Writes tests/quant/fixed/qdq_qin: a float input quantized by the model's first
QuantizeLinear and read by a 7x7 stride-2 stem whose output the layout pass keeps
channels-last on x86 VNNI (passes/layout.c, res_channels_last: its one reader is a 3x3
convolution). There the stem's transposing copy quantizes the float input itself and the
QuantizeLinear's kernel is emptied (passes/tile.c, stem_cl_qin); elsewhere the
QuantizeLinear runs as its own kernel. The input holds the float32 values nearest the rounding
ties of x / s (both parities, both signs, among them 128 where rint(x * (1 / s)) differs),
values past both ends of u8 and +-inf, so a different rounding or saturation in the copy
shows: so that every quantized byte reaches the output unchanged,
the stem's first 12 output channels each take one tap of one input channel with weight 1
(taps (3, 3), (3, 4), (4, 3), (4, 4) of the 7x7 window at stride 2 cover every input
pixel), the 3x3 layer's first 12 pass their channel's centre with weight 1, and the scales
and zero points make the requantization the identity (x - z at multiplier 1, + z); the
last 4 channels of each have random weights. Expected outputs from the operator
definitions: the QuantizeLinear in numpy float32 (round half to even), the convolutions in
Python integers with fixed-point requantization (make_qdq_fixed.requant_fixed).

- q: xf f32 [1, 3, 26, 30] -> QuantizeLinear (scale 0.0151, zero point 121) -> xq;
- stem: xq -> 7x7 stride 2 pad 3, 3 -> 16 -> s (13 x 15, scale 0.0151, zero point 121);
- s -> 3x3 pad 1, 16 -> 16 -> y (the same scale and zero point), the graph's output (NCHW).

    /usr/bin/python3 tests/quant/make_qdq_qin.py
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_qdq_fixed import requant_fixed  # noqa: E402
from make_quant_models import conv_ref  # noqa: E402
from qref import init, q, save  # noqa: E402

rng = np.random.default_rng(1207)
N = helper.make_node
u8 = np.uint8


def qconv(nodes, inits, pre, xname, xq, xs, xz, w, ws, stride, ys, yz):
    """DequantizeLinear(w), (b = 0) -> Conv (pad k // 2) -> QuantizeLinear u8; returns y."""
    k = w.shape[2]
    p = k // 2
    acc = conv_ref(xq, xz, w, np.zeros(w.shape[0], np.int64), strides=(stride, stride),
                   pads=(p, p, p, p), bias=np.zeros(w.shape[0], np.int32))
    y = requant_fixed(acc, xs, ws, ys, yz, u8, 1)
    nodes += [
        N("DequantizeLinear", [xname, pre + "xs", pre + "xz"], [pre + "xf"], name=pre + "dq_x"),
        N("DequantizeLinear", [pre + "w", pre + "ws", pre + "wz"], [pre + "wf"], axis=0,
          name=pre + "dq_w"),
        N("Conv", [pre + "xf", pre + "wf"], [pre + "c"], strides=[stride, stride],
          pads=[p, p, p, p], name=pre + "conv"),
        N("QuantizeLinear", [pre + "c", pre + "ys", pre + "yz"], [pre + "y"], name=pre + "q"),
    ]
    inits += [init(pre + "xs", np.float32(xs)), init(pre + "xz", xz), init(pre + "w", w),
              init(pre + "ws", ws), init(pre + "wz", np.zeros(w.shape[0], np.int8)),
              init(pre + "ys", np.float32(ys)), init(pre + "yz", yz)]
    return y


def weights(cout, cin, k, taps):
    """cout x cin x k x k int8: taps[m] = (c, ky, kx) weight 1 for the first len(taps)
    channels (scale 1), random for the rest (scales 0.0003-0.0007)."""
    w = rng.integers(-127, 128, (cout, cin, k, k), dtype=np.int8)
    ws = (rng.random(cout) * 0.0004 + 0.0003).astype(np.float32)
    for m, (c, ky, kx) in enumerate(taps):
        w[m] = 0
        w[m, c, ky, kx] = 1
        ws[m] = 1
    return w, ws


def main():
    nodes, inits = [], []
    s, z = np.float32(0.0151), u8(121)
    shape = (1, 3, 26, 30)
    xf = (rng.standard_normal(shape) * 1.2).astype(np.float32)
    flat = xf.reshape(-1)
    # the float32 values nearest the rounding ties of x / s (each x = (k + 0.5) * s rounded
    # and 2 neighbours either side): rint(x / s) there differs from round half away from
    # zero, and for 128 of them (this scale) from rint(x * (1 / s))
    ties = []
    for k in range(-121, 135):
        x = np.float32((k + 0.5) * float(s))
        ties.append(x)
        for d in (-np.inf, np.inf):
            y = x
            for _ in range(2):
                y = np.nextafter(y, np.float32(d))
                ties.append(y)
    ties = np.array(ties, np.float32)
    r = np.float32(1) / s
    assert (np.rint(ties / s) != np.rint(ties * r)).sum() > 100
    pos = rng.choice(flat.size, len(ties) + 40, replace=False)
    flat[pos[:len(ties)]] = ties
    extra = np.array([np.inf, -np.inf, 5.0, -5.0, 3e38, -3e38, 2.2, -2.2, 1e-30, -1e-30] * 4,
                     np.float32)
    flat[pos[len(ties):]] = extra
    with np.errstate(over="ignore", invalid="ignore"):
        xq = q(xf, s, z, np.uint8)
    nodes.append(N("QuantizeLinear", ["x", "xs", "xz"], ["xq"], name="q_in"))
    inits += [init("xs", s), init("xz", z)]
    w, ws = weights(16, 3, 7, [(c, ky, kx) for c in range(3) for ky in (3, 4) for kx in (3, 4)])
    st = qconv(nodes, inits, "st_", "xq", xq, s, z, w, ws, 2, s, z)
    w, ws = weights(16, 16, 3, [(c, 1, 1) for c in range(12)])
    y = qconv(nodes, inits, "a_", "st_y", st, s, z, w, ws, 1, s, z)
    # every quantized input byte reaches y unchanged
    for c in range(3):
        for ky in (3, 4):
            for kx in (3, 4):
                m = c * 4 + (ky - 3) * 2 + (kx - 3)
                assert (y[0, m, :, :] == xq[0, c, ky - 3::2, kx - 3::2]).all()
    nodes.append(N("Identity", ["a_y"], ["y"], name="out"))
    g = helper.make_graph(nodes, "qdq_qin",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, xf.shape)],
                          [helper.make_tensor_value_info("y", TensorProto.UINT8, y.shape)], inits)
    save("../fixed/qdq_qin", g, [xf], [y])


if __name__ == "__main__":
    main()
