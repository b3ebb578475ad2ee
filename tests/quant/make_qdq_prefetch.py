#!/usr/bin/python3
"""Writes tests/quant/fixed/qdq_prefetch: QDQ 3x3 convolutions with more than one block
of output channels, for the dot tiles' weight prefetch (passes/tile.c, conv_pf: each
block's tiles prefetch the next block's packed weights). The pass only does so for
weights over half the second-level cache (ResNet-18's 14x14 and 7x7 layers); these are
small, so tests/quant/prefetch.sh forces it with a schedule file's pf=1 and checks the
bits; the default schedules run them without. Expected outputs from the operator
definitions in Python integers (make_quant_models.conv_ref, fixed-point requantization
make_qdq_fixed.requant_fixed):

- xq u8 [1, 16, 9, 11], zero point 101 -> Conv 3x3 stride 1 pads 1, 80 output channels
  (blocks of 32: two and a partial one of 16 on AVX-512; five of 16 on AVX2) -> y1 u8
  (zero point 128);
- aq i8 [1, 12, 10, 13], zero point -5 -> Conv 3x3 stride 2 pads (1, 0, 1, 1), 72
  output channels -> Relu -> y2 u8 (zero point 0).

    /usr/bin/python3 tests/quant/make_qdq_prefetch.py
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_qdq_stem import conv  # noqa: E402
from make_quant_models import save  # noqa: E402

N = helper.make_node


def main():
    import make_qdq_stem
    make_qdq_stem.rng = np.random.default_rng(1206)
    rng = make_qdq_stem.rng
    nodes, inits = [], []
    xq = rng.integers(0, 256, (1, 16, 9, 11), dtype=np.uint8)
    aq = rng.integers(-128, 128, (1, 12, 10, 13), dtype=np.int8)
    y1 = conv(nodes, inits, "p1_", "xq", xq, 0.0173, np.uint8(101), 80, 3, (1, 1),
              (1, 1, 1, 1), 0.8, np.uint8(128), np.uint8, False)
    y2 = conv(nodes, inits, "p2_", "aq", aq, 0.021, np.int8(-5), 72, 3, (2, 2), (1, 0, 1, 1),
              0.3, np.uint8(0), np.uint8, True)
    for k in (1, 2):
        nodes.append(N("Identity", ["p%d_y" % k], ["y%d" % k], name="out%d" % k))
    g = helper.make_graph(nodes, "qdq_prefetch",
                          [helper.make_tensor_value_info("xq", TensorProto.UINT8, xq.shape),
                           helper.make_tensor_value_info("aq", TensorProto.INT8, aq.shape)],
                          [helper.make_tensor_value_info("y1", TensorProto.UINT8, y1.shape),
                           helper.make_tensor_value_info("y2", TensorProto.UINT8, y2.shape)],
                          inits)
    save("../fixed/qdq_prefetch", g, [xq, aq], [y1, y2])


if __name__ == "__main__":
    main()
