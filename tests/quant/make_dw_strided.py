#!/usr/bin/python3
"""Writes depthwise QLinearConv test models into tests/quant/models for the strided staging
copy of the CPU depthwise tiles (passes/depthwise.c, dw_word_row): at strides 2-4 each
staged word row's phase of columns is built from strided (deinterleaving) vector loads of
the input row, kx_vload_strided, 16 words a vector with AVX-512 (8 with AVX2), the last
vector of a phase overlapping the one before; rows wide enough for two or more vectors:

  dw_strided_s2/  int8 x (1 x 6 x 13 x 75, zero point -9) -> 3x3, stride 2, pads 1,
                  int8 per-channel weights, int32 bias -> int8 (zero point 5): phases of
                  38 and 37 input columns (2 vectors and an overlapping one)
  dw_strided_u8/  uint8 x (2 x 5 x 11 x 70, zero point 131) -> 3x3, strides (2, 3), pads
                  (0, 2, 1, 1), uint8 weights with zero point 117, no bias -> uint8 (zero
                  point 60): three phases of 23-24 columns, batch 2
  dw_strided_k5/  int8 x (1 x 4 x 12 x 41, zero point 3) -> 5x5, stride 2, pads (2, 2, 1, 2)
                  -> int8 (zero point -11): 5 kernel rows (word groups past the kernel)
  dw_strided_s4/  uint8 x (1 x 3 x 9 x 131, zero point 200) -> 3x3, stride 4, pads 1,
                  uint8 weights (zero point 128) -> int8 (zero point 0)

Expected outputs from the ONNX operator definitions with integer numpy (independent of
kiln): the input padded with its zero point, zero points subtracted, products summed in
int64 tap by tap, bias added, then y = saturate(round_half_even(acc * x_scale * w_scale /
y_scale) + y_zp) in double.

    /usr/bin/python3 tests/quant/make_dw_strided.py
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qref as qr  # noqa: E402
from qref import init, requant  # noqa: E402

rng = np.random.default_rng(83)
ONNX_T = {np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8}


def rand(dtype, shape):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, shape, dtype=dtype)


def case(name, shape, xt, xz, k, strides, pads, wt, wz, yt, yz, bias):
    c = shape[1]
    x = rand(xt, shape)
    xs = np.float32(0.04)
    w = rand(wt, (c, 1) + k)
    ws = (rng.random(c) * 0.004 + 0.002).astype(np.float32)
    b = rng.integers(-4000, 4000, c).astype(np.int32) if bias else None
    ys = np.float32(0.5)
    y = requant(qr.dwconv(x, xz, w, wz, b, strides, pads), xs, ws, ys, yz, yt)
    inits = [init("xs", xs), init("xz", xt(xz)), init("w", w), init("ws", ws),
             init("wz", np.full(c, wz, wt)), init("ys", ys), init("yz", yt(yz))]
    ins = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"]
    if bias:
        inits.append(init("b", b))
        ins.append("b")
    node = helper.make_node("QLinearConv", ins, ["y"], kernel_shape=list(k),
                            strides=list(strides), pads=list(pads), group=c, name="dw")
    qr.save_node(name, node, x, y, inits, ONNX_T[xt], ONNX_T[yt])


case("dw_strided_s2", (1, 6, 13, 75), np.int8, -9, (3, 3), (2, 2), (1, 1, 1, 1), np.int8, 0,
     np.int8, 5, True)
case("dw_strided_u8", (2, 5, 11, 70), np.uint8, 131, (3, 3), (2, 3), (0, 2, 1, 1), np.uint8, 117,
     np.uint8, 60, False)
case("dw_strided_k5", (1, 4, 12, 41), np.int8, 3, (5, 5), (2, 2), (2, 2, 1, 2), np.int8, 0,
     np.int8, -11, True)
case("dw_strided_s4", (1, 3, 9, 131), np.uint8, 200, (3, 3), (4, 4), (1, 1, 1, 1), np.uint8, 128,
     np.int8, 0, True)
