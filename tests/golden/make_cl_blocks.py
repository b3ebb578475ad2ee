#!/usr/bin/python3
"""Writes tests/golden/cl_blocks.onnx: an inverted residual block on a 1x8x8x8 input,
y = P(Clip(DW3x3 pad 1 (Clip(E(x))))), E 8 -> 152 channels and P 152 -> 8 (1x1 with
bias). passes/layout.c keeps the expanded tensors channels-last; on a 16-lane target the
expansion's channel tiles are 4 blocks of 32 and a partial block of 24 (152 channels: 3 or
4 vectors a block do not divide them, so passes/tile.c's kt_widen keeps 2), which store
block b's tile rows at b*32 + 152*r: the parallel pass must see that the 4 blocks write
apart (MobileNetV2's 56x56 expansions to 144 channels ran on one thread while it could not).
usage: /usr/bin/python3 tests/golden/make_cl_blocks.py"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(12)


def arr(name, *shape):
    return numpy_helper.from_array(rng.uniform(-1, 1, shape).astype(np.float32), name)


inits = [arr("we", 152, 8, 1, 1), arr("be", 152), arr("wd", 152, 1, 3, 3), arr("bd", 152),
         arr("wp", 8, 152, 1, 1), arr("bp", 8),
         numpy_helper.from_array(np.array(0, np.float32), "lo"),
         numpy_helper.from_array(np.array(6, np.float32), "hi")]
nodes = [
    helper.make_node("Conv", ["x", "we", "be"], ["e"], name="expand"),
    helper.make_node("Clip", ["e", "lo", "hi"], ["ec"], name="clip1"),
    helper.make_node("Conv", ["ec", "wd", "bd"], ["d"], name="dw", group=152,
                     pads=[1, 1, 1, 1]),
    helper.make_node("Clip", ["d", "lo", "hi"], ["dc"], name="clip2"),
    helper.make_node("Conv", ["dc", "wp", "bp"], ["y"], name="project"),
]
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 8, 8])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 8, 8])
g = helper.make_graph(nodes, "cl_blocks", [x], [y], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
onnx.checker.check_model(m)
onnx.save(m, os.path.join(os.path.dirname(os.path.abspath(__file__)), "cl_blocks.onnx"))
