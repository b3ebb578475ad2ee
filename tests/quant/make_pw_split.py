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
                (split=4) with 10 and 34 channel groups (4 a trip and 2 left over; two
                trips of 17, passes/tile.c PW_TWO_TRIPS_MIN), 15 pixels (a last tile of
                one) and a partial block of 2 x 3 tiles
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

ONNX_TYPE = {np.dtype(np.int8): TensorProto.INT8, np.dtype(np.uint8): TensorProto.UINT8}


def layer(w, ws, b, ys, yz, wz=None, strides=(1, 1), pads=None, name="pw"):
    """One QLinearConv of a chain: wz None means per-channel int8 zeros."""
    return dict(w=w, ws=ws, b=b, ys=ys, yz=yz, wz=wz, strides=strides, pads=pads, name=name)


def chain(model, x, xs, xz, layers):
    """Writes the model of QLinearConvs in a chain, x -> ... -> y, with the expected output
    from qref.conv_ref and requant; tensors of layer k are named w<k>, w<k>s, ... (no
    number with one layer), the output between layers y<k>."""
    inits, nodes = [init("xs", xs), init("xz", xz)], []
    src, v, vs, vz = "x", x, xs, xz
    for i, l in enumerate(layers):
        k = str(i + 1) if len(layers) > 1 else ""
        wz = np.zeros(l["w"].shape[0], np.int8) if l["wz"] is None else l["wz"]
        kh, kw = l["w"].shape[2:]
        pads = l["pads"] or (0, 0, 0, 0)
        acc = qr.conv_ref(v, vz, l["w"], 0 if l["wz"] is None else wz, l["b"], l["strides"],
                          *([tuple(pads)] if l["pads"] else []))
        v = requant(acc, vs, l["ws"], l["ys"], l["yz"], l["yz"].dtype.type)
        dst = "y" if i == len(layers) - 1 else "y" + k
        inits += [init("w" + k, l["w"]), init("w%ss" % k, l["ws"]), init("w%sz" % k, wz),
                  init("b" + k, l["b"]), init("y%ss" % k, l["ys"]), init("y%sz" % k, l["yz"])]
        attrs = {}
        if (kh, kw) != (1, 1):
            attrs["kernel_shape"] = [kh, kw]
        if l["pads"]:
            attrs["pads"] = list(pads)
        if tuple(l["strides"]) != (1, 1):
            attrs["strides"] = list(l["strides"])
        nodes.append(helper.make_node(
            "QLinearConv", [src, "xs" if i == 0 else "y%ss" % str(i), "xz" if i == 0 else
                            "y%sz" % str(i), "w" + k, "w%ss" % k, "w%sz" % k, "y%ss" % k,
                            "y%sz" % k, "b" + k], [dst], name=l["name"], **attrs))
        src, vs, vz = dst, l["ys"], l["yz"]
    g = helper.make_graph(nodes, model,
                          [helper.make_tensor_value_info("x", ONNX_TYPE[x.dtype], list(x.shape))],
                          [helper.make_tensor_value_info("y", ONNX_TYPE[v.dtype], list(v.shape))],
                          inits)
    qr.save(model, g, [x], [v])


def pw_split_s8():
    x = rng.integers(-128, 128, (2, 12, 5, 7), dtype=np.int8)
    xs, xz = np.float32(0.05), np.int8(-5)
    w1 = rng.integers(-128, 128, (8, 12, 1, 1), dtype=np.int8)
    w1s = (rng.random(8) * 0.004 + 0.002).astype(np.float32)
    b1 = rng.integers(-3000, 3000, 8).astype(np.int32)
    l1 = layer(w1, w1s, b1, np.float32(0.3), np.int8(3), name="pw1")
    w2 = rng.integers(-128, 128, (6, 8, 1, 1), dtype=np.int8)
    w2s = (rng.random(6) * 0.01 + 0.005).astype(np.float32)
    b2 = rng.integers(-2000, 2000, 6).astype(np.int32)
    l2 = layer(w2, w2s, b2, np.float32(0.4), np.int8(-7), strides=(2, 2), name="pw2")
    chain("pw_split_s8", x, xs, xz, [l1, l2])


def pw_split_u8():
    x = rng.integers(0, 256, (1, 16, 3, 9), dtype=np.uint8)
    xs, xz = np.float32(0.02), np.uint8(131)
    w = rng.integers(0, 256, (5, 16, 1, 1), dtype=np.uint8)
    b = rng.integers(-5000, 5000, 5).astype(np.int32)
    chain("pw_split_u8", x, xs, xz,
          [layer(w, np.float32(0.003), b, np.float32(0.06), np.uint8(100), wz=np.uint8(120))])


