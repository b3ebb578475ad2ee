#!/usr/bin/python3
"""Writes two QLinearConv test models into tests/quant/models for the column-pair tiles
of microcontrollers (passes/tile.c, kt_tile.cpair: a convolution of one input channel
reads a padded copy of its input as words of two horizontally adjacent taps, x[ix] and
x[ix + dw] in 16-bit halves, for SMLAD against weights packed as the same pairs):

  cpair_s8/  int8 x (2 x 1 x 13 x 11, zero point -3) -> 5x3 QLinearConv, strides (2, 1),
             dilations (1, 2), pads (2, 1, 1, 2), int8 per-channel weights, int32 bias ->
             18 int8 channels (zero point 4): an odd kernel width (the last pair's second
             tap is zero), a dilated pair, asymmetric pads, a partial block of columns,
             batch 2
  cpair_u8/  uint8 x (1 x 1 x 20 x 9, zero point 130) -> 4x4 QLinearConv, strides (2, 2),
             pads 1, uint8 weights with zero point 120 (differences up to 135: 16-bit
             halves of both signs), per-tensor scale, no bias -> 32 uint8 channels (zero
             point 90); the geometry of DS-CNN's first convolution
  cpair_c3/  int8 x (1 x 3 x 8 x 7, zero point 5) -> 3x3 QLinearConv, pads 1, int8
             per-channel weights, int32 bias -> 24 int8 channels (zero point -7): three
             input channels (an RGB stem, as ResNet-8's), an odd kernel width

Expected outputs from the ONNX operator definitions with integer numpy: the input padded
with its zero point, zero points subtracted, products summed in int64 tap by tap, bias
added, then y = saturate(round_half_even(acc * x_scale * w_scale / y_scale) + y_zp) in
double.

    /usr/bin/python3 tests/quant/make_cpair.py
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qref as qr  # noqa: E402
from qref import init, requant  # noqa: E402

rng = np.random.default_rng(43)


def cpair_s8():
    x = rng.integers(-128, 128, (2, 1, 13, 11), dtype=np.int8)
    xs, xz = np.float32(0.04), np.int8(-3)
    w = rng.integers(-128, 128, (18, 1, 5, 3), dtype=np.int8)
    ws = (rng.random(18) * 0.004 + 0.002).astype(np.float32)
    b = rng.integers(-4000, 4000, 18).astype(np.int32)
    ys, yz = np.float32(0.5), np.int8(4)
    y = requant(qr.conv_ref(x, xz, w, 0, b, (2, 1), (2, 1, 1, 2), (1, 2)), xs, ws, ys, yz, np.int8)
    inits = [init("xs", xs), init("xz", xz), init("w", w), init("ws", ws),
             init("wz", np.zeros(18, np.int8)), init("b", b), init("ys", ys), init("yz", yz)]
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"],
                            ["y"], kernel_shape=[5, 3], strides=[2, 1], dilations=[1, 2],
                            pads=[2, 1, 1, 2], name="stem")
    qr.save_node("cpair_s8", node, x, y, inits, TensorProto.INT8, TensorProto.INT8)


def cpair_u8():
    x = rng.integers(0, 256, (1, 1, 20, 9), dtype=np.uint8)
    xs, xz = np.float32(0.02), np.uint8(130)
    w = rng.integers(0, 256, (32, 1, 4, 4), dtype=np.uint8)
    ws, wz = np.float32(0.003), np.uint8(120)
    ys, yz = np.float32(0.3), np.uint8(90)
    y = requant(qr.conv_ref(x, xz, w, wz, None, (2, 2), (1, 1, 1, 1)), xs, ws, ys, yz, np.uint8)
    inits = [init("xs", xs), init("xz", xz), init("w", w), init("ws", ws), init("wz", wz),
             init("ys", ys), init("yz", yz)]
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["y"],
                            kernel_shape=[4, 4], strides=[2, 2], pads=[1, 1, 1, 1], name="stem")
    qr.save_node("cpair_u8", node, x, y, inits, TensorProto.UINT8, TensorProto.UINT8)


def cpair_c3():
    x = rng.integers(-128, 128, (1, 3, 8, 7), dtype=np.int8)
    xs, xz = np.float32(0.05), np.int8(5)
    w = rng.integers(-128, 128, (24, 3, 3, 3), dtype=np.int8)
    ws = (rng.random(24) * 0.002 + 0.001).astype(np.float32)
    b = rng.integers(-3000, 3000, 24).astype(np.int32)
    ys, yz = np.float32(0.4), np.int8(-7)
    y = requant(qr.conv_ref(x, xz, w, 0, b, (1, 1), (1, 1, 1, 1), (1, 1)), xs, ws, ys, yz, np.int8)
    inits = [init("xs", xs), init("xz", xz), init("w", w), init("ws", ws),
             init("wz", np.zeros(24, np.int8)), init("b", b), init("ys", ys), init("yz", yz)]
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"],
                            ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], name="stem")
    qr.save_node("cpair_c3", node, x, y, inits, TensorProto.INT8, TensorProto.INT8)


cpair_s8()
cpair_u8()
cpair_c3()
