#!/usr/bin/python3
"""Writes tests/inplace/{chain,batch2,sep13,sep16}/model.onnx and test_data_set_0 (outputs
from torch in float64 from the same weights): networks whose layers the memory plan of a
microcontroller target writes over their inputs (docs/firmware.md, "Layers written over
their input"; the value written over its input in brackets):

  chain   a = Relu(Conv 3x3 pad 1 (x))               x: 1x4x13x6, 8 channels
          e = Relu(Conv 1x1 (a))          [e over a: bands of rows of every channel, NCHW,
                                           passes/tile.c conv_bands; 13 rows: 3 + 3 + 3 + 3 + 1]
          b = Relu(DW 3x3 pad 1 (e))      [b over e: a channel's plane copied first, NCHW,
                                           passes/depthwise.c dw_plane_suits]
          h = Relu(Conv 3x3 pad 1 (b))
          r = Relu(Conv 3x3 pad 1 (h) + b) [r over b: the residual read at the store's index]
          y1 = Conv 1x1 (r) to 3 channels
  batch2  chain on 2x3x11x7, 6 channels (batch 2: e keeps its own storage)
  sep     a = Relu(Conv 3x3 pad 1 (x)), then twice DW 3x3 pad 1 + Relu, Conv 1x1 + Relu (a
          depthwise-separable network of equal widths, channels-last on microcontrollers:
          passes/layout.c), then y1 = Gemm(Flatten(AveragePool(Pad 0 (.)))) to 5 classes
          (the zero Pad as torch exports an AvgPool2d) [each depthwise output over its
          input: a channel gathered first, depthwise.c dwc_plane_suits; each 1x1 output
          over its input: bands of channels-last pixels]
  sep13   sep on 1x3x13x6, 8 channels (78 pixels: one row, bands of whole tiles)
  sep16   sep on 1x3x16x8, 8 channels (128 pixels: 2 rows of 64, a band a row)

usage: /usr/bin/python3 tests/inplace/make_inplace.py"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from onnx import helper

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
import gen_common as gc  # noqa: E402


def t(a):
    return torch.from_numpy(a).double()


def conv(i, w, b, o, **kw):
    return helper.make_node("Conv", [i, w, b], [o], **kw)


def relu_conv(nodes, i, w, b, o, **kw):
    nodes += [conv(i, w, b, o + "0", **kw), helper.make_node("Relu", [o + "0"], [o])]


def chain(name, shape, c, seed):
    rnd = gc.uniform(seed)
    x = rnd(*shape)
    w1, b1 = rnd(c, shape[1], 3, 3), rnd(c)
    wp, bp = rnd(c, c, 1, 1) * 0.5, rnd(c)
    wd, bd = rnd(c, 1, 3, 3), rnd(c)
    wh, bh = rnd(c, c, 3, 3) * 0.3, rnd(c)
    w2, b2 = rnd(c, c, 3, 3) * 0.3, rnd(c)
    w3, b3 = rnd(3, c, 1, 1), rnd(3)
    a = F.relu(F.conv2d(t(x), t(w1), t(b1), padding=1))
    e = F.relu(F.conv2d(a, t(wp), t(bp)))
    b = F.relu(F.conv2d(e, t(wd), t(bd), padding=1, groups=c))
    h = F.relu(F.conv2d(b, t(wh), t(bh), padding=1))
    r = F.relu(F.conv2d(h, t(w2), t(b2), padding=1) + b)
    y = F.conv2d(r, t(w3), t(b3)).float().numpy()
    p1 = [1, 1, 1, 1]
    nodes = []
    relu_conv(nodes, "x", "w1", "b1", "a", pads=p1)
    relu_conv(nodes, "a", "wp", "bp", "e")
    relu_conv(nodes, "e", "wd", "bd", "b", pads=p1, group=c)
    relu_conv(nodes, "b", "wh", "bh", "h", pads=p1)
    nodes += [conv("h", "w2", "b2", "s", pads=p1), helper.make_node("Add", ["s", "b"], ["r0"]),
              helper.make_node("Relu", ["r0"], ["r"]), conv("r", "w3", "b3", "y1")]
    inits = gc.initializers([(w1, "w1"), (b1, "b1"), (wp, "wp"), (bp, "bp"), (wd, "wd"),
                             (bd, "bd"), (wh, "wh"), (bh, "bh"), (w2, "w2"), (b2, "b2"),
                             (w3, "w3"), (b3, "b3")])
    m = gc.model(gc.float_graph(nodes, name, [("x", x)], [y], inits))
    gc.write_case(os.path.join(here, name), m, [("x", x)], [("y1", y)])


def sep(name, shape, c, seed):
    rnd = gc.uniform(seed)
    x = rnd(*shape)
    H, W = shape[2], shape[3]
    w1, b1 = rnd(c, shape[1], 3, 3), rnd(c)
    wd1, bd1, wp1, bp1 = rnd(c, 1, 3, 3), rnd(c), rnd(c, c, 1, 1) * 0.5, rnd(c)
    wd2, bd2, wp2, bp2 = rnd(c, 1, 3, 3), rnd(c), rnd(c, c, 1, 1) * 0.5, rnd(c)
    wf, bf = rnd(5, c), rnd(5)
    a = F.relu(F.conv2d(t(x), t(w1), t(b1), padding=1))
    b = F.relu(F.conv2d(a, t(wd1), t(bd1), padding=1, groups=c))
    e = F.relu(F.conv2d(b, t(wp1), t(bp1)))
    f = F.relu(F.conv2d(e, t(wd2), t(bd2), padding=1, groups=c))
    g = F.relu(F.conv2d(f, t(wp2), t(bp2)))
    y = (g.mean(dim=(2, 3)) @ t(wf).T + t(bf)).float().numpy()
    p1 = [1, 1, 1, 1]
    nodes = []
    relu_conv(nodes, "x", "w1", "b1", "a", pads=p1)
    relu_conv(nodes, "a", "wd1", "bd1", "b", pads=p1, group=c)
    relu_conv(nodes, "b", "wp1", "bp1", "e")
    relu_conv(nodes, "e", "wd2", "bd2", "f", pads=p1, group=c)
    relu_conv(nodes, "f", "wp2", "bp2", "g")
    nodes += [helper.make_node("Pad", ["g", "pads"], ["gp"], mode="constant"),
              helper.make_node("AveragePool", ["gp"], ["pool"], kernel_shape=[H, W],
                               strides=[H, W]),
              helper.make_node("Flatten", ["pool"], ["flat"], axis=1),
              helper.make_node("Gemm", ["flat", "wf", "bf"], ["y1"], transB=1)]
    inits = gc.initializers([(w1, "w1"), (b1, "b1"), (wd1, "wd1"), (bd1, "bd1"), (wp1, "wp1"),
                             (bp1, "bp1"), (wd2, "wd2"), (bd2, "bd2"), (wp2, "wp2"),
                             (bp2, "bp2"), (wf, "wf"), (bf, "bf"),
                             (np.zeros(8, np.int64), "pads")])
    m = gc.model(gc.float_graph(nodes, name, [("x", x)], [y], inits))
    gc.write_case(os.path.join(here, name), m, [("x", x)], [("y1", y)])


chain("chain", (1, 4, 13, 6), 8, 131)
chain("batch2", (2, 3, 11, 7), 6, 132)
sep("sep13", (1, 3, 13, 6), 8, 133)
sep("sep16", (1, 3, 16, 8), 8, 134)
