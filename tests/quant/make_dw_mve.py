#!/usr/bin/python3
"""Writes depthwise QLinearConv test models into tests/quant/models for Helium's i32
vector tiles (passes/depthwise.c, dw_geom.mvec: 4 outputs of a row a vector, each tap a
widening byte load less the input zero point and a VMLA by the scalar weight, the
high-word requantization of the whole vector in the store):

  dw_mve_u8/  uint8 x (1 x 6 x 9 x 14, zero point 37) -> 3x3 depthwise, stride 1, pads 1,
              uint8 weights with zero point 128, int32 bias -> uint8 (zero point 11):
              12 interior outputs a row (3 vectors), a nonzero input zero point
              (VLDRB.U32 then VSUB), border columns in the scalar tiles
  dw_mve_k5/  int8 x (2 x 3 x 10 x 11, zero point -7) -> 5x5 depthwise, strides (2, 1),
              pads (2, 2, 1, 2), int8 weights -> int8 (zero point -5): 7 interior outputs
              a row (one vector, then one overlapping the row's end), rows at stride 2,
              batch 2
  dw_mve_pad/ uint8 x (1 x 5 x 7 x 12, zero point 100) -> 3x3 depthwise, stride 1, pads 1,
              uint8 weights (zero point 128) -> uint8 (zero point 0): 10 interior
              outputs a row need as many vectors as the row's 12, so each channel goes
              through the padded plane (dw_geom.pad, the padding the zero point, the
              accumulators starting at bias - xz * sum (w - wz))
  dw_mve_n5/  int8 x (2 x 4 x 6 x 5, zero point -128) -> 3x3 depthwise, stride 1, pads 1,
              int8 weights, int32 bias -> int8 (zero point -20): DS-CNN's rows of 5 (3
              interior outputs, narrower than a vector), in the padded plane, a vector and
              one overlapping the row's end, batch 2
  dw_mve_s2/  uint8 x (2 x 3 x 5 x 41, zero point 90) -> 3x3 depthwise, strides (1, 2),
              pads (1, 1, 0, 2), uint8 weights (zero point 128), int32 bias -> uint8
              (zero point 3): stride 2 along the row through the padded plane's two phases
              (dw_geom.pph): 20 column pairs a row copied as a chunk of 16 and one
              overlapping it, a single odd column before them, 21 outputs a row (5
              vectors, the last overlapping), batch 2

Expected outputs from the ONNX operator definitions with integer numpy: the input padded
with its zero point, zero points subtracted, products summed in int64 tap by tap, bias
added, then y = saturate(round_half_even(acc * x_scale * w_scale / y_scale) + y_zp) in
double.

    /usr/bin/python3 tests/quant/make_dw_mve.py
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qref as qr  # noqa: E402
from qref import init, requant  # noqa: E402

rng = np.random.default_rng(53)


def dw_mve_u8():
    c = 6
    x = rng.integers(0, 256, (1, c, 9, 14), dtype=np.uint8)
    xs, xz = np.float32(0.02), np.uint8(37)
    w = rng.integers(0, 256, (c, 1, 3, 3), dtype=np.uint8)
    ws, wz = (rng.random(c) * 0.003 + 0.001).astype(np.float32), np.uint8(128)
    b = rng.integers(-5000, 5000, c).astype(np.int32)
    ys, yz = np.float32(0.25), np.uint8(11)
    pads = (1, 1, 1, 1)
    y = requant(qr.dwconv(x, xz, w, wz, b, (1, 1), pads), xs, ws, ys, yz, np.uint8)
    inits = [init("xs", xs), init("xz", xz), init("w", w), init("ws", ws), init("wz", wz),
             init("ys", ys), init("yz", yz), init("b", b)]
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"],
                            ["y"], kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1],
                            group=c, name="dw")
    qr.save_node("dw_mve_u8", node, x, y, inits, TensorProto.UINT8, TensorProto.UINT8)


def dw_mve_k5():
    c = 3
    x = rng.integers(-128, 128, (2, c, 10, 11), dtype=np.int8)
    xs, xz = np.float32(0.05), np.int8(-7)
    w = rng.integers(-128, 128, (c, 1, 5, 5), dtype=np.int8)
    ws = np.float32(0.002)
    ys, yz = np.float32(0.9), np.int8(-5)
    pads = (2, 2, 1, 2)
    y = requant(qr.dwconv(x, xz, w, 0, None, (2, 1), pads), xs, ws, ys, yz, np.int8)
    inits = [init("xs", xs), init("xz", xz), init("w", w), init("ws", ws), init("wz", np.int8(0)),
             init("ys", ys), init("yz", yz)]
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["y"],
                            kernel_shape=[5, 5], strides=[2, 1], pads=[2, 2, 1, 2], group=c,
                            name="dw")
    qr.save_node("dw_mve_k5", node, x, y, inits, TensorProto.INT8, TensorProto.INT8)


def dw_mve_pad():
    c = 5
    x = rng.integers(0, 256, (1, c, 7, 12), dtype=np.uint8)
    xs, xz = np.float32(0.03), np.uint8(100)
    w = rng.integers(0, 256, (c, 1, 3, 3), dtype=np.uint8)
    ws, wz = np.float32(0.002), np.uint8(128)
    ys, yz = np.float32(0.15), np.uint8(0)
    pads = (1, 1, 1, 1)
    y = requant(qr.dwconv(x, xz, w, wz, None, (1, 1), pads), xs, ws, ys, yz, np.uint8)
    inits = [init("xs", xs), init("xz", xz), init("w", w), init("ws", ws), init("wz", wz),
             init("ys", ys), init("yz", yz)]
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["y"],
                            kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1], group=c,
                            name="dw")
    qr.save_node("dw_mve_pad", node, x, y, inits, TensorProto.UINT8, TensorProto.UINT8)


def dw_mve_n5():
    c = 4
    x = rng.integers(-128, 128, (2, c, 6, 5), dtype=np.int8)
    xs, xz = np.float32(0.04), np.int8(-128)
    w = rng.integers(-128, 128, (c, 1, 3, 3), dtype=np.int8)
    ws = (rng.random(c) * 0.003 + 0.001).astype(np.float32)
    b = rng.integers(-4000, 4000, c).astype(np.int32)
    ys, yz = np.float32(0.7), np.int8(-20)
    pads = (1, 1, 1, 1)
    y = requant(qr.dwconv(x, xz, w, 0, b, (1, 1), pads), xs, ws, ys, yz, np.int8)
    inits = [init("xs", xs), init("xz", xz), init("w", w), init("ws", ws),
             init("wz", np.zeros(c, np.int8)), init("ys", ys), init("yz", yz), init("b", b)]
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"],
                            ["y"], kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1],
                            group=c, name="dw")
    qr.save_node("dw_mve_n5", node, x, y, inits, TensorProto.INT8, TensorProto.INT8)


def dw_mve_s2():
    c = 3
    x = rng.integers(0, 256, (2, c, 5, 41), dtype=np.uint8)
    xs, xz = np.float32(0.02), np.uint8(90)
    w = rng.integers(0, 256, (c, 1, 3, 3), dtype=np.uint8)
    ws, wz = (rng.random(c) * 0.003 + 0.001).astype(np.float32), np.uint8(128)
    b = rng.integers(-5000, 5000, c).astype(np.int32)
    ys, yz = np.float32(0.2), np.uint8(3)
    pads = (1, 1, 0, 2)
    y = requant(qr.dwconv(x, xz, w, wz, b, (1, 2), pads), xs, ws, ys, yz, np.uint8)
    inits = [init("xs", xs), init("xz", xz), init("w", w), init("ws", ws), init("wz", wz),
             init("ys", ys), init("yz", yz), init("b", b)]
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"],
                            ["y"], kernel_shape=[3, 3], strides=[1, 2], pads=[1, 1, 0, 2],
                            group=c, name="dw")
    qr.save_node("dw_mve_s2", node, x, y, inits, TensorProto.UINT8, TensorProto.UINT8)


dw_mve_u8()
dw_mve_k5()
dw_mve_pad()
dw_mve_n5()
dw_mve_s2()
