#!/usr/bin/python3
"""Writes tests/mbconv/model.onnx and test_data_set_0: EfficientNet's MBConv blocks
(1x1 expansion + SiLU -> depthwise + SiLU -> squeeze-and-excite -> 1x1 projection),
whose expanded tensors passes/layout.c keeps channels-last: the depthwise kernel
(passes/depthwise.c, vectors along the channels) also computes the squeeze's
GlobalAveragePool, the excite's scale is [1,1,1,C] and its Mul a vector loop along the
channels (passes/sescale.c). Outputs computed by torch from the same weights:

  y1 = P(SE(SiLU(DW3x3 pad 1 (SiLU(E(a)))))) + a   a: 1x16x16x16, 16 -> 96 -> 16: its
                                                 256 pixels as 4 rows of 64 in the 1x1 tiles
  y2 = P(SE(SiLU(DW5x5 stride 2 pad 2 (...))))     b: 1x24x9x9, 24 -> 72 -> 40: 72 is
                                                 4 x 16 + 8 channels (a half block)
  y3 = P(SE(SiLU(DW5x5 pad 2 (...)))) + c         c: 1x8x2x2, 8 -> 30 -> 8: 30 = 16 + 8
                                                 + 4 + 2 single channels; 2x2 outputs
                                                 that some 5x5 taps never reach
  y4 = P(SE(SiLU(DW3x3 pad 1 (...))))             d: 2x8x7x7, batch 2, 8 -> 48 -> 24, the
                                                 scale as the Mul's second input
  y5 = P(SE(SiLU(DW3x3 stride 2 pad 1 (...))))    e: 2x8x28x28, batch 2, 8 -> 40 -> 16: the
                                                 depthwise in bands of 7 of its 14 output
                                                 rows, the squeeze from the bands' sums
  y6 = P(SE(SiLU(DW5x5 pad 2 (...))))             f: 1x8x16x16, 8 -> 30 -> 8: bands of 8
                                                 rows with half, quarter and single-channel
                                                 blocks

SE(v) = v * sigmoid(W2 SiLU(W1 mean(v) + b1) + b2) (the Mul's inputs in torchvision's
order, scale first, except y4); E and P are 1x1 convolutions with bias.
usage: /usr/bin/python3 tests/mbconv/make_mbconv.py"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from onnx import helper

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
import gen_common as gc  # noqa: E402

rnd = gc.uniform(26)
t = torch.from_numpy

ins, outs, inits_pairs, nodes = [], [], [], []


def node(op, i, o, name, **kw):
    nodes.append(helper.make_node(op, i, [o], name=name, **kw))
    return o


def silu(k, v, tag):
    s = node("Sigmoid", [v], f"{v}_s", f"sig{tag}{k}")
    return node("Mul", [v, s], f"{v}_a", f"silu{tag}{k}")


def block(k, x, cm, co, dw_k, stride, sq, residual=False, scale_first=True):
    """Block k on input x (numpy): E (cm channels), DW, SE (sq), P (co channels)."""
    c = x.shape[1]
    name = f"x{k}"
    ins.append((name, x))
    we, be = rnd(cm, c, 1, 1), rnd(cm)
    wd, bd = rnd(cm, 1, dw_k, dw_k), rnd(cm)
    w1, b1 = rnd(sq, cm, 1, 1), rnd(sq)
    w2, b2 = rnd(cm, sq, 1, 1), rnd(cm)
    wp, bp = rnd(co, cm, 1, 1), rnd(co)
    for a, s in ((we, "we"), (be, "be"), (wd, "wd"), (bd, "bd"), (w1, "w1"), (b1, "b1"),
                 (w2, "w2"), (b2, "b2"), (wp, "wp"), (bp, "bp")):
        inits_pairs.append((a, f"{s}{k}"))
    p = dw_k // 2
    e = silu(k, node("Conv", [name, f"we{k}", f"be{k}"], f"e{k}", f"expand{k}"), "e")
    d = silu(k, node("Conv", [e, f"wd{k}", f"bd{k}"], f"d{k}", f"dw{k}", group=cm,
                     pads=[p, p, p, p], strides=[stride, stride]), "d")
    m = node("GlobalAveragePool", [d], f"m{k}", f"squeeze{k}")
    f1 = silu(k, node("Conv", [m, f"w1{k}", f"b1{k}"], f"f{k}", f"fc1_{k}"), "f")
    g = node("Sigmoid", [node("Conv", [f1, f"w2{k}", f"b2{k}"], f"g{k}", f"fc2_{k}")],
             f"s{k}", f"gate{k}")
    v = node("Mul", [g, d] if scale_first else [d, g], f"v{k}", f"excite{k}")
    out = f"p{k}" if residual else f"y{k}"
    node("Conv", [v, f"wp{k}", f"bp{k}"], out, f"project{k}")
    if residual:
        node("Add", [out, name], f"y{k}", f"res{k}")
    with torch.no_grad():
        X = t(x)
        h = F.silu(F.conv2d(X, t(we), t(be)))
        h = F.silu(F.conv2d(h, t(wd), t(bd), stride=stride, padding=p, groups=cm))
        s = h.mean(dim=(2, 3), keepdim=True)
        s = torch.sigmoid(F.conv2d(F.silu(F.conv2d(s, t(w1), t(b1))), t(w2), t(b2)))
        y = F.conv2d(h * s, t(wp), t(bp))
        if residual:
            y = y + X
    outs.append(y.numpy())


block(1, rnd(1, 16, 16, 16), 96, 16, 3, 1, 4, residual=True)
block(2, rnd(1, 24, 9, 9), 72, 40, 5, 2, 6)
block(3, rnd(1, 8, 2, 2), 30, 8, 5, 1, 2, residual=True)
block(4, rnd(2, 8, 7, 7), 48, 24, 3, 1, 4, scale_first=False)
block(5, rnd(2, 8, 28, 28), 40, 16, 3, 2, 4)
block(6, rnd(1, 8, 16, 16), 30, 8, 5, 1, 2)

g = gc.float_graph(nodes, "mbconv", ins, outs, gc.initializers(inits_pairs))
gc.write_case(here, gc.model(g), [a for _, a in ins], outs)
