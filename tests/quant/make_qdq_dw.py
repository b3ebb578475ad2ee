#!/usr/bin/python3
"""Writes the integer depthwise convolution test models (group == C == M, MobileNet's
3x3 layers), which the depthwise pass runs in its tiles (passes/tile_int.c), with
expected outputs computed here from the operator definitions:

- tests/quant/models/qlinear_depthwise (ONNX mode, make_quant_models.requant):
  x u8 [2, 24, 9, 37] -> QLinearConv 3x3 pad 1 (u8 weights with per-channel zero points
  and scales, int32 bias) -> y1 u8 -> QLinearConv 5x5 stride 2 pad (2, 1, 2, 3) (int8
  weights, per-tensor scale, no bias) -> y2 i8; and ConvInteger 3x3 pad 1 on x (u8
  weights with per-channel zero points) -> yc i32.
- tests/quant/fixed/qdq_depthwise (QDQ, fixed point, make_qdq_fixed.requant_fixed):
  xq u8 [1, 32, 11, 40] -> depthwise Conv 3x3 pad 1 (int8 per-channel weights, int32
  bias) -> Clip(0, 6) -> QuantizeLinear u8 -> depthwise Conv 3x3 stride 2 pad 1 ->
  Relu -> QuantizeLinear u8.
Rows of 37 and 40 outputs give the vector tiles (16 lanes here), narrower vectors and
scalar tails; the borders test taps against the input.
- tests/quant/models/qlinear_dw_dot and tests/quant/fixed/qdq_dw_dot: shapes for the
  dot-product tiles of staged integer depthwise convolutions (qlinear_dw_dot,
  qdq_dw_dot below), with their own random generators.

    /usr/bin/python3 tests/quant/make_qdq_dw.py
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_qdq_fixed import requant_fixed  # noqa: E402
from make_quant_models import conv_ref, init, requant, save  # noqa: E402

rng = np.random.default_rng(77)
N = helper.make_node


def qlinear_depthwise():
    c = 24
    x = rng.integers(0, 256, (2, c, 9, 37), dtype=np.uint8)
    xs, xz = np.float32(0.021), np.uint8(117)
    w1 = rng.integers(0, 256, (c, 1, 3, 3), dtype=np.uint8)
    w1z = rng.integers(100, 156, c).astype(np.uint8)
    w1s = (rng.random(c) * 0.01 + 0.002).astype(np.float32)
    b1 = rng.integers(-30000, 30000, c).astype(np.int32)
    y1s, y1z = np.float32(0.09), np.uint8(131)
    acc1 = conv_ref(x, xz, w1, w1z, group=c, pads=(1, 1, 1, 1), bias=b1)
    y1 = requant(acc1, xs, w1s, y1s, y1z, np.uint8, (1, c, 1, 1))
    w2 = rng.integers(-127, 128, (c, 1, 5, 5), dtype=np.int8)
    w2s, w2z = np.float32(0.004), np.int8(0)
    y2s, y2z = np.float32(0.15), np.int8(-7)
    pads2 = (2, 1, 2, 3)  # begin h, begin w, end h, end w
    acc2 = conv_ref(y1, y1z, w2, np.zeros(c, np.int64), group=c, strides=(2, 2), pads=pads2)
    y2 = requant(acc2, y1s, w2s, y2s, y2z, np.int8, (1, 1, 1, 1))
    w3 = rng.integers(0, 256, (c, 1, 3, 3), dtype=np.uint8)
    w3z = rng.integers(90, 170, c).astype(np.uint8)
    yc = conv_ref(x, xz, w3, w3z, group=c, pads=(1, 1, 1, 1)).astype(np.int32)
    nodes = [
        N("QLinearConv", ["x", "xs", "xz", "w1", "w1s", "w1z", "y1s", "y1z", "b1"], ["y1"],
          group=c, pads=[1, 1, 1, 1], name="dw1"),
        N("QLinearConv", ["y1", "y1s", "y1z", "w2", "w2s", "w2z", "y2s", "y2z"], ["y2"],
          group=c, strides=[2, 2], pads=list(pads2), name="dw2"),
        N("ConvInteger", ["x", "w3", "xz", "w3z"], ["yc"], group=c, pads=[1, 1, 1, 1], name="dw3"),
    ]
    inits = [init("xs", xs), init("xz", xz), init("w1", w1), init("w1s", w1s), init("w1z", w1z),
             init("b1", b1), init("y1s", y1s), init("y1z", y1z), init("w2", w2), init("w2s", w2s),
             init("w2z", w2z), init("y2s", y2s), init("y2z", y2z), init("w3", w3), init("w3z", w3z)]
    g = helper.make_graph(nodes, "qlinear_depthwise",
                          [helper.make_tensor_value_info("x", TensorProto.UINT8, x.shape)],
                          [helper.make_tensor_value_info("y2", TensorProto.INT8, y2.shape),
                           helper.make_tensor_value_info("y1", TensorProto.UINT8, y1.shape),
                           helper.make_tensor_value_info("yc", TensorProto.INT32, yc.shape)], inits)
    save("qlinear_depthwise", g, [x], [y2, y1, yc])


def qbound(b, s, z):
    """QuantizeLinear of bound b (float32 division, round half to even) for u8."""
    return int(np.clip(np.rint(np.float32(b) / np.float32(s)) + int(z), 0, 255))


def qdq_depthwise():
    c = 32
    xq = rng.integers(0, 256, (1, c, 11, 40), dtype=np.uint8)
    xs, xz = np.float32(0.0173), np.uint8(121)
    w1 = rng.integers(-127, 128, (c, 1, 3, 3), dtype=np.int8)
    w1s = (rng.random(c) * 0.02 + 0.003).astype(np.float32)
    b1 = rng.integers(-4000, 4000, c).astype(np.int32)
    b1s = (xs * w1s).astype(np.float32)
    y1s, y1z = np.float32(0.0241), np.uint8(0)
    acc1 = conv_ref(xq, xz, w1, np.zeros(c, np.int64), group=c, pads=(1, 1, 1, 1), bias=b1)
    y1 = requant_fixed(acc1, xs, w1s, y1s, y1z, np.uint8, 1)
    y1 = np.clip(y1, qbound(0, y1s, y1z), qbound(6, y1s, y1z)).astype(np.uint8)
    w2 = rng.integers(-127, 128, (c, 1, 3, 3), dtype=np.int8)
    w2s = (rng.random(c) * 0.02 + 0.003).astype(np.float32)
    y2s, y2z = np.float32(0.037), np.uint8(5)
    acc2 = conv_ref(y1, y1z, w2, np.zeros(c, np.int64), group=c, strides=(2, 2), pads=(1, 1, 1, 1))
    y2 = requant_fixed(np.maximum(acc2, 0), y1s, w2s, y2s, y2z, np.uint8, 1)
    nodes = [
        N("DequantizeLinear", ["xq", "xs", "xz"], ["xf"], name="dq_x"),
        N("DequantizeLinear", ["w1", "w1s", "w1z"], ["w1f"], axis=0, name="dq_w1"),
        N("DequantizeLinear", ["b1", "b1s"], ["b1f"], axis=0, name="dq_b1"),
        N("Conv", ["xf", "w1f", "b1f"], ["c1"], group=c, pads=[1, 1, 1, 1], name="dw1"),
        N("Clip", ["c1", "lo", "hi"], ["r1"], name="relu6"),
        N("QuantizeLinear", ["r1", "y1s", "y1z"], ["y1"], name="q1"),
        N("DequantizeLinear", ["y1", "y1s", "y1z"], ["y1f"], name="dq_y1"),
        N("DequantizeLinear", ["w2", "w2s", "w2z"], ["w2f"], axis=0, name="dq_w2"),
        N("Conv", ["y1f", "w2f"], ["c2"], group=c, strides=[2, 2], pads=[1, 1, 1, 1], name="dw2"),
        N("Relu", ["c2"], ["r2"], name="relu2"),
        N("QuantizeLinear", ["r2", "y2s", "y2z"], ["y2"], name="q2"),
    ]
    inits = [init("xs", xs), init("xz", xz), init("w1", w1), init("w1s", w1s),
             init("w1z", np.zeros(c, np.int8)), init("b1", b1), init("b1s", b1s),
             init("lo", np.float32(0)), init("hi", np.float32(6)), init("y1s", y1s),
             init("y1z", y1z), init("w2", w2), init("w2s", w2s), init("w2z", np.zeros(c, np.int8)),
             init("y2s", y2s), init("y2z", y2z)]
    g = helper.make_graph(nodes, "qdq_depthwise",
                          [helper.make_tensor_value_info("xq", TensorProto.UINT8, xq.shape)],
                          [helper.make_tensor_value_info("y2", TensorProto.UINT8, y2.shape),
                           helper.make_tensor_value_info("y1", TensorProto.UINT8, y1.shape)], inits)
    save("../fixed/qdq_depthwise", g, [xq], [y2, y1])


def qlinear_dw_dot():
    """Depthwise shapes for the dot-product tiles (passes/depthwise.c, staged words):
    strides 1, 2 and 3, kernels 3x3, 5x5, 4x3 and 1x7, 13 channels, batch 2, rows of 14,
    7 and 8 outputs; u8 and i8 inputs, i8 weights (four-part dots) and u8 weights with
    per-channel zero points whose differences leave int8 (pairs of 16 bits)."""
    r = np.random.default_rng(1212)
    c = 13
    x = r.integers(0, 256, (2, c, 14, 14), dtype=np.uint8)
    xs, xz = np.float32(0.019), np.uint8(109)
    x2 = r.integers(-128, 128, (1, c, 15, 15), dtype=np.int8)
    x2s, x2z = np.float32(0.027), np.int8(-11)
    # a: 3x3 stride 1 pad 1, i8 per-channel weights, bias -> u8
    wa = r.integers(-127, 128, (c, 1, 3, 3), dtype=np.int8)
    was = (r.random(c) * 0.02 + 0.002).astype(np.float32)
    ba = r.integers(-20000, 20000, c).astype(np.int32)
    yas, yaz = np.float32(0.11), np.uint8(128)
    ya = requant(conv_ref(x, xz, wa, np.zeros(c, np.int64), group=c, pads=(1, 1, 1, 1), bias=ba),
                 xs, was, yas, yaz, np.uint8, (1, c, 1, 1))
    # b: 3x3 stride 2 pad 1 on ya, i8 weights per tensor -> i8
    wb = r.integers(-127, 128, (c, 1, 3, 3), dtype=np.int8)
    wbs, ybs, ybz = np.float32(0.006), np.float32(0.2), np.int8(3)
    yb = requant(conv_ref(ya, yaz, wb, np.zeros(c, np.int64), group=c, strides=(2, 2),
                          pads=(1, 1, 1, 1)), yas, wbs, ybs, ybz, np.int8, (1, 1, 1, 1))
    # c: 5x5 stride 1 pad 2, u8 weights with per-channel zero points (w - wz beyond int8)
    wc = r.integers(0, 256, (c, 1, 5, 5), dtype=np.uint8)
    wcz = r.integers(60, 200, c).astype(np.uint8)
    wcs = (r.random(c) * 0.002 + 0.0005).astype(np.float32)
    ycs, ycz = np.float32(0.9), np.uint8(100)
    yc = requant(conv_ref(x, xz, wc, wcz, group=c, pads=(2, 2, 2, 2)), xs, wcs, ycs, ycz,
                 np.uint8, (1, c, 1, 1))
    # d: ConvInteger 4x3, strides (3, 2), pads (2, 1, 1, 0), i8 input, i8 weights -> i32
    wd = r.integers(-128, 128, (c, 1, 4, 3), dtype=np.int8)
    yd = conv_ref(x2, x2z, wd, np.zeros(c, np.int64), group=c, strides=(3, 2),
                  pads=(2, 1, 1, 0)).astype(np.int32)
    # e: 3x3 stride 2 pad 1 on i8 input, i8 per-channel weights, bias -> u8
    we = r.integers(-127, 128, (c, 1, 3, 3), dtype=np.int8)
    wes = (r.random(c) * 0.02 + 0.002).astype(np.float32)
    be = r.integers(-3000, 3000, c).astype(np.int32)
    yes_, yez = np.float32(0.07), np.uint8(90)
    ye = requant(conv_ref(x2, x2z, we, np.zeros(c, np.int64), group=c, strides=(2, 2),
                          pads=(1, 1, 1, 1), bias=be), x2s, wes, yes_, yez, np.uint8, (1, c, 1, 1))
    # f: 1x7 pad (0, 3) on i8 input, u8 weights with a per-tensor zero point -> i8
    wf = r.integers(0, 256, (c, 1, 1, 7), dtype=np.uint8)
    wfz, wfs = np.uint8(131), np.float32(0.003)
    yfs, yfz = np.float32(0.3), np.int8(-20)
    yf = requant(conv_ref(x2, x2z, wf, wfz, group=c, pads=(0, 3, 0, 3)), x2s, wfs, yfs, yfz,
                 np.int8, (1, 1, 1, 1))
    nodes = [
        N("QLinearConv", ["x", "xs", "xz", "wa", "was", "waz", "yas", "yaz", "ba"], ["ya"],
          group=c, pads=[1, 1, 1, 1], name="dwa"),
        N("QLinearConv", ["ya", "yas", "yaz", "wb", "wbs", "wbz", "ybs", "ybz"], ["yb"],
          group=c, strides=[2, 2], pads=[1, 1, 1, 1], name="dwb"),
        N("QLinearConv", ["x", "xs", "xz", "wc", "wcs", "wcz", "ycs", "ycz"], ["yc"],
          group=c, pads=[2, 2, 2, 2], name="dwc"),
        N("ConvInteger", ["x2", "wd", "x2z"], ["yd"], group=c, strides=[3, 2], pads=[2, 1, 1, 0],
          name="dwd"),
        N("QLinearConv", ["x2", "x2s", "x2z", "we", "wes", "wez", "yes", "yez", "be"], ["ye"],
          group=c, strides=[2, 2], pads=[1, 1, 1, 1], name="dwe"),
        N("QLinearConv", ["x2", "x2s", "x2z", "wf", "wfs", "wfz", "yfs", "yfz"], ["yf"],
          group=c, pads=[0, 3, 0, 3], name="dwf"),
    ]
    inits = [init("xs", xs), init("xz", xz), init("x2s", x2s), init("x2z", x2z),
             init("wa", wa), init("was", was), init("waz", np.zeros(c, np.int8)), init("ba", ba),
             init("yas", yas), init("yaz", yaz), init("wb", wb), init("wbs", wbs),
             init("wbz", np.int8(0)), init("ybs", ybs), init("ybz", ybz), init("wc", wc),
             init("wcs", wcs), init("wcz", wcz), init("ycs", ycs), init("ycz", ycz),
             init("wd", wd), init("we", we), init("wes", wes), init("wez", np.zeros(c, np.int8)),
             init("be", be), init("yes", yes_), init("yez", yez), init("wf", wf),
             init("wfs", wfs), init("wfz", wfz), init("yfs", yfs), init("yfz", yfz)]
    outs = [("yb", yb), ("ya", ya), ("yc", yc), ("yd", yd), ("ye", ye), ("yf", yf)]
    types = {np.dtype(np.uint8): TensorProto.UINT8, np.dtype(np.int8): TensorProto.INT8,
             np.dtype(np.int32): TensorProto.INT32}
    g = helper.make_graph(nodes, "qlinear_dw_dot",
                          [helper.make_tensor_value_info("x", TensorProto.UINT8, x.shape),
                           helper.make_tensor_value_info("x2", TensorProto.INT8, x2.shape)],
                          [helper.make_tensor_value_info(n, types[v.dtype], v.shape)
                           for n, v in outs], inits)
    save("qlinear_dw_dot", g, [x, x2], [v for _, v in outs])


def qbound_t(b, s, z, dtype):
    """QuantizeLinear of bound b (float32 division, round half to even) into dtype."""
    info = np.iinfo(dtype)
    return int(np.clip(np.rint(np.float32(b) / np.float32(s)) + int(z), info.min, info.max))


def qdq_dw_dot():
    """MobileNetV2's depthwise layers in QDQ with int8 activations (the dot tiles shift
    them by 128): 3x3 stride 1 + Relu6 into i8, then 3x3 stride 2 + Relu into u8, 13
    channels of 14x14 (rows of 14 and 7), per-channel int8 weights, fixed point."""
    r = np.random.default_rng(1213)
    c = 13
    xq = r.integers(-128, 128, (1, c, 14, 14), dtype=np.int8)
    xs, xz = np.float32(0.0213), np.int8(-9)
    w1 = r.integers(-127, 128, (c, 1, 3, 3), dtype=np.int8)
    w1s = (r.random(c) * 0.02 + 0.003).astype(np.float32)
    b1 = r.integers(-4000, 4000, c).astype(np.int32)
    b1s = (xs * w1s).astype(np.float32)
    y1s, y1z = np.float32(0.0251), np.int8(-128)
    acc1 = conv_ref(xq, xz, w1, np.zeros(c, np.int64), group=c, pads=(1, 1, 1, 1), bias=b1)
    y1 = requant_fixed(acc1, xs, w1s, y1s, y1z, np.int8, 1)
    y1 = np.clip(y1, qbound_t(0, y1s, y1z, np.int8), qbound_t(6, y1s, y1z, np.int8)).astype(np.int8)
    w2 = r.integers(-127, 128, (c, 1, 3, 3), dtype=np.int8)
    w2s = (r.random(c) * 0.02 + 0.003).astype(np.float32)
    y2s, y2z = np.float32(0.031), np.uint8(7)
    acc2 = conv_ref(y1, y1z, w2, np.zeros(c, np.int64), group=c, strides=(2, 2), pads=(1, 1, 1, 1))
    y2 = requant_fixed(np.maximum(acc2, 0), y1s, w2s, y2s, y2z, np.uint8, 1)
    nodes = [
        N("DequantizeLinear", ["xq", "xs", "xz"], ["xf"], name="dq_x"),
        N("DequantizeLinear", ["w1", "w1s", "w1z"], ["w1f"], axis=0, name="dq_w1"),
        N("DequantizeLinear", ["b1", "b1s"], ["b1f"], axis=0, name="dq_b1"),
        N("Conv", ["xf", "w1f", "b1f"], ["c1"], group=c, pads=[1, 1, 1, 1], name="dw1"),
        N("Clip", ["c1", "lo", "hi"], ["r1"], name="relu6"),
        N("QuantizeLinear", ["r1", "y1s", "y1z"], ["y1"], name="q1"),
        N("DequantizeLinear", ["y1", "y1s", "y1z"], ["y1f"], name="dq_y1"),
        N("DequantizeLinear", ["w2", "w2s", "w2z"], ["w2f"], axis=0, name="dq_w2"),
        N("Conv", ["y1f", "w2f"], ["c2"], group=c, strides=[2, 2], pads=[1, 1, 1, 1], name="dw2"),
        N("Relu", ["c2"], ["r2"], name="relu2"),
        N("QuantizeLinear", ["r2", "y2s", "y2z"], ["y2"], name="q2"),
    ]
    inits = [init("xs", xs), init("xz", xz), init("w1", w1), init("w1s", w1s),
             init("w1z", np.zeros(c, np.int8)), init("b1", b1), init("b1s", b1s),
             init("lo", np.float32(0)), init("hi", np.float32(6)), init("y1s", y1s),
             init("y1z", y1z), init("w2", w2), init("w2s", w2s), init("w2z", np.zeros(c, np.int8)),
             init("y2s", y2s), init("y2z", y2z)]
    g = helper.make_graph(nodes, "qdq_dw_dot",
                          [helper.make_tensor_value_info("xq", TensorProto.INT8, xq.shape)],
                          [helper.make_tensor_value_info("y2", TensorProto.UINT8, y2.shape),
                           helper.make_tensor_value_info("y1", TensorProto.INT8, y1.shape)], inits)
    save("../fixed/qdq_dw_dot", g, [xq], [y2, y1])


if __name__ == "__main__":
    qlinear_depthwise()
    qdq_depthwise()
    qlinear_dw_dot()
    qdq_dw_dot()
