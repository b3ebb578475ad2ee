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
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import gen_common as gc  # noqa: E402

rng = np.random.default_rng(47)


def conv(x, xz, w, wz, bias, pads, strides):
    """int64 sums of (x - xz) * (w - wz[m]) over channels and the window, plus bias."""
    t, l, b, r = pads[0], pads[1], pads[2], pads[3]
    xp = np.pad(x.astype(np.int64) - np.int64(xz), ((0, 0), (0, 0), (t, b), (l, r)))
    m, c, kh, kw = w.shape
    ws = w.astype(np.int64) - np.broadcast_to(np.asarray(wz, np.int64).reshape(-1),
                                              (m,)).reshape(m, 1, 1, 1)
    sh, sw = strides
    oh = (xp.shape[2] - kh) // sh + 1
    ow = (xp.shape[3] - kw) // sw + 1
    acc = np.zeros((x.shape[0], m, oh, ow), np.int64)
    for i in range(oh):
        for j in range(ow):
            win = xp[:, :, i * sh:i * sh + kh, j * sw:j * sw + kw]
            acc[:, :, i, j] = np.einsum("nchw,mchw->nm", win, ws)
    if bias is not None:
        acc += bias.astype(np.int64).reshape(1, m, 1, 1)
    return acc


def requant(acc, xs, ws, ys, yz, dtype):
    mult = np.float64(xs) * np.asarray(ws, np.float64).reshape(-1) / np.float64(ys)
    mult = np.broadcast_to(mult, (acc.shape[1],)).reshape(1, -1, 1, 1)
    v = np.rint(acc.astype(np.float64) * mult) + np.float64(yz)
    info = np.iinfo(dtype)
    return np.clip(v, info.min, info.max).astype(dtype)


def case(name, x, xs, xz, w, ws, wz, b, ys, yz, pads, strides, onnx_type):
    y = requant(conv(x, xz, w, wz, b, pads, strides), xs, ws, ys, yz, x.dtype.type)
    names = ["xs", "xz", "w", "ws", "wz", "ys", "yz"] + (["b"] if b is not None else [])
    vals = [xs, xz, w, ws, wz, ys, yz] + ([b] if b is not None else [])
    inits = [numpy_helper.from_array(np.asarray(v), n) for n, v in zip(names, vals)]
    node = helper.make_node("QLinearConv", ["x"] + names, ["y"], name="conv",
                            pads=[pads[0], pads[1], pads[2], pads[3]], strides=list(strides))
    g = helper.make_graph([node], name,
                          [helper.make_tensor_value_info("x", onnx_type, list(x.shape))],
                          [helper.make_tensor_value_info("y", onnx_type, list(y.shape))], inits)
    gc.write_case(os.path.join(HERE, "models", name), gc.model(g, opset=13, ir_version=7),
                  [("x", x)], [("y", y)])


case("conv_zp0_u8", rng.integers(0, 256, (1, 6, 7, 9), dtype=np.uint8), np.float32(0.02),
     np.uint8(0), rng.integers(0, 256, (8, 6, 3, 3), dtype=np.uint8), np.float32(0.003),
     np.uint8(120), None, np.float32(0.9), np.uint8(3), (1, 1, 1, 1), (1, 1), TensorProto.UINT8)
case("conv_zp0_s8", rng.integers(-128, 128, (2, 5, 6, 5), dtype=np.int8), np.float32(0.05),
     np.int8(0), rng.integers(-128, 128, (6, 5, 3, 2), dtype=np.int8),
     (rng.random(6) * 0.004 + 0.002).astype(np.float32), np.zeros(6, np.int8),
     rng.integers(-3000, 3000, 6).astype(np.int32), np.float32(0.5), np.int8(-4), (1, 0, 1, 1),
     (1, 2), TensorProto.INT8)
