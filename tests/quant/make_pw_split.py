#!/usr/bin/python3
"""Writes two QLinearConv test models into tests/quant/models for the split-word
pointwise tiles of microcontrollers (passes/tile.c, kt_tile.split: the input read as
words of 4 channels, each split by SXTB16/UXTB16 into its even and odd channels for
SMLAD, the weights packed as 16-bit pairs (c0, c2), (c1, c3)):

  pw_split_s8/  int8 x (2 x 12 x 5 x 7, zero point -5) -> 1x1 QLinearConv, int8
                per-channel weights, int32 bias -> 8 int8 channels (zero point 3) ->
                strided (2, 2) 1x1 QLinearConv to 6 channels (a partial block of
                columns; 8 input channels: two words)
  pw_split_u8/  uint8 x (1 x 16 x 3 x 9, zero point 131) -> 1x1 QLinearConv, uint8
                weights with zero point 120 (differences up to 135: 16-bit parts of
                both signs), per-tensor scale -> 5 uint8 channels
  pw_pairs_s8/  int8 x (1 x 40 x 3 x 5, zero point 7) -> 1x1 QLinearConv to 136 int8
                channels -> 1x1 QLinearConv to 7 channels: the M4's pointwise pairs
                (split=4) with 10 and 34 channel groups, 4 and 8 a trip and 2 left
                over, 15 pixels (a last tile of one) and a partial block of 2 x 3 tiles
  pw_pairs_c8/  uint8 x (1 x 4 x 7 x 9, zero point 0) -> 1x1 QLinearConv to 8 uint8
                channels (zero point 0) -> 1x1 QLinearConv to 16 uint8 channels: the
                pointwise pairs of 4 and 8 input channels (one and two groups, no loop:
                the tile's widened words read as kept loads by every block of output
                channels), 63 pixels (31 tiles of 2 and one of 1)
  pw_pairs_c32/ uint8 x (1 x 32 x 5 x 7, zero point 0) -> 1x1 QLinearConv to 32 uint8
                channels (zero point 0) -> 1x1 QLinearConv to 9 uint8 channels: the
                pointwise pairs of 32 input channels in 2 x 2 tiles, the 8 groups one
                trip with kept widened words, the blocks of output channels unrolled (16
                blocks; 9 channels: 4 and a partial one), 35 pixels (a last tile of one)
  cw_pairs_c16/ int8 x (1 x 16 x 6 x 7, zero point -3) -> 3x3 QLinearConv, pads 1, int8
                per-channel weights, int32 bias -> 8 int8 channels (zero point 2): a
                stride-1 window over the pre-split pairs with 4 channel groups, one trip
                of the reduction (no loop), border rows and columns
  cw_pairs_c64/ uint8 x (1 x 32 x 5 x 6, zero point 9) -> 3x3 QLinearConv, pads 1 -> 64
                uint8 channels (zero point 0) -> 3x3 QLinearConv, pads 1 -> 8 int8
                channels: windows over the pre-split pairs with 8 and 16 channel groups,
                each in one trip of the reduction

Expected outputs from the ONNX operator definitions with numpy: zero points
subtracted, products summed in int64, bias added, then
y = saturate(round_half_even(acc * x_scale * w_scale / y_scale) + y_zp) in double.

    /usr/bin/python3 tests/quant/make_pw_split.py
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qref as qr  # noqa: E402
from qref import init, requant  # noqa: E402

rng = np.random.default_rng(41)


def pw_split_s8():
    x = rng.integers(-128, 128, (2, 12, 5, 7), dtype=np.int8)
    xs, xz = np.float32(0.05), np.int8(-5)
    w1 = rng.integers(-128, 128, (8, 12, 1, 1), dtype=np.int8)
    w1s = (rng.random(8) * 0.004 + 0.002).astype(np.float32)
    b1 = rng.integers(-3000, 3000, 8).astype(np.int32)
    y1s, y1z = np.float32(0.3), np.int8(3)
    w2 = rng.integers(-128, 128, (6, 8, 1, 1), dtype=np.int8)
    w2s = (rng.random(6) * 0.01 + 0.005).astype(np.float32)
    b2 = rng.integers(-2000, 2000, 6).astype(np.int32)
    y2s, y2z = np.float32(0.4), np.int8(-7)
    y1 = requant(qr.conv_ref(x, xz, w1, 0, b1, (1, 1)), xs, w1s, y1s, y1z, np.int8)
    y2 = requant(qr.conv_ref(y1, y1z, w2, 0, b2, (2, 2)), y1s, w2s, y2s, y2z, np.int8)
    inits = [init("xs", xs), init("xz", xz), init("w1", w1), init("w1s", w1s),
             init("w1z", np.zeros(8, np.int8)), init("b1", b1), init("y1s", y1s), init("y1z", y1z),
             init("w2", w2), init("w2s", w2s), init("w2z", np.zeros(6, np.int8)), init("b2", b2),
             init("y2s", y2s), init("y2z", y2z)]
    nodes = [
        helper.make_node("QLinearConv", ["x", "xs", "xz", "w1", "w1s", "w1z", "y1s", "y1z", "b1"],
                         ["y1"], name="pw1"),
        helper.make_node("QLinearConv", ["y1", "y1s", "y1z", "w2", "w2s", "w2z", "y2s", "y2z", "b2"],
                         ["y"], strides=[2, 2], name="pw2"),
    ]
    g = helper.make_graph(nodes, "pw_split_s8",
                          [helper.make_tensor_value_info("x", TensorProto.INT8, [2, 12, 5, 7])],
                          [helper.make_tensor_value_info("y", TensorProto.INT8, list(y2.shape))],
                          inits)
    qr.save("pw_split_s8", g, [x], [y2])


def pw_split_u8():
    x = rng.integers(0, 256, (1, 16, 3, 9), dtype=np.uint8)
    xs, xz = np.float32(0.02), np.uint8(131)
    w = rng.integers(0, 256, (5, 16, 1, 1), dtype=np.uint8)
    ws, wz = np.float32(0.003), np.uint8(120)
    b = rng.integers(-5000, 5000, 5).astype(np.int32)
    ys, yz = np.float32(0.06), np.uint8(100)
    y = requant(qr.conv_ref(x, xz, w, wz, b, (1, 1)), xs, ws, ys, yz, np.uint8)
    inits = [init("xs", xs), init("xz", xz), init("w", w), init("ws", ws), init("wz", wz),
             init("b", b), init("ys", ys), init("yz", yz)]
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"],
                            ["y"], name="pw")
    g = helper.make_graph([node], "pw_split_u8",
                          [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 16, 3, 9])],
                          [helper.make_tensor_value_info("y", TensorProto.UINT8, list(y.shape))],
                          inits)
    qr.save("pw_split_u8", g, [x], [y])


def pw_pairs_s8():
    x = rng.integers(-128, 128, (1, 40, 3, 5), dtype=np.int8)
    xs, xz = np.float32(0.04), np.int8(7)
    w1 = rng.integers(-128, 128, (136, 40, 1, 1), dtype=np.int8)
    w1s = (rng.random(136) * 0.004 + 0.002).astype(np.float32)
    b1 = rng.integers(-3000, 3000, 136).astype(np.int32)
    y1s, y1z = np.float32(0.25), np.int8(-2)
    w2 = rng.integers(-128, 128, (7, 136, 1, 1), dtype=np.int8)
    w2s = (rng.random(7) * 0.002 + 0.001).astype(np.float32)
    b2 = rng.integers(-4000, 4000, 7).astype(np.int32)
    y2s, y2z = np.float32(0.5), np.int8(4)
    y1 = requant(qr.conv_ref(x, xz, w1, 0, b1, (1, 1)), xs, w1s, y1s, y1z, np.int8)
    y2 = requant(qr.conv_ref(y1, y1z, w2, 0, b2, (1, 1)), y1s, w2s, y2s, y2z, np.int8)
    inits = [init("xs", xs), init("xz", xz), init("w1", w1), init("w1s", w1s),
             init("w1z", np.zeros(136, np.int8)), init("b1", b1), init("y1s", y1s),
             init("y1z", y1z), init("w2", w2), init("w2s", w2s), init("w2z", np.zeros(7, np.int8)),
             init("b2", b2), init("y2s", y2s), init("y2z", y2z)]
    nodes = [
        helper.make_node("QLinearConv", ["x", "xs", "xz", "w1", "w1s", "w1z", "y1s", "y1z", "b1"],
                         ["y1"], name="pw1"),
        helper.make_node("QLinearConv", ["y1", "y1s", "y1z", "w2", "w2s", "w2z", "y2s", "y2z", "b2"],
                         ["y"], name="pw2"),
    ]
    g = helper.make_graph(nodes, "pw_pairs_s8",
                          [helper.make_tensor_value_info("x", TensorProto.INT8, [1, 40, 3, 5])],
                          [helper.make_tensor_value_info("y", TensorProto.INT8, list(y2.shape))],
                          inits)
    qr.save("pw_pairs_s8", g, [x], [y2])


def pw_pairs_c8():
    x = rng.integers(0, 256, (1, 4, 7, 9), dtype=np.uint8)
    xs, xz = np.float32(0.03), np.uint8(0)
    w1 = rng.integers(-128, 128, (8, 4, 1, 1), dtype=np.int8)
    w1s = (rng.random(8) * 0.01 + 0.01).astype(np.float32)
    b1 = rng.integers(-3000, 3000, 8).astype(np.int32)
    y1s, y1z = np.float32(0.08), np.uint8(0)
    w2 = rng.integers(-128, 128, (16, 8, 1, 1), dtype=np.int8)
    w2s = (rng.random(16) * 0.004 + 0.002).astype(np.float32)
    b2 = rng.integers(-4000, 4000, 16).astype(np.int32)
    y2s, y2z = np.float32(0.02), np.uint8(0)
    y1 = requant(qr.conv_ref(x, xz, w1, 0, b1, (1, 1)), xs, w1s, y1s, y1z, np.uint8)
    y2 = requant(qr.conv_ref(y1, y1z, w2, 0, b2, (1, 1)), y1s, w2s, y2s, y2z, np.uint8)
    inits = [init("xs", xs), init("xz", xz), init("w1", w1), init("w1s", w1s),
             init("w1z", np.zeros(8, np.int8)), init("b1", b1), init("y1s", y1s),
             init("y1z", y1z), init("w2", w2), init("w2s", w2s),
             init("w2z", np.zeros(16, np.int8)), init("b2", b2), init("y2s", y2s),
             init("y2z", y2z)]
    nodes = [
        helper.make_node("QLinearConv", ["x", "xs", "xz", "w1", "w1s", "w1z", "y1s", "y1z", "b1"],
                         ["y1"], name="pw1"),
        helper.make_node("QLinearConv", ["y1", "y1s", "y1z", "w2", "w2s", "w2z", "y2s", "y2z", "b2"],
                         ["y"], name="pw2"),
    ]
    g = helper.make_graph(nodes, "pw_pairs_c8",
                          [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 4, 7, 9])],
                          [helper.make_tensor_value_info("y", TensorProto.UINT8, list(y2.shape))],
                          inits)
    qr.save("pw_pairs_c8", g, [x], [y2])


pw_split_s8()
pw_split_u8()
def cw_pairs_c16():
    x = rng.integers(-128, 128, (1, 16, 6, 7), dtype=np.int8)
    xs, xz = np.float32(0.05), np.int8(-3)
    w = rng.integers(-128, 128, (8, 16, 3, 3), dtype=np.int8)
    ws = (rng.random(8) * 0.002 + 0.001).astype(np.float32)
    b = rng.integers(-3000, 3000, 8).astype(np.int32)
    ys, yz = np.float32(0.6), np.int8(2)
    y = requant(qr.conv_ref(x, xz, w, 0, b, (1, 1), (1, 1, 1, 1)), xs, ws, ys, yz, np.int8)
    inits = [init("xs", xs), init("xz", xz), init("w", w), init("ws", ws),
             init("wz", np.zeros(8, np.int8)), init("b", b), init("ys", ys), init("yz", yz)]
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"],
                            ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], name="cw")
    g = helper.make_graph([node], "cw_pairs_c16",
                          [helper.make_tensor_value_info("x", TensorProto.INT8, [1, 16, 6, 7])],
                          [helper.make_tensor_value_info("y", TensorProto.INT8, list(y.shape))],
                          inits)
    qr.save("cw_pairs_c16", g, [x], [y])


pw_pairs_s8()
def cw_pairs_c64():
    x = rng.integers(0, 256, (1, 32, 5, 6), dtype=np.uint8)
    xs, xz = np.float32(0.02), np.uint8(9)
    w1 = rng.integers(-128, 128, (64, 32, 3, 3), dtype=np.int8)
    w1s = (rng.random(64) * 0.0004 + 0.0002).astype(np.float32)
    b1 = rng.integers(-3000, 3000, 64).astype(np.int32)
    y1s, y1z = np.float32(0.05), np.uint8(0)
    w2 = rng.integers(-128, 128, (8, 64, 3, 3), dtype=np.int8)
    w2s = (rng.random(8) * 0.0004 + 0.0002).astype(np.float32)
    b2 = rng.integers(-3000, 3000, 8).astype(np.int32)
    y2s, y2z = np.float32(0.08), np.int8(-4)
    y1 = requant(qr.conv_ref(x, xz, w1, 0, b1, (1, 1), (1, 1, 1, 1)), xs, w1s, y1s, y1z, np.uint8)
    y2 = requant(qr.conv_ref(y1, y1z, w2, 0, b2, (1, 1), (1, 1, 1, 1)), y1s, w2s, y2s, y2z,
                 np.int8)
    inits = [init("xs", xs), init("xz", xz), init("w1", w1), init("w1s", w1s),
             init("w1z", np.zeros(64, np.int8)), init("b1", b1), init("y1s", y1s),
             init("y1z", y1z), init("w2", w2), init("w2s", w2s),
             init("w2z", np.zeros(8, np.int8)), init("b2", b2), init("y2s", y2s),
             init("y2z", y2z)]
    nodes = [
        helper.make_node("QLinearConv", ["x", "xs", "xz", "w1", "w1s", "w1z", "y1s", "y1z", "b1"],
                         ["y1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], name="cw"),
        helper.make_node("QLinearConv", ["y1", "y1s", "y1z", "w2", "w2s", "w2z", "y2s", "y2z", "b2"],
                         ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], name="cw2"),
    ]
    g = helper.make_graph(nodes, "cw_pairs_c64",
                          [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 32, 5, 6])],
                          [helper.make_tensor_value_info("y", TensorProto.INT8, list(y2.shape))],
                          inits)
    qr.save("cw_pairs_c64", g, [x], [y2])




def pw_pairs_c32():
    x = rng.integers(0, 256, (1, 32, 5, 7), dtype=np.uint8)
    xs, xz = np.float32(0.02), np.uint8(0)
    w1 = rng.integers(-128, 128, (32, 32, 1, 1), dtype=np.int8)
    w1s = (rng.random(32) * 0.004 + 0.002).astype(np.float32)
    b1 = rng.integers(-3000, 3000, 32).astype(np.int32)
    y1s, y1z = np.float32(0.06), np.uint8(0)
    w2 = rng.integers(-128, 128, (9, 32, 1, 1), dtype=np.int8)
    w2s = (rng.random(9) * 0.004 + 0.002).astype(np.float32)
    b2 = rng.integers(-4000, 4000, 9).astype(np.int32)
    y2s, y2z = np.float32(0.05), np.uint8(0)
    y1 = requant(qr.conv_ref(x, xz, w1, 0, b1, (1, 1)), xs, w1s, y1s, y1z, np.uint8)
    y2 = requant(qr.conv_ref(y1, y1z, w2, 0, b2, (1, 1)), y1s, w2s, y2s, y2z, np.uint8)
    inits = [init("xs", xs), init("xz", xz), init("w1", w1), init("w1s", w1s),
             init("w1z", np.zeros(32, np.int8)), init("b1", b1), init("y1s", y1s),
             init("y1z", y1z), init("w2", w2), init("w2s", w2s),
             init("w2z", np.zeros(9, np.int8)), init("b2", b2), init("y2s", y2s),
             init("y2z", y2z)]
    nodes = [
        helper.make_node("QLinearConv", ["x", "xs", "xz", "w1", "w1s", "w1z", "y1s", "y1z", "b1"],
                         ["y1"], name="pw1"),
        helper.make_node("QLinearConv", ["y1", "y1s", "y1z", "w2", "w2s", "w2z", "y2s", "y2z", "b2"],
                         ["y"], name="pw2"),
    ]
    g = helper.make_graph(nodes, "pw_pairs_c32",
                          [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 32, 5, 7])],
                          [helper.make_tensor_value_info("y", TensorProto.UINT8, list(y2.shape))],
                          inits)
    qr.save("pw_pairs_c32", g, [x], [y2])


pw_pairs_c8()
cw_pairs_c16()
cw_pairs_c64()
pw_pairs_c32()
