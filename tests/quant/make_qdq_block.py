#!/usr/bin/python3
"""Writes tests/quant/fixed/qdq_block: two QDQ inverted residual blocks (MobileNetV2's
expansion 1x1 -> Relu6 -> depthwise 3x3 -> Relu6 -> projection 1x1, as `kiln quantize`
writes them), which the layout pass keeps channels-last between the 1x1 convolutions
(passes/layout.c, expanded_channels_last_int), with expected outputs computed here from
the operator definitions in Python integers (conv_ref, fixed-point requantization
make_qdq_fixed.requant_fixed):

- block 1: xq u8 [1, 16, 9, 11] -> 1x1 16 -> 61 (channel blocks of 16, 8, 4 and single
  channels in the depthwise's vectors along channels; 61 not a multiple of 4 for the
  projection's input words) -> Relu6 -> depthwise 3x3 pad 1 stride 1 -> Relu6 ->
  1x1 61 -> 16 -> y1 u8 (zero point 131);
- block 2: y1 -> 1x1 16 -> 96 -> Relu6 into u8 with zero point 57 (so the depthwise's
  input zero point is not 0: its padding taps, left out of the sums, are corrected for)
  -> depthwise 3x3 pad 1 stride 2 (9x11 -> 5x6) -> Relu6 -> 1x1 96 -> 24 -> y2 int8
  (zero point -7).
Both outputs are graph outputs; the expanded tensors are not.

    /usr/bin/python3 tests/quant/make_qdq_block.py
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_qdq_dw import qbound  # noqa: E402
from make_qdq_fixed import requant_fixed  # noqa: E402
from make_quant_models import conv_ref, init, save  # noqa: E402

rng = np.random.default_rng(1207)
N = helper.make_node


def relu6(y, s, z):
    return np.clip(y, qbound(0, s, z), qbound(6, s, z)).astype(np.uint8)


def conv(nodes, inits, pre, xname, xq, xs, xz, cout, k, group, stride, ys, yz, ydt, clip):
    """DequantizeLinear(w), (b) -> Conv -> [Clip(0, 6)] -> QuantizeLinear; returns y."""
    cin = xq.shape[1]
    cg = cin // group
    w = rng.integers(-127, 128, (cout, cg, k, k), dtype=np.int8)
    ws = (rng.random(cout) * 0.02 + 0.004).astype(np.float32)
    b = rng.integers(-3000, 3000, cout).astype(np.int32)
    bs = (np.float32(xs) * ws).astype(np.float32)
    p = k // 2
    acc = conv_ref(xq, xz, w, np.zeros(cout, np.int64), group=group, strides=(stride, stride),
                   pads=(p, p, p, p), bias=b)
    y = requant_fixed(acc, xs, ws, ys, yz, ydt, 1)
    if clip:
        y = relu6(y, ys, yz)
    f = pre + "c"
    nodes += [
        N("DequantizeLinear", [xname, pre + "xs", pre + "xz"], [pre + "xf"], name=pre + "dq_x"),
        N("DequantizeLinear", [pre + "w", pre + "ws", pre + "wz"], [pre + "wf"], axis=0,
          name=pre + "dq_w"),
        N("DequantizeLinear", [pre + "b", pre + "bs"], [pre + "bf"], axis=0, name=pre + "dq_b"),
        N("Conv", [pre + "xf", pre + "wf", pre + "bf"], [f], group=group,
          strides=[stride, stride], pads=[p, p, p, p], name=pre + "conv"),
    ]
    if clip:
        nodes.append(N("Clip", [f, "lo", "hi"], [pre + "r"], name=pre + "relu6"))
        f = pre + "r"
    nodes.append(N("QuantizeLinear", [f, pre + "ys", pre + "yz"], [pre + "y"], name=pre + "q"))
    inits += [init(pre + "xs", np.float32(xs)), init(pre + "xz", xz), init(pre + "w", w),
              init(pre + "ws", ws), init(pre + "wz", np.zeros(cout, np.int8)),
              init(pre + "b", b), init(pre + "bs", bs), init(pre + "ys", np.float32(ys)),
              init(pre + "yz", yz)]
    return y


def block(nodes, inits, name, xname, xq, xs, xz, mid, cout, stride, ys, yz, ydt, ez):
    es = 0.031
    e = conv(nodes, inits, name + "e_", xname, xq, xs, xz, mid, 1, 1, 1, es, ez, np.uint8, True)
    ds, dz = 0.027, np.uint8(0)
    d = conv(nodes, inits, name + "d_", name + "e_y", e, es, ez, mid, 3, mid, stride, ds, dz,
             np.uint8, True)
    return conv(nodes, inits, name + "p_", name + "d_y", d, ds, dz, cout, 1, 1, 1, ys, yz, ydt,
                False)


def main():
    nodes, inits = [], [init("lo", np.float32(0)), init("hi", np.float32(6))]
    xq = rng.integers(0, 256, (1, 16, 9, 11), dtype=np.uint8)
    y1 = block(nodes, inits, "b1", "xq", xq, 0.0173, np.uint8(121), 61, 16, 1, 0.093,
               np.uint8(131), np.uint8, np.uint8(0))
    y2 = block(nodes, inits, "b2", "b1p_y", y1, 0.093, np.uint8(131), 96, 24, 2, 0.081,
               np.int8(-7), np.int8, np.uint8(57))
    nodes.append(N("Identity", ["b1p_y"], ["y1"], name="out1"))
    nodes.append(N("Identity", ["b2p_y"], ["y2"], name="out2"))
    g = helper.make_graph(nodes, "qdq_block",
                          [helper.make_tensor_value_info("xq", TensorProto.UINT8, xq.shape)],
                          [helper.make_tensor_value_info("y1", TensorProto.UINT8, y1.shape),
                           helper.make_tensor_value_info("y2", TensorProto.INT8, y2.shape)],
                          inits)
    save("../fixed/qdq_block", g, [xq], [y1, y2])


if __name__ == "__main__":
    main()