def pw_pairs_s8():
    x = rng.integers(-128, 128, (1, 40, 3, 5), dtype=np.int8)
    xs, xz = np.float32(0.04), np.int8(7)
    w1 = rng.integers(-128, 128, (136, 40, 1, 1), dtype=np.int8)
    w1s = (rng.random(136) * 0.004 + 0.002).astype(np.float32)
    b1 = rng.integers(-3000, 3000, 136).astype(np.int32)
    l1 = layer(w1, w1s, b1, np.float32(0.25), np.int8(-2), name="pw1")
    w2 = rng.integers(-128, 128, (7, 136, 1, 1), dtype=np.int8)
    w2s = (rng.random(7) * 0.002 + 0.001).astype(np.float32)
    b2 = rng.integers(-4000, 4000, 7).astype(np.int32)
    l2 = layer(w2, w2s, b2, np.float32(0.5), np.int8(4), name="pw2")
    chain("pw_pairs_s8", x, xs, xz, [l1, l2])


def pw_pairs_c8():
    x = rng.integers(0, 256, (1, 4, 7, 9), dtype=np.uint8)
    xs, xz = np.float32(0.03), np.uint8(0)
    w1 = rng.integers(-128, 128, (8, 4, 1, 1), dtype=np.int8)
    w1s = (rng.random(8) * 0.01 + 0.01).astype(np.float32)
    b1 = rng.integers(-3000, 3000, 8).astype(np.int32)
    l1 = layer(w1, w1s, b1, np.float32(0.08), np.uint8(0), name="pw1")
    w2 = rng.integers(-128, 128, (16, 8, 1, 1), dtype=np.int8)
    w2s = (rng.random(16) * 0.004 + 0.002).astype(np.float32)
    b2 = rng.integers(-4000, 4000, 16).astype(np.int32)
    l2 = layer(w2, w2s, b2, np.float32(0.02), np.uint8(0), name="pw2")
    chain("pw_pairs_c8", x, xs, xz, [l1, l2])


def cw_pairs_c16():
    x = rng.integers(-128, 128, (1, 16, 6, 7), dtype=np.int8)
    xs, xz = np.float32(0.05), np.int8(-3)
    w = rng.integers(-128, 128, (8, 16, 3, 3), dtype=np.int8)
    ws = (rng.random(8) * 0.002 + 0.001).astype(np.float32)
    b = rng.integers(-3000, 3000, 8).astype(np.int32)
    chain("cw_pairs_c16", x, xs, xz,
          [layer(w, ws, b, np.float32(0.6), np.int8(2), pads=(1, 1, 1, 1), name="cw")])


def cw_pairs_c64():
    x = rng.integers(0, 256, (1, 32, 5, 6), dtype=np.uint8)
    xs, xz = np.float32(0.02), np.uint8(9)
    w1 = rng.integers(-128, 128, (64, 32, 3, 3), dtype=np.int8)
    w1s = (rng.random(64) * 0.0004 + 0.0002).astype(np.float32)
    b1 = rng.integers(-3000, 3000, 64).astype(np.int32)
    l1 = layer(w1, w1s, b1, np.float32(0.05), np.uint8(0), pads=(1, 1, 1, 1), name="cw")
    w2 = rng.integers(-128, 128, (8, 64, 3, 3), dtype=np.int8)
    w2s = (rng.random(8) * 0.0004 + 0.0002).astype(np.float32)
    b2 = rng.integers(-3000, 3000, 8).astype(np.int32)
    l2 = layer(w2, w2s, b2, np.float32(0.08), np.int8(-4), pads=(1, 1, 1, 1), name="cw2")
    chain("cw_pairs_c64", x, xs, xz, [l1, l2])


def pw_pairs_c32():
    x = rng.integers(0, 256, (1, 32, 5, 7), dtype=np.uint8)
    xs, xz = np.float32(0.02), np.uint8(0)
    w1 = rng.integers(-128, 128, (32, 32, 1, 1), dtype=np.int8)
    w1s = (rng.random(32) * 0.004 + 0.002).astype(np.float32)
    b1 = rng.integers(-3000, 3000, 32).astype(np.int32)
    l1 = layer(w1, w1s, b1, np.float32(0.06), np.uint8(0), name="pw1")
    w2 = rng.integers(-128, 128, (9, 32, 1, 1), dtype=np.int8)
    w2s = (rng.random(9) * 0.004 + 0.002).astype(np.float32)
    b2 = rng.integers(-4000, 4000, 9).astype(np.int32)
    l2 = layer(w2, w2s, b2, np.float32(0.05), np.uint8(0), name="pw2")
    chain("pw_pairs_c32", x, xs, xz, [l1, l2])


# one random stream: the order of these calls fixes every model's values
pw_split_s8()
pw_split_u8()
pw_pairs_s8()
pw_pairs_c8()
cw_pairs_c16()
cw_pairs_c64()
pw_pairs_c32()
