#!/usr/bin/python3
"""Writes tests/pool/gap_order: a GlobalAveragePool whose float32 sums tell their
order apart. The pool pass (passes/pool.c, gap_rebuild) sums 16 channels a step on CPUs,
each channel in its own chain in the plain nest's order (0, then + x[0], + x[1], ... in
row-major order, then / h*w); this model fails any other order.

x [2, 37, 5, 7] (74 channels: four steps of 16 and 10 left over): each channel holds
+2^24 in its first third, -2^24 in its last third and 1/2 or 1 elsewhere. In the
row-major order every small value added while the running sum is 2^24 is lost (float32's
spacing there is 2: 2^24 + 1 ties to 2^24), so the channel's result is the mean of the
values outside the two; a sum in another order (pairwise, or the large values first)
keeps some of the middle ones and differs by tenths, far outside check-onnx's
tolerance. Expected outputs: numpy,
the float32 sum taken one element at a time in row-major order, then divided by
float32(35). Not on the interpreter, whose reference pools sum in double (ir/ops/nn.c).

    /usr/bin/python3 tests/pool/make_gap_order.py
"""
import os
import sys

import numpy as np
from onnx import helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import gen_common as gc  # noqa: E402

rng = np.random.default_rng(41)
F = np.float32
B = F(2.0**24)

shape = (2, 37, 5, 7)
hw = shape[2] * shape[3]
x = (rng.integers(1, 3, shape) / 2).astype(F)
flat = x.reshape(-1, hw)
for c in range(flat.shape[0]):
    i = rng.integers(0, hw // 3)
    j = rng.integers(2 * hw // 3, hw)
    flat[c, i], flat[c, j] = B, -B

y = np.empty(flat.shape[0], F)
for c in range(flat.shape[0]):
    s = F(0)
    for v in flat[c]:
        s = F(s + v)
    y[c] = F(s / F(hw))
y = y.reshape(shape[0], shape[1], 1, 1)

# the test must tell the orders apart: the sum of each channel's values in float64 (any
# order that keeps the small values) is far from the row-major float32 one
exact = flat.astype(np.float64).sum(axis=1).reshape(y.shape) / hw
assert np.count_nonzero(np.abs(exact - y) > 0.1) == y.size

nodes = [helper.make_node("GlobalAveragePool", ["x"], ["y1"], name="gap")]
g = gc.float_graph(nodes, "gap_order", [("x", x)], [y], [])
gc.write_case(os.path.join(HERE, "gap_order"), gc.model(g, opset=13), [("x", x)], [("y1", y)])
