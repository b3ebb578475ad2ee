#!/usr/bin/python3
"""Writes tests/quant/fixed/qdq_head: a residual block whose add feeds the float head
(DequantizeLinear -> GlobalAveragePool), as ResNet's last block does. On x86 VNNI the layout
pass keeps the block channels-last up to and including the add, whose DequantizeLinear
writes NHWC and whose pool reads it so (passes/layout.c, res_channels_last with
dq_gap_reader); elsewhere all of it is NCHW. 40 channels (two vectors of 16 and a tail of
8), 5 x 6 pixels. The add's scale is a power of two, so every dequantized value and every
partial sum of a channel is exact in float32 and the mean is the same in any order of the
sums (the interpreter's pools sum in double, the compiled ones in float32). Expected
outputs from the operator definitions: the convolutions in Python integers with
fixed-point requantization (make_qdq_block.conv), the add as the QDQ graph's float32
operations, the mean in Python fractions rounded once to float32.

- c1: xq u8 [1, 16, 5, 6] -> 3x3 16 -> 40, Relu6 -> a (zero point 0);
- c2: a -> 3x3 40 -> 40 -> b (zero point 119);
- add: a + b, Relu -> r (scale 1/16, zero point 3);
- head: DequantizeLinear(r) -> GlobalAveragePool -> y f32 [1, 40, 1, 1], the output.

    /usr/bin/python3 tests/quant/make_qdq_head.py
"""
import os
import sys
from fractions import Fraction

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_qdq_block  # noqa: E402
from make_qdq_chain import add  # noqa: E402
from qref import dq, init, save  # noqa: E402

make_qdq_block.rng = np.random.default_rng(1208)
rng = make_qdq_block.rng
N = helper.make_node
u8 = np.uint8


def main():
    conv = make_qdq_block.conv
    nodes, inits = [], [init("lo", np.float32(0)), init("hi", np.float32(6))]
    xq = rng.integers(0, 256, (1, 16, 5, 6), dtype=np.uint8)
    a = conv(nodes, inits, "c1_", "xq", xq, 0.0173, u8(121), 40, 3, 1, 1, 0.031, u8(0), u8,
             True)
    b = conv(nodes, inits, "c2_", "c1_y", a, 0.031, u8(0), 40, 3, 1, 1, 0.061, u8(119), u8,
             False)
    rs, rz = 0.0625, u8(3)
    r = add(nodes, inits, "r_", "c2_y", b, 0.061, u8(119), "c1_y", a, 0.031, u8(0), rs, rz, True)
    f = dq(r, rs, rz)
    y = np.zeros((1, 40, 1, 1), np.float32)
    for c in range(40):
        total = sum(Fraction(float(v)) for v in f[0, c].reshape(-1))
        y[0, c, 0, 0] = np.float32(float(total / f[0, c].size))
    assert len(set(r.reshape(-1).tolist())) > 20
    nodes += [
        N("DequantizeLinear", ["r_y", "h_s", "h_z"], ["h_f"], name="head_dq"),
        N("GlobalAveragePool", ["h_f"], ["y"], name="head_pool"),
    ]
    inits += [init("h_s", np.float32(rs)), init("h_z", rz)]
    g = helper.make_graph(nodes, "qdq_head",
                          [helper.make_tensor_value_info("xq", TensorProto.UINT8, xq.shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, y.shape)], inits)
    save("../fixed/qdq_head", g, [xq], [y])


if __name__ == "__main__":
    main()
