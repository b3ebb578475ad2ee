#!/usr/bin/python3
"""Writes tests/tuned/a and tests/tuned/b (model.onnx and test_data_set_0 each, outputs
computed by torch from the same weights): two different models that share one kernel
shape, for the tuning table (passes/tuned.c, tests/cli/tuned.sh):

  a: y1 = Conv1x1 (x) + b1                  x: 1x40x14x14, 80 out (the shared shape)
     y2 = Relu(Conv1x1 (x) + b2)            24 out
  b: h  = Relu(Conv1x1 (v) + c1)            v: 1x24x14x14, 40 out
     y  = Sigmoid(Conv1x1 (h) + c2)         the shared shape, another epilogue

The shared kernel is 40 -> 80 channels over 14x14 pixels, EfficientNet-B0's projections'
output shape at a fraction of their input channels.
usage: /usr/bin/python3 tests/tuned/make_tuned.py"""
import os
import sys

import torch
import torch.nn.functional as F
from onnx import helper

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
import gen_common as gc  # noqa: E402

t = torch.from_numpy
rnd = gc.uniform(11)

# model a
x = rnd(1, 40, 14, 14)
w1, b1, w2, b2 = rnd(80, 40, 1, 1), rnd(80), rnd(24, 40, 1, 1), rnd(24)
nodes = [
    helper.make_node("Conv", ["x", "w1", "b1"], ["y1"], name="pw80"),
    helper.make_node("Conv", ["x", "w2", "b2"], ["c2"], name="pw24"),
    helper.make_node("Relu", ["c2"], ["y2"], name="relu24"),
]
with torch.no_grad():
    y1 = F.conv2d(t(x), t(w1), t(b1))
    y2 = F.relu(F.conv2d(t(x), t(w2), t(b2)))
inits = gc.initializers([(w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2")])
g = gc.float_graph(nodes, "tuned_a", [("x", x)], [y1, y2], inits)
os.makedirs(os.path.join(here, "a"), exist_ok=True)
gc.write_case(os.path.join(here, "a"), gc.model(g), [x], [y1, y2])

# model b
v = rnd(1, 24, 14, 14)
c1w, c1b, c2w, c2b = rnd(40, 24, 1, 1), rnd(40), rnd(80, 40, 1, 1), rnd(80)
nodes = [
    helper.make_node("Conv", ["v", "c1w", "c1b"], ["h0"], name="expand"),
    helper.make_node("Relu", ["h0"], ["h"], name="relu"),
    helper.make_node("Conv", ["h", "c2w", "c2b"], ["s"], name="project"),
    helper.make_node("Sigmoid", ["s"], ["y1"], name="sig"),
]
with torch.no_grad():
    y = torch.sigmoid(F.conv2d(F.relu(F.conv2d(t(v), t(c1w), t(c1b))), t(c2w), t(c2b)))
inits = gc.initializers([(c1w, "c1w"), (c1b, "c1b"), (c2w, "c2w"), (c2b, "c2b")])
g = gc.float_graph(nodes, "tuned_b", [("v", v)], [y], inits)
os.makedirs(os.path.join(here, "b"), exist_ok=True)
gc.write_case(os.path.join(here, "b"), gc.model(g), [v], [y])
