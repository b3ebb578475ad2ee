#!/usr/bin/python3
"""Writes two QLinearConv test models into tests/quant/models for the channel-pair dot
tiles of microcontrollers with unrolled kernel columns and skipped padding taps
(passes/tile.c, conv_unroll_cols and kt_zp_nil: where the input zero point is 0, a
padding tap's word is 0 and its SMLADs add nothing, so the tile leaves them out):

  conv_zp0_u8/  uint8 x (1 x 6 x 7 x 9, zero point 0, as a Relu's output) -> 3x3
                QLinearConv, pads 1, uint8 weights with zero point 120 -> 8 uint8
                channels (zero point 3): border rows and columns, a partial tile
  conv_zp0_s8/  int8 x (2 x 5 x 6 x 5, zero point 0) -> 3x2 QLinearConv, pads
                (1, 0, 1, 1), strides (1, 2), int8 per-channel weights, int32 bias ->
                6 int8 channels (zero point -4): an odd channel count (a partial pair)

Expected outputs from the ONNX operator definition with numpy: the input padded with
its zero point, zero points subtracted, products summed in int64, bias added, then
y = saturate(round_half_even(acc * x_scale * w_scale / y_scale) + y_zp) in double.

    /usr/bin/python3 tests/quant/make_conv_zp0.py
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qref as qr  # noqa: E402
from qref import init, requant  # noqa: E402

rng = np.random.default_rng(47)


def case(name, x, xs, xz, w, ws, wz, b, ys, yz, pads, strides, onnx_type):
    y = requant(qr.conv_ref(x, xz, w, wz, b, strides, pads), xs, ws, ys, yz, x.dtype.type)
    names = ["xs", "xz", "w", "ws", "wz", "ys", "yz"] + (["b"] if b is not None else [])
    vals = [xs, xz, w, ws, wz, ys, yz] + ([b] if b is not None else [])
    inits = [init(n, v) for n, v in zip(names, vals)]
    node = helper.make_node("QLinearConv", ["x"] + names, ["y"], name="conv",
                            pads=[pads[0], pads[1], pads[2], pads[3]], strides=list(strides))
    qr.save_node(name, node, x, y, inits, onnx_type, onnx_type)


case("conv_zp0_u8", rng.integers(0, 256, (1, 6, 7, 9), dtype=np.uint8), np.float32(0.02),
     np.uint8(0), rng.integers(0, 256, (8, 6, 3, 3), dtype=np.uint8), np.float32(0.003),
     np.uint8(120), None, np.float32(0.9), np.uint8(3), (1, 1, 1, 1), (1, 1), TensorProto.UINT8)
case("conv_zp0_s8", rng.integers(-128, 128, (2, 5, 6, 5), dtype=np.int8), np.float32(0.05),
     np.int8(0), rng.integers(-128, 128, (6, 5, 3, 2), dtype=np.int8),
     (rng.random(6) * 0.004 + 0.002).astype(np.float32), np.zeros(6, np.int8),
     rng.integers(-3000, 3000, 6).astype(np.int32), np.float32(0.5), np.int8(-4), (1, 0, 1, 1),
     (1, 2), TensorProto.INT8)
