#!/usr/bin/python3
"""Writes tests/quant/models/qdq_pool: MaxPool between DequantizeLinear and
QuantizeLinear, which the qdq pass rewrites into a MaxPool of the 8-bit values where both
sides share the scale and zero point (passes/qdq.c, rewrite_maxpool; the pool pass then
builds its row walks in 8 bits, passes/pool.c). Expected outputs from the ONNX operator
definitions in numpy float32 (DequantizeLinear: (x - zp) * scale; MaxPool with -inf
padding; QuantizeLinear: rint(x / scale) + zp, saturated):

  a u8 [2, 5, 17, 41], c i8 [2, 5, 17, 41]
  p1 = Q_u8(MaxPool3x3 s2 pad 1 (DQ(a)))   same (s, z): ResNet's pool after its stem
  p2 = Q_i8(MaxPool2x2 s1 (DQ(c)))         same (s, z), int8, stride 1 (vector rows)
  p3 = Q_u8(MaxPool3x3 s1 pad 1 (DQ(a)))   another scale: stays float
Rows of 41 (and 20, 40 outputs) give vector bodies, scalar tails and borders.

    /usr/bin/python3 tests/quant/make_qdq_pool.py
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qref import dq, init, q, save  # noqa: E402

rng = np.random.default_rng(21)
N = helper.make_node
F = np.float32


def maxpool(x, k, s, p):
    n, c, h, w = x.shape
    xp = np.full((n, c, h + 2 * p, w + 2 * p), -np.inf, F)
    xp[:, :, p:p + h, p:p + w] = x
    oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    y = np.full((n, c, oh, ow), -np.inf, F)
    for i in range(k):
        for j in range(k):
            y = np.maximum(y, xp[:, :, i:i + s * (oh - 1) + 1:s, j:j + s * (ow - 1) + 1:s])
    return y


def main():
    shp = (2, 5, 17, 41)
    a = rng.integers(0, 256, shp, dtype=np.uint8)
    c = rng.integers(-128, 128, shp, dtype=np.int8)
    p = {"a": (0.0371, np.uint8(7)), "c": (0.043, np.int8(-5)), "o": (0.0523, np.uint8(112))}
    inits, nodes = [], []
    for k, (s, z) in p.items():
        inits += [init(k + "_s", F(s)), init(k + "_z", z)]

    def pool(x, out, k, s, pad):  # node named after its output
        nodes.append(N("MaxPool", [x], [out], kernel_shape=[k, k], strides=[s, s],
                       pads=[pad] * 4, name="pool_" + out))

    nodes.append(N("DequantizeLinear", ["a", "a_s", "a_z"], ["a_f"]))
    pool("a_f", "m1", 3, 2, 1)
    nodes.append(N("QuantizeLinear", ["m1", "a_s", "a_z"], ["p1"]))
    p1 = q(maxpool(dq(a, *p["a"]), 3, 2, 1), *p["a"], np.uint8)
    nodes.append(N("DequantizeLinear", ["c", "c_s", "c_z"], ["c_f"]))
    pool("c_f", "m2", 2, 1, 0)
    nodes.append(N("QuantizeLinear", ["m2", "c_s", "c_z"], ["p2"]))
    p2 = q(maxpool(dq(c, *p["c"]), 2, 1, 0), *p["c"], np.int8)
    pool("a_f", "m3", 3, 1, 1)
    nodes.append(N("QuantizeLinear", ["m3", "o_s", "o_z"], ["p3"]))
    p3 = q(maxpool(dq(a, *p["a"]), 3, 1, 1), *p["o"], np.uint8)

    T = helper.make_tensor_value_info
    ins = [T("a", TensorProto.UINT8, shp), T("c", TensorProto.INT8, shp)]
    outs = [T("p1", TensorProto.UINT8, p1.shape), T("p2", TensorProto.INT8, p2.shape),
            T("p3", TensorProto.UINT8, p3.shape)]
    g = helper.make_graph(nodes, "qdq_pool", ins, outs, inits)
    save("qdq_pool", g, [a, c], [p1, p2, p3])


if __name__ == "__main__":
    main()
