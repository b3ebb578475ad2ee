#!/usr/bin/python3
"""Writes tests/quant/fixed/qdq_stem: QDQ convolutions over few input channels (a CNN's
first layer), which the tile pass builds as pixel tiles on CPUs with vectors
(passes/tile.c, tile_stem_int: vectors of output pixels along a row, the input in
phase-split words), and a strided 1x1 convolution, with expected outputs computed here from the operator definitions
in Python integers (conv_ref, fixed-point requantization make_qdq_fixed.requant_fixed):

- xq u8 [1, 3, 37, 41], zero point 119 (the pads hold it) -> Conv 7x7 stride 2 pad 3,
  10 output channels (channel tiles of 3 and a last one of 1), -> Relu -> y1 u8: 21
  outputs a row, a whole vector and a partial one on 16 lanes, two and a partial on 8;
- aq i8 [1, 1, 9, 35], zero point -3 (the dot shifts int8 inputs by 128) -> Conv 3x3
  stride 1, pads (1, 0, 2, 1) (top, left, bottom, right), 20 output channels -> y2 i8
  (zero point 5): 34 outputs a row;
- the same aq -> Conv 3x3 stride (2, 3), pads (0, 2, 1, 2), 4 output channels -> y3 u8
  (zero point 128): 13 outputs a row, fewer than 16 lanes (the plain nest on AVX-512,
  the pixel tiles with 3 column phases on 8 and 4 lanes);
- bq u8 [1, 8, 13, 22], zero point 77 -> Conv 1x1 stride 2 (ResNet's downsample), 24
  output channels -> y4 u8 (zero point 120): the pointwise pixel tiles over words
  gathered at stride 2 (passes/tile.c, pw_words_strided), 7 x 11 = 77 pixels, a partial
  last vector.

    /usr/bin/python3 tests/quant/make_qdq_stem.py
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_qdq_fixed import requant_fixed  # noqa: E402
from make_quant_models import conv_ref, init, save  # noqa: E402

rng = np.random.default_rng(1205)
N = helper.make_node


def conv(nodes, inits, pre, xname, xq, xs, xz, cout, k, stride, pads, ys, yz, ydt, relu):
    """DequantizeLinear(w), (b) -> Conv -> [Relu] -> QuantizeLinear; returns y. pads in
    ONNX order (top, left, bottom, right)."""
    cin = xq.shape[1]
    w = rng.integers(-127, 128, (cout, cin, k, k), dtype=np.int8)
    ws = (rng.random(cout) * 0.02 + 0.004).astype(np.float32)
    b = rng.integers(-3000, 3000, cout).astype(np.int32)
    bs = (np.float32(xs) * ws).astype(np.float32)
    acc = conv_ref(xq, xz, w, np.zeros(cout, np.int64), strides=stride, pads=pads, bias=b)
    if relu:  # Relu before QuantizeLinear: max(acc, 0) requantizes to the same value
        acc = np.maximum(acc, 0)
    y = requant_fixed(acc, xs, ws, ys, yz, ydt, 1)
    f = pre + "c"
    nodes += [
        N("DequantizeLinear", [xname, pre + "xs", pre + "xz"], [pre + "xf"], name=pre + "dq_x"),
        N("DequantizeLinear", [pre + "w", pre + "ws", pre + "wz"], [pre + "wf"], axis=0,
          name=pre + "dq_w"),
        N("DequantizeLinear", [pre + "b", pre + "bs"], [pre + "bf"], axis=0, name=pre + "dq_b"),
        N("Conv", [pre + "xf", pre + "wf", pre + "bf"], [f], strides=list(stride),
          pads=list(pads), name=pre + "conv"),
    ]
    if relu:
        nodes.append(N("Relu", [f], [pre + "r"], name=pre + "relu"))
        f = pre + "r"
    nodes.append(N("QuantizeLinear", [f, pre + "ys", pre + "yz"], [pre + "y"], name=pre + "q"))
    inits += [init(pre + "xs", np.float32(xs)), init(pre + "xz", xz), init(pre + "w", w),
              init(pre + "ws", ws), init(pre + "wz", np.zeros(cout, np.int8)),
              init(pre + "b", b), init(pre + "bs", bs), init(pre + "ys", np.float32(ys)),
              init(pre + "yz", yz)]
    return y


def main():
    nodes, inits = [], []
    xq = rng.integers(0, 256, (1, 3, 37, 41), dtype=np.uint8)
    aq = rng.integers(-128, 128, (1, 1, 9, 35), dtype=np.int8)
    y1 = conv(nodes, inits, "s1_", "xq", xq, 0.0173, np.uint8(119), 10, 7, (2, 2),
              (3, 3, 3, 3), 0.9, np.uint8(0), np.uint8, True)
    y2 = conv(nodes, inits, "s2_", "aq", aq, 0.021, np.int8(-3), 20, 3, (1, 1), (1, 0, 2, 1),
              0.11, np.int8(5), np.int8, False)
    y3 = conv(nodes, inits, "s3_", "aq", aq, 0.021, np.int8(-3), 4, 3, (2, 3), (0, 2, 1, 2),
              0.13, np.uint8(128), np.uint8, False)
    bq = rng.integers(0, 256, (1, 8, 13, 22), dtype=np.uint8)
    y4 = conv(nodes, inits, "s4_", "bq", bq, 0.019, np.uint8(77), 24, 1, (2, 2), (0, 0, 0, 0),
              0.23, np.uint8(120), np.uint8, False)
    for k in (1, 2, 3, 4):
        nodes.append(N("Identity", ["s%d_y" % k], ["y%d" % k], name="out%d" % k))
    g = helper.make_graph(nodes, "qdq_stem",
                          [helper.make_tensor_value_info("xq", TensorProto.UINT8, xq.shape),
                           helper.make_tensor_value_info("aq", TensorProto.INT8, aq.shape),
                           helper.make_tensor_value_info("bq", TensorProto.UINT8, bq.shape)],
                          [helper.make_tensor_value_info("y1", TensorProto.UINT8, y1.shape),
                           helper.make_tensor_value_info("y2", TensorProto.INT8, y2.shape),
                           helper.make_tensor_value_info("y3", TensorProto.UINT8, y3.shape),
                           helper.make_tensor_value_info("y4", TensorProto.UINT8, y4.shape)],
                          inits)
    save("../fixed/qdq_stem", g, [xq, aq, bq], [y1, y2, y3, y4])


if __name__ == "__main__":
    main()
