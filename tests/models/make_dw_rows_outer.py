#!/usr/bin/python3
"""Writes tests/models/dw_rows_outer (model.onnx and a test data set, the expected output
computed with torch, independently of the graph):

  dw_rows_outer: MobileNetV2's 14x14 inverted residual block, narrowed: x [1, 16, 14, 14]
    -> 1x1 Conv (16 -> 96) + Clip 0..6 -> 3x3 depthwise Conv pad 1 + Clip -> 1x1 Conv
    (96 -> 16) + x -> y [1, 16, 14, 14]. At 2 threads the depthwise kernel runs in two
    bands of 7 rows, each row of a band with every channel block of it
    (passes/depthwise.c dwc_rows_outer); at one thread each channel block over the band's
    rows (tests/models/dw_rows_outer.sh).
usage: /usr/bin/python3 tests/models/make_dw_rows_outer.py"""
import numpy as np
import torch
import torch.nn.functional as F
from casegen import torch_case
from onnx import helper, numpy_helper

rng = np.random.default_rng(12)


def w(name, *shape):
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) / 4, name)


def block(x, W):
    e = torch.clamp(F.conv2d(x, W["we"], W["be"]), 0, 6)
    d = torch.clamp(F.conv2d(e, W["wd"], W["bd"], padding=1, groups=96), 0, 6)
    return F.conv2d(d, W["wp"], W["bp"]) + x


lo = numpy_helper.from_array(np.array(0, np.float32), "lo")
hi = numpy_helper.from_array(np.array(6, np.float32), "hi")
torch_case("dw_rows_outer",
           [helper.make_node("Conv", ["x", "we", "be"], ["e"], name="expand"),
            helper.make_node("Clip", ["e", "lo", "hi"], ["ec"], name="expand_clip"),
            helper.make_node("Conv", ["ec", "wd", "bd"], ["d"], name="dw", group=96,
                             pads=[1, 1, 1, 1]),
            helper.make_node("Clip", ["d", "lo", "hi"], ["dc"], name="dw_clip"),
            helper.make_node("Conv", ["dc", "wp", "bp"], ["p"], name="project"),
            helper.make_node("Add", ["p", "x"], ["y"], name="residual")],
           [w("we", 96, 16, 1, 1), w("be", 96), w("wd", 96, 1, 3, 3), w("bd", 96),
            w("wp", 16, 96, 1, 1), w("bp", 16), lo, hi],
           [1, 16, 14, 14], [1, 16, 14, 14], block, rng)
