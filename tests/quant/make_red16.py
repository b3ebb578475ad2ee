#!/usr/bin/python3
"""Writes two QLinearConv test models into tests/quant/models for the reduction tiles
of Helium (passes/tile.c, kt_tile.wide, cortex-m55: 16 input channels at one position
as one VMLADAVA.S8 operand, read from a channels-last block copy of the padded input;
weights packed 16 channels a column):

  red16_s8/  int8 x (1 x 32 x 6 x 7, zero point -3) -> 3x3 QLinearConv, pad 1, int8
             per-channel weights, int32 bias -> 32 int8 channels (zero point 5) ->
             3x3 QLinearConv, stride 2, pad 1, 2 groups of 16 input channels -> 10
             channels (5 a group: a partial block of columns), int8
  red16_u8/  uint8 x (1 x 40 x 4 x 5, zero point 131) -> 1x1 QLinearConv, uint8 weights
             with zero point 128 (w - wz in [-128, 127]), per-tensor scale -> 7 uint8
             channels (zero point 100); 40 channels: the last 16-channel group half
             padded (zero-point words, zero weights)
  red16_tiles/ int8 x (1 x 16 x 5 x 7) -> four 1x1 QLinearConvs, four outputs, one of
             each of the reduction tiles' shapes (passes/tile.c red16_narrow): 16 -> 8
             (one trip, 1 x 4), 16 -> 112 (one trip, a wide expand: 1 x 2), then from
             those 112 channels 112 -> 28 (a long projection: 2 x 3, a last block of 1
             column) and 112 -> 448 (a long, wide expand: 1 x 4)

Expected outputs from the ONNX operator definitions with numpy: zero points
subtracted, products summed in int64, bias added, then
y = saturate(round_half_even(acc * x_scale * w_scale / y_scale) + y_zp) in double.

    /usr/bin/python3 tests/quant/make_red16.py
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qref as qr  # noqa: E402
from qref import init, requant  # noqa: E402

rng = np.random.default_rng(16)


def red16_s8():
    x = rng.integers(-128, 128, (1, 32, 6, 7), dtype=np.int8)
    xs, xz = np.float32(0.05), np.int8(-3)
    w1 = rng.integers(-127, 128, (32, 32, 3, 3), dtype=np.int8)
    w1s = (rng.random(32) * 0.0004 + 0.0002).astype(np.float32)
    b1 = rng.integers(-3000, 3000, 32).astype(np.int32)
    y1s, y1z = np.float32(0.3), np.int8(5)
    w2 = rng.integers(-127, 128, (10, 16, 3, 3), dtype=np.int8)
    w2s = (rng.random(10) * 0.001 + 0.0005).astype(np.float32)
    b2 = rng.integers(-2000, 2000, 10).astype(np.int32)
    y2s, y2z = np.float32(0.4), np.int8(-7)
    y1 = requant(qr.conv_ref(x, xz, w1, 0, b1, (1, 1), (1,) * 4), xs, w1s, y1s, y1z, np.int8)
    y2 = requant(qr.conv_ref(y1, y1z, w2, 0, b2, (2, 2), (1,) * 4, group=2), y1s, w2s, y2s, y2z,
                 np.int8)
    inits = [init("xs", xs), init("xz", xz), init("w1", w1), init("w1s", w1s),
             init("w1z", np.zeros(32, np.int8)), init("b1", b1), init("y1s", y1s),
             init("y1z", y1z), init("w2", w2), init("w2s", w2s),
             init("w2z", np.zeros(10, np.int8)), init("b2", b2), init("y2s", y2s),
             init("y2z", y2z)]
    nodes = [
        helper.make_node("QLinearConv", ["x", "xs", "xz", "w1", "w1s", "w1z", "y1s", "y1z", "b1"],
                         ["y1"], pads=[1, 1, 1, 1], name="c1"),
        helper.make_node("QLinearConv", ["y1", "y1s", "y1z", "w2", "w2s", "w2z", "y2s", "y2z", "b2"],
                         ["y"], strides=[2, 2], pads=[1, 1, 1, 1], group=2, name="c2"),
    ]
    g = helper.make_graph(nodes, "red16_s8",
                          [helper.make_tensor_value_info("x", TensorProto.INT8, [1, 32, 6, 7])],
                          [helper.make_tensor_value_info("y", TensorProto.INT8, list(y2.shape))],
                          inits)
    qr.save("red16_s8", g, [x], [y2])


def red16_u8():
    x = rng.integers(0, 256, (1, 40, 4, 5), dtype=np.uint8)
    xs, xz = np.float32(0.02), np.uint8(131)
    w = rng.integers(0, 256, (7, 40, 1, 1), dtype=np.uint8)
    ws, wz = np.float32(0.0005), np.uint8(128)
    b = rng.integers(-5000, 5000, 7).astype(np.int32)
    ys, yz = np.float32(0.06), np.uint8(100)
    y = requant(qr.conv_ref(x, xz, w, wz, b, (1, 1), (0,) * 4), xs, ws, ys, yz, np.uint8)
    inits = [init("xs", xs), init("xz", xz), init("w", w), init("ws", ws), init("wz", wz),
             init("b", b), init("ys", ys), init("yz", yz)]
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"],
                            ["y"], name="pw")
    g = helper.make_graph([node], "red16_u8",
                          [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 40, 4, 5])],
                          [helper.make_tensor_value_info("y", TensorProto.UINT8, list(y.shape))],
                          inits)
    qr.save("red16_u8", g, [x], [y])


def red16_tiles():
    x = rng.integers(-128, 128, (1, 16, 5, 7), dtype=np.int8)
    xs, xz = np.float32(0.05), np.int8(4)
    inits = [init("xs", xs), init("xz", xz)]
    nodes, outs, names = [], [], []

    def conv(name, src, srcq, cin, cout):
        a, sa, za = srcq
        w = rng.integers(-127, 128, (cout, cin, 1, 1), dtype=np.int8)
        ws = (rng.random(cout) * 0.0006 / np.sqrt(cin / 16) + 0.0002).astype(np.float32)
        b = rng.integers(-3000, 3000, cout).astype(np.int32)
        ys, yz = np.float32(0.25), np.int8(rng.integers(-10, 10))
        y = requant(qr.conv_ref(a, za, w, 0, b, (1, 1), (0,) * 4), sa, ws, ys, yz, np.int8)
        inits.extend([init(name + "w", w), init(name + "ws", ws),
                      init(name + "wz", np.zeros(cout, np.int8)), init(name + "b", b),
                      init(name + "ys", ys), init(name + "yz", yz)])
        sq = {"x": ("xs", "xz")}.get(src, (src + "_s", src + "_z"))
        nodes.append(helper.make_node(
            "QLinearConv", [src, sq[0], sq[1], name + "w", name + "ws", name + "wz",
                            name + "ys", name + "yz", name + "b"], [name], name=name))
        return y, ys, yz

    y1 = conv("c1", "x", (x, xs, xz), 16, 8)
    y2, y2s, y2z = conv("c2", "x", (x, xs, xz), 16, 112)
    inits.extend([init("c2_s", y2s), init("c2_z", y2z)])
    y3 = conv("c3", "c2", (y2, y2s, y2z), 112, 28)
    y4 = conv("c4", "c2", (y2, y2s, y2z), 112, 448)
    outs = [("c1", y1[0]), ("c2", y2), ("c3", y3[0]), ("c4", y4[0])]
    g = helper.make_graph(nodes, "red16_tiles",
                          [helper.make_tensor_value_info("x", TensorProto.INT8, [1, 16, 5, 7])],
                          [helper.make_tensor_value_info(n, TensorProto.INT8, list(a.shape))
                           for n, a in outs], inits)
    qr.save("red16_tiles", g, [x], [a for _, a in outs])


red16_s8()
red16_u8()
red16_tiles()
