#!/usr/bin/python3
"""Writes three depthwise QLinearConv test models into tests/quant/models for the row-word
tiles of microcontrollers with SMLAD (passes/depthwise.c, dw_geom.words: 4 bytes of an
input row read as one word, split into its even and odd bytes, and multiplied with the
kernel row's weights packed as 16-bit pairs):

  dw_words_s8/  int8 x (2 x 6 x 11 x 13, zero point -3) -> 3x3 depthwise, stride 1, pads 1,
                int8 per-channel weights, int32 bias -> int8 (zero point 4): 11 interior
                outputs a row (5 pairs and one left over), a nonzero input zero point
                (the border rows stay in the f32 tiles), batch 2
  dw_words_u8/  uint8 x (1 x 5 x 12 x 10, zero point 0) -> 3x3 depthwise, strides (1, 2),
                pads (1, 1, 2, 0), uint8 weights with zero point 120 (differences up to
                135), per-tensor scale, no bias -> uint8 (zero point 90): zero point 0, so
                the border rows take the word tiles too; the last output's word would
                leave the row
  dw_words_s2/  int8 x (1 x 7 x 9 x 15, zero point 5) -> 3x3 depthwise, stride 2, pads
                (0, 1, 1, 1), int8 weights -> int8 (zero point -7)
  dw_words_z1/  int8 x (1 x 4 x 7 x 9, zero point 0) -> 3x3 depthwise, stride 1, pads
                (1, 2, 1, 0) -> int8 (zero point 3): zero point 0, so the border columns
                take words too, the first word two bytes past the row's left end, 9
                outputs a row (the last pair's second output not stored)
  dw_words_s2w/ int8 x (1 x 4 x 7 x 26, zero point -2) -> 3x3 depthwise, stride 2, pads 1
                -> int8 (zero point 6): 13 outputs a row, in tiles of 8 words (stride-2
                rows of 9 to 15 outputs, passes/depthwise.c DW_WORDS_NU8_MIN)

Expected outputs from the ONNX operator definitions with integer numpy: the input padded
with its zero point, zero points subtracted, products summed in int64 tap by tap, bias
added, then y = saturate(round_half_even(acc * x_scale * w_scale / y_scale) + y_zp) in
double.

    /usr/bin/python3 tests/quant/make_dw_words.py
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qref as qr  # noqa: E402
from qref import init, requant  # noqa: E402

rng = np.random.default_rng(47)


def case_s8(name, shape, xz, strides, pads, yz, bias=True):
    c = shape[1]
    x = rng.integers(-128, 128, shape, dtype=np.int8)
    xs = np.float32(0.05)
    w = rng.integers(-128, 128, (c, 1, 3, 3), dtype=np.int8)
    ws = (rng.random(c) * 0.004 + 0.002).astype(np.float32)
    b = rng.integers(-3000, 3000, c).astype(np.int32) if bias else None
    ys = np.float32(0.6)
    y = requant(qr.dwconv(x, xz, w, 0, b, strides, pads), xs, ws, ys, yz, np.int8)
    inits = [init("xs", xs), init("xz", np.int8(xz)), init("w", w), init("ws", ws),
             init("wz", np.zeros(c, np.int8)), init("ys", ys), init("yz", np.int8(yz))]
    ins = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"]
    if bias:
        inits.append(init("b", b))
        ins.append("b")
    node = helper.make_node("QLinearConv", ins, ["y"], kernel_shape=[3, 3], strides=list(strides),
                            pads=[pads[0], pads[1], pads[2], pads[3]], group=c, name="dw")
    qr.save_node(name, node, x, y, inits, TensorProto.INT8, TensorProto.INT8)


def dw_words_u8():
    c = 5
    x = rng.integers(0, 256, (1, c, 12, 10), dtype=np.uint8)
    xs, xz = np.float32(0.02), np.uint8(0)
    w = rng.integers(0, 256, (c, 1, 3, 3), dtype=np.uint8)
    ws, wz = np.float32(0.003), np.uint8(120)
    ys, yz = np.float32(0.2), np.uint8(90)
    pads = (1, 1, 2, 0)
    y = requant(qr.dwconv(x, xz, w, wz, None, (1, 2), pads), xs, ws, ys, yz, np.uint8)
    inits = [init("xs", xs), init("xz", xz), init("w", w), init("ws", ws), init("wz", wz),
             init("ys", ys), init("yz", yz)]
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["y"],
                            kernel_shape=[3, 3], strides=[1, 2], pads=[1, 1, 2, 0], group=c,
                            name="dw")
    qr.save_node("dw_words_u8", node, x, y, inits, TensorProto.UINT8, TensorProto.UINT8)


case_s8("dw_words_s8", (2, 6, 11, 13), -3, (1, 1), (1, 1, 1, 1), 4)
dw_words_u8()
case_s8("dw_words_s2", (1, 7, 9, 15), 5, (2, 2), (0, 1, 1, 1), -7, bias=False)
case_s8("dw_words_z1", (1, 4, 7, 9), 0, (1, 1), (1, 2, 1, 0), 3)
case_s8("dw_words_s2w", (1, 4, 7, 26), -2, (2, 2), (1, 1, 1, 1), 6)
