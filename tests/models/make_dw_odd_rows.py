#!/usr/bin/python3
"""Writes tests/models/dw_odd_rows (model.onnx and a test data set, the expected output
computed with torch, independently of the graph):

  dw_odd_rows: MobileNetV2's 14x14 -> 7x7 inverted residual block, narrowed: x [1, 24, 14,
    14] -> 1x1 Conv (24 -> 576) + Clip 0..6 -> 3x3 depthwise Conv stride 2 pad 1 + Clip
    -> 1x1 Conv (576 -> 16), then MobileNetV2's 7x7 block, narrowed: 1x1 Conv (16 -> 960)
    + Clip -> 3x3 depthwise Conv pad 1 + Clip -> 1x1 Conv (960 -> 4) -> y [1, 4, 7, 7].
    At 2 threads both depthwise kernels run in 7 bands of one output row
    (passes/depthwise.c dwc_odd_rows_banded), not by channel blocks
    (tests/models/dw_odd_rows.sh).
usage: /usr/bin/python3 tests/models/make_dw_odd_rows.py"""
import numpy as np
import torch
import torch.nn.functional as F
from casegen import torch_case
from onnx import helper, numpy_helper

rng = np.random.default_rng(11)


def w(name, *shape):
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) / 4, name)


def block1(x, W):
    e = torch.clamp(F.conv2d(x, W["we"], W["be"]), 0, 6)
    d = torch.clamp(F.conv2d(e, W["wd"], W["bd"], stride=2, padding=1, groups=576), 0, 6)
    return F.conv2d(d, W["wp"], W["bp"])


def block2(x, W):
    e = torch.clamp(F.conv2d(x, W["we2"], W["be2"]), 0, 6)
    d = torch.clamp(F.conv2d(e, W["wd2"], W["bd2"], padding=1, groups=960), 0, 6)
    return F.conv2d(d, W["wp2"], W["bp2"])


lo = numpy_helper.from_array(np.array(0, np.float32), "lo")
hi = numpy_helper.from_array(np.array(6, np.float32), "hi")
torch_case("dw_odd_rows",
           [helper.make_node("Conv", ["x", "we", "be"], ["e"], name="expand"),
            helper.make_node("Clip", ["e", "lo", "hi"], ["ec"], name="expand_clip"),
            helper.make_node("Conv", ["ec", "wd", "bd"], ["d"], name="dw", group=576,
                             pads=[1, 1, 1, 1], strides=[2, 2]),
            helper.make_node("Clip", ["d", "lo", "hi"], ["dc"], name="dw_clip"),
            helper.make_node("Conv", ["dc", "wp", "bp"], ["p"], name="project"),
            helper.make_node("Conv", ["p", "we2", "be2"], ["e2"], name="expand2"),
            helper.make_node("Clip", ["e2", "lo", "hi"], ["e2c"], name="expand2_clip"),
            helper.make_node("Conv", ["e2c", "wd2", "bd2"], ["d2"], name="dw2", group=960,
                             pads=[1, 1, 1, 1]),
            helper.make_node("Clip", ["d2", "lo", "hi"], ["d2c"], name="dw2_clip"),
            helper.make_node("Conv", ["d2c", "wp2", "bp2"], ["y"], name="project2")],
           [w("we", 576, 24, 1, 1), w("be", 576), w("wd", 576, 1, 3, 3), w("bd", 576),
            w("wp", 16, 576, 1, 1), w("bp", 16), w("we2", 960, 16, 1, 1), w("be2", 960),
            w("wd2", 960, 1, 3, 3), w("bd2", 960), w("wp2", 4, 960, 1, 1), w("bp2", 4), lo, hi],
           [1, 24, 14, 14], [1, 4, 7, 7],
           lambda x, W: block2(block1(x, W), W), rng)
