#!/usr/bin/python3
"""Writes tests/models/ocl_pools: float32 MaxPools for the OpenCL vector work-items along
the row (passes/pool.c, pool_items_vec), each CASE/model.onnx (x -> y, one MaxPool),
CASE/x.npy and CASE/want.npy (y's bits). x holds small values with ties, +0 and -0, -inf
and NaNs of four payloads and both signs, so a max taken in another order than the ONNX
window's row-major one (a zero of the other sign or another NaN kept) or a tap read
outside the window or left out shows in the bits. want: the max in row-major tap order,
acc = -inf, then acc = x if x != x or x > acc (the lowering's order and kiln's
interpreter's), over the taps inside the input, computed here in Python.

  resnet  3x3 s2 p1, 1x3x20x64 (ResNet's pool: 4 tiles of 8 outputs; the first and last
          shifted into the row)
  odd13   3x3 s2 ceil_mode, 1x3x27x27 (13 columns: no vector tile, one output a work-item)
  k2s2    2x2 s2, 1x4x12x40 (tiles of 4 outputs; the last shifted left)
  s1      3x3 s1 p1, 1x2x9x48 (stride 1: tiles of 16 outputs, one vector store inside)
  k23     2x3 s2 pads (0,1,1,1), 1x3x11x68 (tiles of 2 outputs; the bottom row padded)
  s4      4x4 s4, 1x2x8x64 (stride 4: tiles of 4 outputs of 16 lanes)
usage: /usr/bin/python3 tests/models/make_ocl_pools.py"""
import math
import os
import struct

import numpy as np
import onnx
from onnx import TensorProto as T, helper

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ocl_pools")

CASES = [
    ("resnet", (1, 3, 20, 64), (3, 3), (2, 2), (1, 1, 1, 1), 0),
    ("odd13", (1, 3, 27, 27), (3, 3), (2, 2), (0, 0, 0, 0), 1),
    ("k2s2", (1, 4, 12, 40), (2, 2), (2, 2), (0, 0, 0, 0), 0),
    ("s1", (1, 2, 9, 48), (3, 3), (1, 1), (1, 1, 1, 1), 0),
    ("k23", (1, 3, 11, 68), (2, 3), (2, 2), (0, 1, 1, 1), 0),
    ("s4", (1, 2, 8, 64), (4, 4), (4, 4), (0, 0, 0, 0), 0),
]

ODD = [0x00000000, 0x80000000, 0x7FC00001, 0xFFC00002, 0x7FC00003, 0xFF800000, 0x7FC00004]


def f32(u):
    return struct.unpack("<f", struct.pack("<I", u))[0]


def data(shape):
    n = int(np.prod(shape))
    u = np.zeros(n, dtype=np.uint32)
    for i in range(n):
        r = (i * 7919 + i // 13) % 101
        if r < 40:
            u[i] = ODD[r % 2 if r % 4 < 2 else (r // 4) % 7]
        else:
            u[i] = struct.unpack("<I", struct.pack("<f", float(r % 9 - 6)))[0]
    return u.view(np.float32).reshape(shape)


def outsize(n, k, s, p0, p1, ceil):
    span = n + p0 + p1 - k
    o = (math.ceil(span / s) if ceil else span // s) + 1
    if ceil and (o - 1) * s >= n + p0:
        o -= 1
    return o


def maxpool(x, k, s, pads, ceil):
    n, c, h, w = x.shape
    oh = outsize(h, k[0], s[0], pads[0], pads[2], ceil)
    ow = outsize(w, k[1], s[1], pads[1], pads[3], ceil)
    y = np.zeros((n, c, oh, ow), dtype=np.float32)
    for b in range(n):
        for ch in range(c):
            for oy in range(oh):
                for ox in range(ow):
                    m = np.float32(-np.inf)
                    for ky in range(k[0]):
                        for kx in range(k[1]):
                            iy, ix = oy * s[0] - pads[0] + ky, ox * s[1] - pads[1] + kx
                            if 0 <= iy < h and 0 <= ix < w:
                                v = x[b, ch, iy, ix]
                                if v != v or v > m:
                                    m = v
                    y[b, ch, oy, ox] = m
    return y


def main():
    for name, shape, k, s, pads, ceil in CASES:
        d = os.path.join(HERE, name)
        os.makedirs(d, exist_ok=True)
        x = data(shape)
        y = maxpool(x, k, s, pads, ceil)
        node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=list(k), strides=list(s),
                                pads=list(pads), ceil_mode=ceil)
        g = helper.make_graph([node], name, [helper.make_tensor_value_info("x", T.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", T.FLOAT, y.shape)])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        onnx.checker.check_model(m)
        onnx.save(m, os.path.join(d, "model.onnx"))
        np.save(os.path.join(d, "x.npy"), x)
        np.save(os.path.join(d, "want.npy"), y)


main()
