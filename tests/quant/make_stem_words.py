#!/usr/bin/python3
"""Writes six QLinearConv test models into tests/quant/models for the merged stem words
(passes/tile.c, tile_stem_int with kt_tile.ckx: on CPUs with a four-part dot, a kernel
row's (input channel, kernel column) values t = kx * C + c grouped four to a word,
built once per run from the phase-split channel words, where a word of the channels a
tap left parts empty):

  stem_words_c3/  uint8 x (1 x 3 x 23 x 40, zero point 119) -> 7x7 QLinearConv, stride 2,
                  pads (3, 2, 3, 4), int8 per-channel weights, int32 bias -> 13 uint8
                  channels (zero point 3): ResNet's stem, 21 values in 6 words a kernel
                  row (runs of 3 and 1, 2 and 2, 1 and 3 parts from one column), 20
                  outputs a row (a whole vector and a partial one on 16 lanes)
  stem_words_c2/  int8 x (1 x 2 x 11 x 37, zero point -9) -> 5x5 QLinearConv, strides
                  (1, 2), pads (2, 0, 1, 3) -> 7 int8 channels (zero point 2): 10 values in
                  3 words (the last half empty), int8 input (shifted by 128 for the dot)
  stem_words_c1/  uint8 x (1 x 1 x 9 x 50, zero point 200) -> 1x7 QLinearConv, stride 3,
                  pads (0, 3, 0, 3), uint8 weights with zero point 128, no bias -> 5 uint8
                  channels (zero point 60): 7 kernel columns of one channel in 2 words
  stem_words_k5/  int8 x (1 x 3 x 10 x 19, zero point 0) -> 5x5 QLinearConv, stride 1,
                  pads 2 -> 20 int8 channels (zero point -5): 15 values in 4 words
  stem_words_b2/  uint8 x (2 x 3 x 12 x 17, zero point 40) -> 3x3 QLinearConv, stride 2,
                  pads 1 -> 5 uint8 channels (zero point 128): batch 2 and 9 outputs a row
                  (an odd one: a last tile of one pixel) in the SMLAD microcontrollers'
                  merged pairs (tile_stem_pairs: 9 values in 5 pairs a kernel row)
  stem_words_s4/  uint8 x (1 x 3 x 21 x 18, zero point 77) -> 7x7 QLinearConv, strides
                  (4, 2), pads 3 -> 6 uint8 channels (zero point 9): in the merged pairs,
                  each output row keeps the previous one's last 3 kernel rows (moved to
                  the front of the scratch) and builds 4, the last output row's 3 of them
                  past the input (the zero point)

Expected outputs from the ONNX operator definitions with integer numpy (tests/quant/
qref.py: conv_ref's int64 sums over the zero-point-padded input, requant's
saturate(round_half_even(acc * x_scale * w_scale / y_scale) + y_zp) in double).

    /usr/bin/python3 tests/quant/make_stem_words.py
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qref as qr  # noqa: E402
from qref import init, requant  # noqa: E402

rng = np.random.default_rng(1206)
TYPES = {np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8}


def case(name, xshape, xdt, xz, m, k, strides, pads, ydt, yz, wdt=np.int8, wz=0, bias=True):
    """One QLinearConv of k = (kh, kw) over x of xshape; pads (top, left, bottom, right)."""
    info = np.iinfo(xdt)
    x = rng.integers(info.min, info.max + 1, xshape, dtype=xdt)
    xs = np.float32(0.03)
    winfo = np.iinfo(wdt)
    w = rng.integers(max(winfo.min, -127), winfo.max + 1, (m, xshape[1]) + k, dtype=wdt)
    ws = (rng.random(m) * 0.004 + 0.002).astype(np.float32)
    b = rng.integers(-4000, 4000, m).astype(np.int32) if bias else None
    ys = np.float32(0.6)
    wzs = np.full(m, wz, wdt)
    acc = qr.conv_ref(x, xz, w, wzs, b, strides, pads)
    y = requant(acc, xs, ws, ys, yz, ydt)
    inits = [init("xs", xs), init("xz", xdt(xz)), init("w", w), init("ws", ws),
             init("wz", wzs), init("ys", ys), init("yz", ydt(yz))]
    ins = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"]
    if bias:
        inits.append(init("b", b))
        ins.append("b")
    node = helper.make_node("QLinearConv", ins, ["y"], kernel_shape=list(k),
                            strides=list(strides), pads=[pads[0], pads[1], pads[2], pads[3]],
                            name="stem")
    qr.save_node(name, node, x, y, inits, TYPES[xdt], TYPES[ydt])


case("stem_words_c3", (1, 3, 23, 40), np.uint8, 119, 13, (7, 7), (2, 2), (3, 2, 3, 4),
     np.uint8, 3)
case("stem_words_c2", (1, 2, 11, 37), np.int8, -9, 7, (5, 5), (1, 2), (2, 0, 1, 3), np.int8, 2)
case("stem_words_c1", (1, 1, 9, 50), np.uint8, 200, 5, (1, 7), (3, 3), (0, 3, 0, 3), np.uint8,
     60, wdt=np.uint8, wz=128, bias=False)
case("stem_words_k5", (1, 3, 10, 19), np.int8, 0, 20, (5, 5), (1, 1), (2, 2, 2, 2), np.int8, -5)
case("stem_words_b2", (2, 3, 12, 17), np.uint8, 40, 5, (3, 3), (2, 2), (1, 1, 1, 1), np.uint8,
     128)
case("stem_words_s4", (1, 3, 21, 18), np.uint8, 77, 6, (7, 7), (4, 2), (3, 3, 3, 3), np.uint8, 9)
