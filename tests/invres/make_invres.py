#!/usr/bin/python3
"""Writes tests/invres/model.onnx and test_data_set_0: inverted residual blocks
(MobileNetV2's 1x1 expansion -> depthwise -> 1x1 projection), whose expanded tensors
passes/layout.c keeps channels-last (the expansion writes NHWC, the depthwise
convolution reads and writes it with vectors along the channels in passes/depthwise.c,
the projection reads it), with outputs computed by torch from the same weights:

  y1 = P(Clip(DW3x3 pad 1 (Clip(E(a)))) + a      a: 1x16x14x14, 16 -> 96 -> 16, residual;
                                                 the depthwise kernel in two bands of 7
                                                 output rows on CPUs (14x14 and up)
  y2 = P(Clip(DW3x3 stride 2 pad 1 (Clip(E(b)))))  b: 1x24x15x15, 24 -> 72 -> 40: 72 is
                                                 4 x 16 + 8 channels (a half block)
  y3 = Relu(P(DW3x3 dilation 2 pad 2 (E(c)) + r))  c: 1x5x7x7, 5 -> 30 -> 7: 30 = 16 + 8
                                                 + 4 + 2 single channels; r per channel
  y4 = P(DW5x5 pad 2 (E(d))) + d                 d: 2x8x9x11, batch 2, a 5x5 window
  y5 = P(DW3x3 no pad, pads t0 l1 b2 r0 (E(e)))  e: 1x16x10x10, 16 -> 20 -> 12
  y6 = P(Clip(DW3x3 stride 2 pad 1 (Clip(E(f)))))  f: 1x32x7x7, 32 -> 192 -> 64: 4x4
                                                 outputs, MobileNetV2's 7x7 downsampling
  y7 = P(Clip(DW3x3 pad 1 (Clip(E(g))))) + g     g: 2x6x28x30, batch 2, 6 -> 21 -> 6: the
                                                 depthwise kernel in bands of output rows
                                                 (bands of 7, batch 2), 21 = 16 + 4 + 1
                                                 channels (full, quarter, single blocks)

E and P are 1x1 convolutions with bias. Every width leaves tiles of several sizes and
edge tiles on both sides.
usage: /usr/bin/python3 tests/invres/make_invres.py"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from onnx import helper

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
import gen_common as gc  # noqa: E402

rnd = gc.uniform(16)
t = torch.from_numpy

ins, outs, inits, nodes = [], [], [], []
inits_pairs = [(np.array(0, np.float32), "lo"), (np.array(6, np.float32), "hi")]


def conv(name, i, o, **kw):
    return helper.make_node("Conv", i, [o], name=name, **kw)


def block(k, x, cm, co, dw_k, stride, pads, dil=1, clip=False, residual=False,
          rchan=False, relu=False):
    """Block k on input x (numpy): E (1x1, cm channels), DW, P (1x1, co channels)."""
    n, c = x.shape[0], x.shape[1]
    name = f"x{k}"
    ins.append((name, x))
    we, be = rnd(cm, c, 1, 1), rnd(cm)
    wd, bd = rnd(cm, 1, dw_k, dw_k), rnd(cm)
    wp, bp = rnd(co, cm, 1, 1), rnd(co)
    for a, s in ((we, "we"), (be, "be"), (wd, "wd"), (bd, "bd"), (wp, "wp"), (bp, "bp")):
        inits_pairs.append((a, f"{s}{k}"))
    e = f"e{k}"
    nodes.append(conv(f"expand{k}", [name, f"we{k}", f"be{k}"], e))
    if clip:
        nodes.append(helper.make_node("Clip", [e, "lo", "hi"], [e + "c"], name=f"ce{k}"))
        e += "c"
    dwo = f"d{k}"
    nodes.append(conv(f"dw{k}", [e, f"wd{k}", f"bd{k}"], dwo, group=cm, pads=pads,
                      strides=[stride, stride], dilations=[dil, dil]))
    if clip:
        nodes.append(helper.make_node("Clip", [dwo, "lo", "hi"], [dwo + "c"], name=f"cd{k}"))
        dwo += "c"
    r = None
    if rchan:
        r = rnd(1, cm, 1, 1)
        inits_pairs.append((r, f"r{k}"))
        nodes.append(helper.make_node("Add", [dwo, f"r{k}"], [dwo + "r"], name=f"addr{k}"))
        dwo += "r"
    out = f"p{k}" if (residual or relu) else f"y{k}"
    nodes.append(conv(f"project{k}", [dwo, f"wp{k}", f"bp{k}"], out))
    if residual:
        nodes.append(helper.make_node("Add", [out, name], [f"y{k}"], name=f"res{k}"))
    if relu:
        nodes.append(helper.make_node("Relu", [out], [f"y{k}"], name=f"relu{k}"))
    with torch.no_grad():
        X = t(x)
        h = F.conv2d(X, t(we), t(be))
        if clip:
            h = torch.clamp(h, 0, 6)
        # pads: [top, left, bottom, right]; F.pad takes (left, right, top, bottom)
        h = F.conv2d(F.pad(h, (pads[1], pads[3], pads[0], pads[2])), t(wd), t(bd),
                     stride=stride, dilation=dil, groups=cm)
        if clip:
            h = torch.clamp(h, 0, 6)
        if rchan:
            h = h + t(r)
        y = F.conv2d(h, t(wp), t(bp))
        if residual:
            y = y + X
        if relu:
            y = F.relu(y)
    outs.append(y)


block(1, rnd(1, 16, 14, 14), 96, 16, 3, 1, [1, 1, 1, 1], clip=True, residual=True)
block(2, rnd(1, 24, 15, 15), 72, 40, 3, 2, [1, 1, 1, 1], clip=True)
block(3, rnd(1, 5, 7, 7), 30, 7, 3, 1, [2, 2, 2, 2], dil=2, rchan=True, relu=True)
block(4, rnd(2, 8, 9, 11), 48, 8, 5, 1, [2, 2, 2, 2], residual=True)
block(5, rnd(1, 16, 10, 10), 20, 12, 3, 1, [0, 1, 2, 0])
block(6, rnd(1, 32, 7, 7), 192, 64, 3, 2, [1, 1, 1, 1], clip=True)
block(7, rnd(2, 6, 28, 30), 21, 6, 3, 1, [1, 1, 1, 1], clip=True, residual=True)

g = gc.float_graph(nodes, "invres", ins, outs, gc.initializers(inits_pairs))
gc.write_case(here, gc.model(g), [a for _, a in ins], outs)
