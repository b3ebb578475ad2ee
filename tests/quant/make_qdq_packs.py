#!/usr/bin/python3
"""Writes tests/quant/fixed/qdq_packs: three fixed-point QDQ 3x3 convolutions in a chain
whose two inner values the layout pass keeps channels-last on x86 VNNI
(passes/layout.c, res_channels_last), so the channel tiles store their requantized
vectors of 16 output channels straight into NHWC, 8-bit and in groups of four, which the
LLVM emitter writes as one saturating pack chain (codegen/llvm/emit_llvm.c,
store_packs_x86: vpackssdw, vpacksswb or vpackuswb, vpermd, then the clamp's bounds on
bytes). The cases it must keep bit-exact:

- c1: xq u8 [1, 16, 9, 11] -> 3x3, 16 -> 32, Clip(0, 6) -> int8, zero point -37: the
  signed packs and a clamp [-37, -37 + round(6 / s)] inside int8's range;
- c2: int8 -> 3x3, 32 -> 48, no Clip -> int8, zero point 5: the signed packs, no clamp
  (every output of the type's range; scales that saturate some of them);
- c3: int8 -> 3x3, 48 -> 16, Clip(0, 6) -> u8, zero point 0: NCHW, the graph's output.

Expected outputs from the operator definitions in Python integers with fixed-point
requantization (make_qdq_block.conv).

    /usr/bin/python3 tests/quant/make_qdq_packs.py
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_qdq_block  # noqa: E402
from make_qdq_dw import qbound_t  # noqa: E402
from qref import init, save  # noqa: E402

make_qdq_block.rng = np.random.default_rng(1207)
rng = make_qdq_block.rng
# Clip(0, 6) of an int8 output (make_qdq_block's relu6 is u8's): QuantizeLinear of the bounds
make_qdq_block.relu6 = lambda y, s, z: np.clip(y, qbound_t(0, s, z, y.dtype),
                                               qbound_t(6, s, z, y.dtype)).astype(y.dtype)


def main():
    conv = make_qdq_block.conv
    nodes, inits = [], [init("lo", np.float32(0)), init("hi", np.float32(6))]
    xq = rng.integers(0, 256, (1, 16, 9, 11), dtype=np.uint8)
    a = conv(nodes, inits, "c1_", "xq", xq, 0.0173, np.uint8(121), 32, 3, 1, 1, 0.037,
             np.int8(-37), np.int8, True)
    b = conv(nodes, inits, "c2_", "c1_y", a, 0.037, np.int8(-37), 48, 3, 1, 1, 0.08,
             np.int8(5), np.int8, False)
    y = conv(nodes, inits, "c3_", "c2_y", b, 0.08, np.int8(5), 16, 3, 1, 1, 0.045,
             np.uint8(0), np.uint8, True)
    for v, lo, hi in ((a, -37, qbound_t(6, 0.037, np.int8(-37), np.int8)), (b, -128, 127)):
        assert v.min() == lo and v.max() == hi, (v.min(), v.max())
        assert ((v > lo) & (v < hi)).mean() > 0.1, ((v > lo) & (v < hi)).mean()
    g = helper.make_graph(nodes, "qdq_packs",
                          [helper.make_tensor_value_info("xq", TensorProto.UINT8, xq.shape)],
                          [helper.make_tensor_value_info("c3_y", TensorProto.UINT8, y.shape)],
                          inits)
    save("../fixed/qdq_packs", g, [xq], [y])


if __name__ == "__main__":
    main()
