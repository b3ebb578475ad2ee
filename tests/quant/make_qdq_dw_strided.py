#!/usr/bin/python3
"""Writes tests/quant/fixed/qdq_dw_strided: strided QDQ depthwise convolutions in fixed
point (the qdq pass's QLinearConv), whose staged words are built from strided vector loads
on CPUs (passes/depthwise.c, dw_word_row) and whose accumulators are requantized in the
high-word form (kl_requant_hi32), which the LLVM emitter builds from 64-bit multiplies of
the even and odd i32 lanes (codegen/llvm/emit_llvm.c, mulhi32):

  xq u8 [1, 24, 13, 71] (zero point 131) -> depthwise Conv 3x3 stride 2 pad 1 (int8
  per-channel weights, int32 bias) -> QuantizeLinear i8 (zero point 3, no clamp: negative
  accumulators kept) -> depthwise Conv 3x3 strides (2, 3) pads (1, 0, 1, 2) -> Relu ->
  QuantizeLinear u8.

The scales put most outputs inside the 8-bit range (accumulators of both signs up to about
2^18, multipliers from 2^-10 to 2^-7), so the high word of every product matters; rows of
36 and 12 outputs give full 16-lane tiles and overlapping ones. Expected outputs from the
operator definitions: int64 sums in numpy (make_quant_models.conv_ref), then the
fixed-point requantization in exact Python integers (make_qdq_fixed.requant_fixed).

    /usr/bin/python3 tests/quant/make_qdq_dw_strided.py
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_qdq_fixed import requant_fixed  # noqa: E402
from qref import conv_ref, init, save  # noqa: E402

N = helper.make_node


def main():
    r = np.random.default_rng(2029)
    c = 24
    xq = r.integers(0, 256, (1, c, 13, 71), dtype=np.uint8)
    xs, xz = np.float32(0.02), np.uint8(131)
    w1 = r.integers(-127, 128, (c, 1, 3, 3), dtype=np.int8)
    w1s = (r.random(c) * 0.008 + 0.002).astype(np.float32)
    b1 = r.integers(-20000, 20000, c).astype(np.int32)
    b1s = (xs * w1s).astype(np.float32)  # float32 product, as the qdq pass checks
    y1s, y1z = np.float32(0.03), np.int8(3)
    acc1 = conv_ref(xq, xz, w1, np.zeros(c, np.int64), group=c, strides=(2, 2),
                    pads=(1, 1, 1, 1), bias=b1)
    y1 = requant_fixed(acc1, xs, w1s, y1s, y1z, np.int8, 1)
    w2 = r.integers(-127, 128, (c, 1, 3, 3), dtype=np.int8)
    w2s = (r.random(c) * 0.01 + 0.004).astype(np.float32)
    y2s, y2z = np.float32(0.05), np.uint8(11)
    acc2 = conv_ref(y1, y1z, w2, np.zeros(c, np.int64), group=c, strides=(2, 3),
                    pads=(1, 0, 1, 2))
    y2 = requant_fixed(np.maximum(acc2, 0), y1s, w2s, y2s, y2z, np.uint8, 1)
    nodes = [
        N("DequantizeLinear", ["xq", "xs", "xz"], ["xf"], name="dq_x"),
        N("DequantizeLinear", ["w1", "w1s", "w1z"], ["w1f"], axis=0, name="dq_w1"),
        N("DequantizeLinear", ["b1", "b1s"], ["b1f"], axis=0, name="dq_b1"),
        N("Conv", ["xf", "w1f", "b1f"], ["c1"], group=c, strides=[2, 2], pads=[1, 1, 1, 1],
          name="dw1"),
        N("QuantizeLinear", ["c1", "y1s", "y1z"], ["y1"], name="q1"),
        N("DequantizeLinear", ["y1", "y1s", "y1z"], ["y1f"], name="dq_y1"),
        N("DequantizeLinear", ["w2", "w2s", "w2z"], ["w2f"], axis=0, name="dq_w2"),
        N("Conv", ["y1f", "w2f"], ["c2"], group=c, strides=[2, 3], pads=[1, 0, 1, 2],
          name="dw2"),
        N("Relu", ["c2"], ["r2"], name="relu2"),
        N("QuantizeLinear", ["r2", "y2s", "y2z"], ["y2"], name="q2"),
    ]
    inits = [init("xs", xs), init("xz", xz), init("w1", w1), init("w1s", w1s),
             init("w1z", np.zeros(c, np.int8)), init("b1", b1), init("b1s", b1s),
             init("y1s", y1s), init("y1z", y1z), init("w2", w2), init("w2s", w2s),
             init("w2z", np.zeros(c, np.int8)), init("y2s", y2s), init("y2z", y2z)]
    g = helper.make_graph(nodes, "qdq_dw_strided",
                          [helper.make_tensor_value_info("xq", TensorProto.UINT8, xq.shape)],
                          [helper.make_tensor_value_info("y2", TensorProto.UINT8, y2.shape),
                           helper.make_tensor_value_info("y1", TensorProto.INT8, y1.shape)], inits)
    save("../fixed/qdq_dw_strided", g, [xq], [y2, y1])
    for name, y, lo, hi in (("y1", y1, -128, 127), ("y2", y2, 0, 255)):
        inside = np.mean((y > lo) & (y < hi))
        print(f"{name} {y.shape}: {inside:.0%} inside the range")


if __name__ == "__main__":
    main()
