#!/usr/bin/python3
"""Writes tests/models/half_rate (model.onnx and a test data set, the expected output
computed with torch, independently of the graph):

  half_rate: MobileNetV2's first two blocks, narrowed: x [1, 32, 24, 24] -> 3x3 depthwise
    Conv pad 1 + Clip 0..6 -> 1x1 Conv (32 -> 16, NCHW: tile_pointwise) -> 1x1 Conv
    (16 -> 96) + Clip -> 3x3 depthwise Conv pad 1 + Clip -> 1x1 Conv (96 -> 24, channels-
    last: pw_channels_last) -> y [1, 24, 24, 24]. On a target whose full-width multiply-add
    costs two half-width ones (kn_target.fp_datapath_bits, x86-64-zen4) the projection to 24 takes
    three vectors of 8 lanes (passes/tile.c pw_channels_last), on x86-64-avx512 two of 16
    (tests/models/half_rate.sh).
usage: /usr/bin/python3 tests/models/make_half_rate.py"""
import numpy as np
import torch
import torch.nn.functional as F
from casegen import torch_case
from onnx import helper, numpy_helper

rng = np.random.default_rng(17)


def w(name, *shape):
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) / 4, name)


def net(x, W):
    d1 = torch.clamp(F.conv2d(x, W["wd1"], W["bd1"], padding=1, groups=32), 0, 6)
    p1 = F.conv2d(d1, W["wp1"], W["bp1"])
    e = torch.clamp(F.conv2d(p1, W["we"], W["be"]), 0, 6)
    d2 = torch.clamp(F.conv2d(e, W["wd2"], W["bd2"], padding=1, groups=96), 0, 6)
    return F.conv2d(d2, W["wp2"], W["bp2"])


lo = numpy_helper.from_array(np.array(0, np.float32), "lo")
hi = numpy_helper.from_array(np.array(6, np.float32), "hi")
torch_case("half_rate",
           [helper.make_node("Conv", ["x", "wd1", "bd1"], ["d1"], name="dw1", group=32,
                             pads=[1, 1, 1, 1]),
            helper.make_node("Clip", ["d1", "lo", "hi"], ["d1c"], name="dw1_clip"),
            helper.make_node("Conv", ["d1c", "wp1", "bp1"], ["p1"], name="project16"),
            helper.make_node("Conv", ["p1", "we", "be"], ["e"], name="expand"),
            helper.make_node("Clip", ["e", "lo", "hi"], ["ec"], name="expand_clip"),
            helper.make_node("Conv", ["ec", "wd2", "bd2"], ["d2"], name="dw2", group=96,
                             pads=[1, 1, 1, 1]),
            helper.make_node("Clip", ["d2", "lo", "hi"], ["d2c"], name="dw2_clip"),
            helper.make_node("Conv", ["d2c", "wp2", "bp2"], ["y"], name="project24")],
           [w("wd1", 32, 1, 3, 3), w("bd1", 32), w("wp1", 16, 32, 1, 1), w("bp1", 16),
            w("we", 96, 16, 1, 1), w("be", 96), w("wd2", 96, 1, 3, 3), w("bd2", 96),
            w("wp2", 24, 96, 1, 1), w("bp2", 24), lo, hi],
           [1, 32, 24, 24], [1, 24, 24, 24], net, rng)
