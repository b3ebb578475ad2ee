#!/usr/bin/python3
"""Writes tests/quant/fixed/qdq_res: a small QDQ ResNet (stem, 8-bit MaxPool, three basic
blocks with residual adds, the second one strided with a 1x1 downsample), which the layout
pass keeps channels-last on x86 VNNI from the stem's output to the last block's input
(passes/layout.c, res_channels_last): the 3x3 layers read a padded channels-last copy of
their input, the strided 1x1 reads its input in place, the dot tiles store vectors of
output channels straight into NHWC. Expected outputs from the operator definitions: the
convolutions in Python integers with fixed-point requantization (make_qdq_block.conv), the
pool and the adds as the QDQ graph's float32 operations (DequantizeLinear, MaxPool, Add,
Relu, QuantizeLinear rounding half to even).

- stem: xq u8 [1, 3, 26, 30] -> 7x7 stride 2 pad 3, 3 -> 16, Relu6 -> s (13 x 15, zero
  point 0);
- pool: MaxPool 3x3 stride 2 pad 1 on s (QDQ around it, one scale) -> p (7 x 8);
- block 1: p -> 3x3 16 -> 16, Relu6 (zero point 3: the padded copy's pads hold 3) -> 3x3
  16 -> 16 -> + p, Relu -> r1 (u8, zero point 0);
- block 2: r1 -> 3x3 stride 2 16 -> 32, Relu6 -> 3x3 32 -> 32; r1 -> 1x1 stride 2 16 -> 32;
  the two added, Relu -> r2 (4 x 4);
- block 3: r2 -> 3x3 32 -> 32, Relu6 -> 3x3 32 -> 32 -> + r2, Relu -> y, the graph's only
  output (NCHW: the chain ends at block 3's first convolution's input).

    /usr/bin/python3 tests/quant/make_qdq_res.py
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_qdq_block  # noqa: E402
from make_qdq_chain import add  # noqa: E402
from make_qdq_pool import maxpool  # noqa: E402
from qref import dq, init, q, save  # noqa: E402

make_qdq_block.rng = np.random.default_rng(1206)
rng = make_qdq_block.rng
N = helper.make_node
u8 = np.uint8


def pool(nodes, inits, pre, xname, xq, s, z):
    """DequantizeLinear -> MaxPool 3x3 stride 2 pad 1 -> QuantizeLinear (same scale)."""
    nodes += [
        N("DequantizeLinear", [xname, pre + "s", pre + "z"], [pre + "f"], name=pre + "dq"),
        N("MaxPool", [pre + "f"], [pre + "m"], kernel_shape=[3, 3], strides=[2, 2],
          pads=[1, 1, 1, 1], name=pre + "pool"),
        N("QuantizeLinear", [pre + "m", pre + "s", pre + "z"], [pre + "y"], name=pre + "q"),
    ]
    inits += [init(pre + "s", np.float32(s)), init(pre + "z", z)]
    return q(maxpool(dq(xq, s, z), 3, 2, 1), s, z, np.uint8)


def main():
    conv = make_qdq_block.conv
    nodes, inits = [], [init("lo", np.float32(0)), init("hi", np.float32(6))]
    xq = rng.integers(0, 256, (1, 3, 26, 30), dtype=np.uint8)
    s = conv(nodes, inits, "st_", "xq", xq, 0.0173, u8(121), 16, 7, 1, 2, 0.031, u8(0), u8,
             True)
    p = pool(nodes, inits, "mp_", "st_y", s, 0.031, u8(0))
    a = conv(nodes, inits, "a1_", "mp_y", p, 0.031, u8(0), 16, 3, 1, 1, 0.027, u8(3), u8, True)
    b = conv(nodes, inits, "a2_", "a1_y", a, 0.027, u8(3), 16, 3, 1, 1, 0.061, u8(119), u8,
             False)
    r1 = add(nodes, inits, "r1_", "a2_y", b, 0.061, u8(119), "mp_y", p, 0.031, u8(0), 0.052,
             u8(0), True)
    a = conv(nodes, inits, "b1_", "r1_y", r1, 0.052, u8(0), 32, 3, 1, 2, 0.029, u8(0), u8, True)
    b = conv(nodes, inits, "b2_", "b1_y", a, 0.029, u8(0), 32, 3, 1, 1, 0.066, u8(125), u8,
             False)
    d = conv(nodes, inits, "bd_", "r1_y", r1, 0.052, u8(0), 32, 1, 1, 2, 0.058, u8(131), u8,
             False)
    r2 = add(nodes, inits, "r2_", "b2_y", b, 0.066, u8(125), "bd_y", d, 0.058, u8(131), 0.071,
             u8(0), True)
    a = conv(nodes, inits, "c1_", "r2_y", r2, 0.071, u8(0), 32, 3, 1, 1, 0.033, u8(0), u8, True)
    b = conv(nodes, inits, "c2_", "c1_y", a, 0.033, u8(0), 32, 3, 1, 1, 0.069, u8(122), u8,
             False)
    y = add(nodes, inits, "r3_", "c2_y", b, 0.069, u8(122), "r2_y", r2, 0.071, u8(0), 0.083,
            u8(0), True)
    nodes.append(N("Identity", ["r3_y"], ["y"], name="out"))
    g = helper.make_graph(nodes, "qdq_res",
                          [helper.make_tensor_value_info("xq", TensorProto.UINT8, xq.shape)],
                          [helper.make_tensor_value_info("y", TensorProto.UINT8, y.shape)], inits)
    save("../fixed/qdq_res", g, [xq], [y])


if __name__ == "__main__":
    main()
