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

Expected outputs from the ONNX operator definitions with integer numpy: the input padded
with its zero point, zero points subtracted, products summed in int64 tap by tap, bias
added, then y = saturate(round_half_even(acc * x_scale * w_scale / y_scale) + y_zp) in
double.

    /usr/bin/python3 tests/quant/make_dw_words.py
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import gen_common as gc  # noqa: E402

rng = np.random.default_rng(47)


def dwconv(x, xz, w, wz, bias, strides, pads):
    """int64 accumulators of a depthwise 2-D convolution (group = channels): pads = (top,
    left, bottom, right), the padding holding xz (it contributes nothing once xz is
    subtracted)."""
    n, c, h, wd = x.shape
    _, _, kh, kw = w.shape
    sh, sw = strides
    xp = np.full((n, c, h + pads[0] + pads[2], wd + pads[1] + pads[3]), np.int64(xz))
    xp[:, :, pads[0]:pads[0] + h, pads[1]:pads[1] + wd] = x
    xp -= np.int64(xz)
    oh = (xp.shape[2] - kh) // sh + 1
    ow = (xp.shape[3] - kw) // sw + 1
    ws = w.astype(np.int64) - np.asarray(wz, np.int64).reshape(-1, 1, 1, 1)
    acc = np.zeros((n, c, oh, ow), np.int64)
    for i in range(kh):
        for j in range(kw):
            win = xp[:, :, i:i + (oh - 1) * sh + 1:sh, j:j + (ow - 1) * sw + 1:sw]
            acc += win * ws[:, 0, i, j].reshape(1, c, 1, 1)
    if bias is not None:
        acc += bias.astype(np.int64).reshape(1, c, 1, 1)
    return acc


def requant(acc, xs, ws, ys, yz, dtype):
    mult = np.float64(xs) * np.asarray(ws, np.float64).reshape(-1) / np.float64(ys)
    mult = np.broadcast_to(mult, (acc.shape[1],)).reshape(1, -1, 1, 1)
    v = np.rint(acc.astype(np.float64) * mult) + np.float64(yz)
    info = np.iinfo(dtype)
    return np.clip(v, info.min, info.max).astype(dtype)


def init(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def save(name, node, x, y, inits, xt, yt):
    g = helper.make_graph([node], name, [helper.make_tensor_value_info("x", xt, list(x.shape))],
                          [helper.make_tensor_value_info("y", yt, list(y.shape))], inits)
    gc.write_case(os.path.join(HERE, "models", name), gc.model(g, opset=13, ir_version=7),
                  [("x", x)], [("y", y)])


def case_s8(name, shape, xz, strides, pads, yz, bias=True):
    c = shape[1]
    x = rng.integers(-128, 128, shape, dtype=np.int8)
    xs = np.float32(0.05)
    w = rng.integers(-128, 128, (c, 1, 3, 3), dtype=np.int8)
    ws = (rng.random(c) * 0.004 + 0.002).astype(np.float32)
    b = rng.integers(-3000, 3000, c).astype(np.int32) if bias else None
    ys = np.float32(0.6)
    y = requant(dwconv(x, xz, w, 0, b, strides, pads), xs, ws, ys, yz, np.int8)
    inits = [init("xs", xs), init("xz", np.int8(xz)), init("w", w), init("ws", ws),
             init("wz", np.zeros(c, np.int8)), init("ys", ys), init("yz", np.int8(yz))]
    ins = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"]
    if bias:
        inits.append(init("b", b))
        ins.append("b")
    node = helper.make_node("QLinearConv", ins, ["y"], kernel_shape=[3, 3], strides=list(strides),
                            pads=[pads[0], pads[1], pads[2], pads[3]], group=c, name="dw")
    save(name, node, x, y, inits, TensorProto.INT8, TensorProto.INT8)


def dw_words_u8():
    c = 5
    x = rng.integers(0, 256, (1, c, 12, 10), dtype=np.uint8)
    xs, xz = np.float32(0.02), np.uint8(0)
    w = rng.integers(0, 256, (c, 1, 3, 3), dtype=np.uint8)
    ws, wz = np.float32(0.003), np.uint8(120)
    ys, yz = np.float32(0.2), np.uint8(90)
    pads = (1, 1, 2, 0)
    y = requant(dwconv(x, xz, w, wz, None, (1, 2), pads), xs, ws, ys, yz, np.uint8)
    inits = [init("xs", xs), init("xz", xz), init("w", w), init("ws", ws), init("wz", wz),
             init("ys", ys), init("yz", yz)]
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["y"],
                            kernel_shape=[3, 3], strides=[1, 2], pads=[1, 1, 2, 0], group=c,
                            name="dw")
    save("dw_words_u8", node, x, y, inits, TensorProto.UINT8, TensorProto.UINT8)


case_s8("dw_words_s8", (2, 6, 11, 13), -3, (1, 1), (1, 1, 1, 1), 4)
dw_words_u8()
case_s8("dw_words_s2", (1, 7, 9, 15), 5, (2, 2), (0, 1, 1, 1), -7, bias=False)
case_s8("dw_words_z1", (1, 4, 7, 9), 0, (1, 1), (1, 2, 1, 0), 3)
