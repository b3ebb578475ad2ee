#!/usr/bin/python3
"""Writes the integer pointwise convolution test models (1x1, stride 1, one group: the
tile pass's pixel tiles for 8-bit inputs, tile_pointwise_int, on targets with a four-part
dot product), with expected outputs computed here from the operator definitions:

- tests/quant/models/qlinear_pointwise (ONNX mode, make_quant_models.requant):
  x u8 [1, 16, 4, 20] -> QLinearConv 1x1 16 -> 44 (int8 per-channel weights, int32 bias)
  -> y1 u8 -> QLinearConv 1x1 44 -> 20 (u8 weights with per-channel zero points,
  per-tensor scale, no bias) -> y2 i8.
- tests/quant/fixed/qdq_pointwise (QDQ, fixed point, make_qdq_fixed.requant_fixed):
  xq u8 [1, 24, 6, 16] -> Conv 1x1 24 -> 52 (int8 per-channel weights, int32 bias) ->
  Clip(0, 6) -> QuantizeLinear u8.
80 and 96 pixels give full blocks of 32 and a partial block of whole vectors (16 lanes);
44 and 52 output channels a partial tile of channels.
- tests/quant/fixed/qdq_pointwise_part (QDQ, fixed point): pixel counts that are not a
  multiple of the 16 lanes, as MobileNetV2's 14x14 and 7x7 layers: xq u8 [1, 32, 7, 7]
  (49 pixels: the channel tiles) -> Conv 1x1 32 -> 40 (int8 per-channel weights, int32
  bias) -> Relu -> QuantizeLinear u8 y1; and x2 u8 [1, 16, 10, 10] (100 pixels: the
  pixel tiles with word rows padded to 112, 3 blocks of 32, then 4 pixels stored lane
  by lane) -> Conv 1x1 16 -> 20 -> QuantizeLinear int8 y2 (nonzero zero point). Both
  requantize in the high-word form (kn_qmul_hi32) on x86-64.

    /usr/bin/python3 tests/quant/make_qdq_pw.py
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_qdq_dw import qbound  # noqa: E402
from make_qdq_fixed import requant_fixed  # noqa: E402
from make_quant_models import conv_ref, init, requant, save  # noqa: E402

rng = np.random.default_rng(91)
N = helper.make_node


def qlinear_pointwise():
    c, m1, m2 = 16, 44, 20
    x = rng.integers(0, 256, (1, c, 4, 20), dtype=np.uint8)
    xs, xz = np.float32(0.019), np.uint8(109)
    w1 = rng.integers(-127, 128, (m1, c, 1, 1), dtype=np.int8)
    w1s = (rng.random(m1) * 0.01 + 0.002).astype(np.float32)
    w1z = np.zeros(m1, np.int8)
    b1 = rng.integers(-20000, 20000, m1).astype(np.int32)
    y1s, y1z = np.float32(0.11), np.uint8(126)
    acc1 = conv_ref(x, xz, w1, w1z, bias=b1)
    y1 = requant(acc1, xs, w1s, y1s, y1z, np.uint8, (1, m1, 1, 1))
    w2z = rng.integers(110, 146, m2).astype(np.uint8)
    w2 = np.clip(w2z[:, None, None, None].astype(np.int64) +
                 rng.integers(-100, 101, (m2, m1, 1, 1)), 0, 255).astype(np.uint8)
    w2s, y2s, y2z = np.float32(0.003), np.float32(0.13), np.int8(-9)
    acc2 = conv_ref(y1, y1z, w2, w2z)
    y2 = requant(acc2, y1s, w2s, y2s, y2z, np.int8, (1, 1, 1, 1))
    nodes = [
        N("QLinearConv", ["x", "xs", "xz", "w1", "w1s", "w1z", "y1s", "y1z", "b1"], ["y1"],
          name="pw1"),
        N("QLinearConv", ["y1", "y1s", "y1z", "w2", "w2s", "w2z", "y2s", "y2z"], ["y2"],
          name="pw2"),
    ]
    inits = [init("xs", xs), init("xz", xz), init("w1", w1), init("w1s", w1s), init("w1z", w1z),
             init("b1", b1), init("y1s", y1s), init("y1z", y1z), init("w2", w2), init("w2s", w2s),
             init("w2z", w2z), init("y2s", y2s), init("y2z", y2z)]
    g = helper.make_graph(nodes, "qlinear_pointwise",
                          [helper.make_tensor_value_info("x", TensorProto.UINT8, x.shape)],
                          [helper.make_tensor_value_info("y2", TensorProto.INT8, y2.shape),
                           helper.make_tensor_value_info("y1", TensorProto.UINT8, y1.shape)], inits)
    save("qlinear_pointwise", g, [x], [y2, y1])


def qdq_pointwise():
    c, m = 24, 52
    xq = rng.integers(0, 256, (1, c, 6, 16), dtype=np.uint8)
    xs, xz = np.float32(0.0173), np.uint8(121)
    w1 = rng.integers(-127, 128, (m, c, 1, 1), dtype=np.int8)
    w1s = (rng.random(m) * 0.02 + 0.003).astype(np.float32)
    b1 = rng.integers(-4000, 4000, m).astype(np.int32)
    b1s = (xs * w1s).astype(np.float32)
    y1s, y1z = np.float32(0.0241), np.uint8(0)
    acc1 = conv_ref(xq, xz, w1, np.zeros(m, np.int64), bias=b1)
    y1 = requant_fixed(acc1, xs, w1s, y1s, y1z, np.uint8, 1)
    y1 = np.clip(y1, qbound(0, y1s, y1z), qbound(6, y1s, y1z)).astype(np.uint8)
    nodes = [
        N("DequantizeLinear", ["xq", "xs", "xz"], ["xf"], name="dq_x"),
        N("DequantizeLinear", ["w1", "w1s", "w1z"], ["w1f"], axis=0, name="dq_w1"),
        N("DequantizeLinear", ["b1", "b1s"], ["b1f"], axis=0, name="dq_b1"),
        N("Conv", ["xf", "w1f", "b1f"], ["c1"], name="pw1"),
        N("Clip", ["c1", "lo", "hi"], ["r1"], name="relu6"),
        N("QuantizeLinear", ["r1", "y1s", "y1z"], ["y1"], name="q1"),
    ]
    inits = [init("xs", xs), init("xz", xz), init("w1", w1), init("w1s", w1s),
             init("w1z", np.zeros(m, np.int8)), init("b1", b1), init("b1s", b1s),
             init("lo", np.float32(0)), init("hi", np.float32(6)), init("y1s", y1s),
             init("y1z", y1z)]
    g = helper.make_graph(nodes, "qdq_pointwise",
                          [helper.make_tensor_value_info("xq", TensorProto.UINT8, xq.shape)],
                          [helper.make_tensor_value_info("y1", TensorProto.UINT8, y1.shape)], inits)
    save("../fixed/qdq_pointwise", g, [xq], [y1])


def qdq_pointwise_part():
    nodes, inits, ins, outs, xs_in, ys_out = [], [], [], [], [], []
    for k, (c, m, hw, relu, ydt) in enumerate([(32, 40, 7, True, np.uint8),
                                               (16, 20, 10, False, np.int8)]):
        xq = rng.integers(0, 256, (1, c, hw, hw), dtype=np.uint8)
        xs, xz = np.float32(0.0173 + 0.004 * k), np.uint8(121 - 30 * k)
        w = rng.integers(-127, 128, (m, c, 1, 1), dtype=np.int8)
        ws = (rng.random(m) * 0.02 + 0.003).astype(np.float32)
        b = rng.integers(-4000, 4000, m).astype(np.int32)
        bs = (xs * ws).astype(np.float32)
        ys = np.float32(0.0241 if relu else 0.087)
        yz = np.uint8(0) if ydt == np.uint8 else np.int8(-17)
        acc = conv_ref(xq, xz, w, np.zeros(m, np.int64), bias=b)
        y = requant_fixed(acc, xs, ws, ys, yz, ydt, 1)
        if relu:
            y = np.maximum(y, yz).astype(ydt)
        s = str(k + 1)
        f = "r" + s if relu else "c" + s
        nodes += [
            N("DequantizeLinear", ["x" + s, "xs" + s, "xz" + s], ["xf" + s], name="dq_x" + s),
            N("DequantizeLinear", ["w" + s, "ws" + s, "wz" + s], ["wf" + s], axis=0,
              name="dq_w" + s),
            N("DequantizeLinear", ["b" + s, "bs" + s], ["bf" + s], axis=0, name="dq_b" + s),
            N("Conv", ["xf" + s, "wf" + s, "bf" + s], ["c" + s], name="pw" + s),
        ]
        if relu:
            nodes.append(N("Relu", ["c" + s], [f], name="relu" + s))
        nodes.append(N("QuantizeLinear", [f, "ys" + s, "yz" + s], ["y" + s], name="q" + s))
        inits += [init("xs" + s, xs), init("xz" + s, xz), init("w" + s, w), init("ws" + s, ws),
                  init("wz" + s, np.zeros(m, np.int8)), init("b" + s, b), init("bs" + s, bs),
                  init("ys" + s, ys), init("yz" + s, yz)]
        xs_in.append(helper.make_tensor_value_info("x" + s, TensorProto.UINT8, xq.shape))
        ys_out.append(helper.make_tensor_value_info(
            "y" + s, TensorProto.UINT8 if relu else TensorProto.INT8, y.shape))
        ins.append(xq)
        outs.append(y)
    g = helper.make_graph(nodes, "qdq_pointwise_part", xs_in, ys_out, inits)
    save("../fixed/qdq_pointwise_part", g, ins, outs)


if __name__ == "__main__":
    qlinear_pointwise()
    qdq_pointwise()
    qdq_pointwise_part()
