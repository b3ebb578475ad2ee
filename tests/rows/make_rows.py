#!/usr/bin/python3
"""Writes tests/rows/model.onnx and test_data_set_0: the kernels passes/rows.c schedules
(kn_sched.tblock, smrows), with outputs computed by numpy:

  y1 = Transpose(x, perm 0 2 1)   x: 2x96x136 -> 2x136x96: each output row reads 96 input
                                  rows 544 bytes apart (blocks of 16 columns; 8, 32 and
                                  the plain nest from schedule files)
  y2 = Softmax(y1, axis -1)       272 rows of 96 (6 vectors of 16 lanes, 12 of 8)
  y3 = Softmax(x, axis -1)        192 rows of 136 (a tail of 8 past 16-lane vectors)

usage: /usr/bin/python3 tests/rows/make_rows.py"""
import os
import sys

import numpy as np
from onnx import helper

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
import gen_common as gc  # noqa: E402

rnd = gc.uniform(19)
x = rnd(2, 96, 136) * 4
N = helper.make_node
nodes = [
    N("Transpose", ["x"], ["y1"], name="tr", perm=[0, 2, 1]),
    N("Softmax", ["y1"], ["y2"], name="sm_t", axis=-1),
    N("Softmax", ["x"], ["y3"], name="sm_x", axis=-1),
]


def softmax(v):
    e = np.exp(v.astype(np.float64) - v.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


t = x.transpose(0, 2, 1)
outs = [t, softmax(t), softmax(x)]
graph = gc.float_graph(nodes, "rows", [("x", x)], outs, [])
gc.write_case(here, gc.model(graph, opset=13), [x], [y.astype(np.float32) for y in outs])
