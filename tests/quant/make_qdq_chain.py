#!/usr/bin/python3
"""Writes tests/quant/fixed/qdq_chain: four QDQ inverted residual blocks in a row with
residual adds between them (MobileNetV2's stages, as `kiln quantize` writes them), which
the layout pass keeps channels-last from the first projection to the last expansion
(passes/layout.c, block_outputs_channels_last): the projections and the residual adds
write NHWC, the next expansions read it. Expected outputs are computed here from the
operator definitions: the convolutions in Python integers with fixed-point
requantization (make_qdq_block.conv), the adds as the QDQ graph's float32 operations
(DequantizeLinear, Add, QuantizeLinear rounding half to even).

- block A: xq u8 [1, 16, 9, 11] -> 1x1 16 -> 64 -> depthwise 3x3 -> 1x1 64 -> 22 -> a
  (22 channels: the next expansions' input words at a pixel end in 2 bytes of the next
  pixel, whose weights are zero);
- block B: a -> 1x1 22 -> 96 -> depthwise 3x3 -> 1x1 96 -> 22, + a -> s1 (u8);
- block C: s1 -> 1x1 22 -> 96 -> depthwise -> 1x1 -> 22, + s1 -> s2 (u8, zero point 0
  and a Relu on the sum: a clamp in the add);
- block D: s2 -> 1x1 22 -> 96 -> depthwise 3x3 stride 2 (9x11 -> 5x6) -> 1x1 96 -> 32 -> y
  int8 (zero point -7), the graph's only output (NCHW: the chain ends at D's projection).

    /usr/bin/python3 tests/quant/make_qdq_chain.py
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_qdq_block  # noqa: E402
from qref import dq, init, save  # noqa: E402

make_qdq_block.rng = np.random.default_rng(1205)
rng = make_qdq_block.rng
N = helper.make_node


def add(nodes, inits, pre, an, a, as_, az, bn, b, bs, bz, ys, yz, relu):
    """DequantizeLinear(a) + DequantizeLinear(b) [-> Relu] -> QuantizeLinear (u8)."""
    f = (dq(a, as_, az) + dq(b, bs, bz)).astype(np.float32)
    if relu:
        f = np.maximum(f, np.float32(0))
    q = np.rint((f / np.float32(ys)).astype(np.float32)).astype(np.int64) + int(yz)
    y = np.clip(q, 0, 255).astype(np.uint8)
    nodes += [
        N("DequantizeLinear", [an, pre + "as", pre + "az"], [pre + "af"], name=pre + "dq_a"),
        N("DequantizeLinear", [bn, pre + "bs", pre + "bz"], [pre + "bf"], name=pre + "dq_b"),
        N("Add", [pre + "af", pre + "bf"], [pre + "sum"], name=pre + "add"),
    ]
    s = pre + "sum"
    if relu:
        nodes.append(N("Relu", [s], [pre + "r"], name=pre + "relu"))
        s = pre + "r"
    nodes.append(N("QuantizeLinear", [s, pre + "ys", pre + "yz"], [pre + "y"], name=pre + "q"))
    inits += [init(pre + "as", np.float32(as_)), init(pre + "az", az),
              init(pre + "bs", np.float32(bs)), init(pre + "bz", bz),
              init(pre + "ys", np.float32(ys)), init(pre + "yz", yz)]
    return y


def main():
    block = make_qdq_block.block
    nodes, inits = [], [init("lo", np.float32(0)), init("hi", np.float32(6))]
    xq = rng.integers(0, 256, (1, 16, 9, 11), dtype=np.uint8)
    u8 = np.uint8
    a = block(nodes, inits, "ba", "xq", xq, 0.0173, u8(121), 64, 22, 1, 0.087, u8(128), u8,
              u8(0))
    pb = block(nodes, inits, "bb", "bap_y", a, 0.087, u8(128), 96, 22, 1, 0.061, u8(119), u8,
               u8(0))
    s1 = add(nodes, inits, "r1_", "bbp_y", pb, 0.061, u8(119), "bap_y", a, 0.087, u8(128),
             0.104, u8(126), False)
    pc = block(nodes, inits, "bc", "r1_y", s1, 0.104, u8(126), 96, 22, 1, 0.075, u8(131), u8,
               u8(0))
    s2 = add(nodes, inits, "r2_", "bcp_y", pc, 0.075, u8(131), "r1_y", s1, 0.104, u8(126),
             0.058, u8(0), True)
    y = block(nodes, inits, "bd", "r2_y", s2, 0.058, u8(0), 96, 32, 2, 0.081, np.int8(-7),
              np.int8, u8(57))
    nodes.append(N("Identity", ["bdp_y"], ["y"], name="out"))
    g = helper.make_graph(nodes, "qdq_chain",
                          [helper.make_tensor_value_info("xq", TensorProto.UINT8, xq.shape)],
                          [helper.make_tensor_value_info("y", TensorProto.INT8, y.shape)], inits)
    save("../fixed/qdq_chain", g, [xq], [y])


if __name__ == "__main__":
    main()
