#!/usr/bin/python3
"""Writes ubsan-patch-cost-overflow.onnx (tests/fuzz/regressions.sh compiles it for
cortex-m4): two 8-bit QLinearConvs whose weights ConstantOfShape makes (folded, 64 MiB and
16 KiB), each tensor 256 MiB at most (the patch pass's bound), the second's 16384-row
kernel making every band recompute almost all of the first's 2^54 multiply-adds: the
estimate's extra cost (9.9e16) times 100 passed int64 (UBSan in passes/patch.c).
Run with Debian's python3: /usr/bin/python3 make_cost_overflow.py [OUT]"""
import sys

import onnx
from onnx import TensorProto as T
from onnx import helper as h

u8 = T.UINT8
kh2 = 1 << 14


def c(name, dt, dims, vals):
    return h.make_tensor(name, dt, dims, vals)


nodes = [h.make_node("Constant", [], ["w1shape"], name="w1shape",
                     value=c("s", T.INT64, [4], [1, 4, 1 << 12, 1 << 12])),
         h.make_node("ConstantOfShape", ["w1shape"], ["W1"], name="w1fill",
                     value=c("v", u8, [1], [1])),
         h.make_node("Constant", [], ["w2shape"], name="w2shape",
                     value=c("s", T.INT64, [4], [1, 1, kh2, 1])),
         h.make_node("ConstantOfShape", ["w2shape"], ["W2"], name="w2fill",
                     value=c("v", u8, [1], [1]))]
inits = [c("s", T.FLOAT, [], [0.5]), c("z", u8, [], [0])]
p = (1 << 14) + (1 << 12) - 2  # 16384 x 16384 outputs from a 1x1 input
nodes.append(h.make_node("QLinearConv", ["x", "s", "z", "W1", "s", "z", "s", "z"], ["y1"],
                         name="qconv1", pads=[p // 2, p // 2, p - p // 2, p - p // 2]))
q = kh2 - 1
nodes.append(h.make_node("QLinearConv", ["y1", "s", "z", "W2", "s", "z", "s", "z"], ["y"],
                         name="qconv2", pads=[q // 2, 0, q - q // 2, 0]))
g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", u8, [1, 4, 1, 1])],
                 [h.make_tensor_value_info("y", u8, None)], inits)
m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
m.ir_version = 8
onnx.save(m, sys.argv[1] if len(sys.argv) > 1 else "ubsan-patch-cost-overflow.onnx")
