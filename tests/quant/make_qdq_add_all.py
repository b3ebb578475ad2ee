#!/usr/bin/python3
"""Writes tests/quant/models/qdq_add_all: QDQ residual adds (kiln's QLinearAdd after the
qdq pass) over every pair of 8-bit inputs, with the expected outputs computed here from
the ONNX operator definitions in numpy float32 (DequantizeLinear: (x - zp) * scale; Add;
QuantizeLinear: rint(x / scale) + zp, saturated).

With constant parameters the lowering (ir/lower/quant.c, qadd_check) replaces the
division by y_scale with a multiplication only where that gives the same bytes for every
input pair; this model holds one add of each kind, on the grid a[i, j] = i, b[i, j] = j
(all 65,536 pairs) and c[i, j] = j - 128 (int8):

  m  = Q_u8(DQ(a) + DQ(b))   a multiplier gives every pair's result: multiplies
  t  = Q_u8(DQ(a) + DQ(b))   0.05, 0.05 -> 0.1: exact ties under the division, which
                             a multiplication misses (1,374 pairs differ): divides
  r  = Q_u8(DQ(a) + DQ(b))   random scales where the multiplications differ from the
                             division on 1 to 4 pairs of the 65,536: divides
  mi = Q_i8(DQ(a) + DQ(c))   an int8 operand and output: multiplies
  mz = Q_i8(DQ(a) + DQ(c))   the same into int8 with zero point 0, which the lowering does
                             not add (146 pairs' quotients round to -0.0): multiplies
  l1 = Q_u8(Relu(DQ(a) + DQ(b)))   the scales and zero points of ResNet-18's layer1.0 add
                             (bench/make_qdq.py): the float32 steps round 1 pair (shift 21)
                             to the other side of a boundary than the exact sum does, so
                             the lowering's exact integer form (qadd_int_form, x86) takes
                             a rounding constant moved by -16 * 2
  l2 = Q_u8(Relu(DQ(a) + DQ(b)))   layer2.0's (two zero points; no move needed at shift 21)

On CPUs with 8 or more i32 lanes m, mi, mz, l1 and l2 take the exact integer form (checked
against every pair here), t and r keep the float32 steps.

    /usr/bin/python3 tests/quant/make_qdq_add_all.py
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qref import dq, init, q, save  # noqa: E402

N = helper.make_node
F = np.float32


def mismatches(x, xp, y, yp, zp, t):
    """Pairs where each candidate multiplier (1/s in float32 and its two neighbours, as
    qadd_check tries them) differs from the division."""
    s = dq(x, *xp) + dq(y, *yp)
    ref = q(s, *zp, t)
    c = F(1) / F(zp[0])
    return [int((q(s, *zp, t, r) != ref).sum()) for r in (c, np.nextafter(c, F(0)),
                                                         np.nextafter(c, F(2) * c))]


def main():
    shp = (1, 1, 256, 256)
    a = np.broadcast_to(np.arange(256, dtype=np.uint8)[:, None], shp).copy()
    b = np.broadcast_to(np.arange(256, dtype=np.uint8)[None, :], shp).copy()
    c = (b.astype(np.int32) - 128).astype(np.int8)
    p = {  # name: (scale, zero point)
        "ma": (0.0824502632021904, np.uint8(161)), "mb": (0.08271466940641403, np.uint8(73)),
        "m": (0.056379299610853195, np.uint8(250)),
        "ta": (0.05, np.uint8(128)), "tb": (0.05, np.uint8(128)), "t": (0.1, np.uint8(128)),
        "ra": (0.016785934567451477, np.uint8(70)), "rb": (0.04243315011262894, np.uint8(30)),
        "r": (0.08712523430585861, np.uint8(92)),
        "ia": (0.0371, np.uint8(121)), "ic": (0.043, np.int8(-5)), "mi": (0.0523, np.int8(7)),
        "za": (0.029, np.uint8(121)), "zc": (0.037, np.int8(-5)), "mz": (0.0437, np.int8(0)),
        "l1a": (0.016941780224442482, np.uint8(128)), "l1b": (0.005653471685945988, np.uint8(0)),
        "l1": (0.011060264892876148, np.uint8(0)),
        "l2a": (0.027769723907113075, np.uint8(118)), "l2b": (0.03104321099817753, np.uint8(124)),
        "l2": (0.02251403033733368, np.uint8(0)),
    }
    inits, nodes, outs = [], [], []
    for k, (s, z) in p.items():
        inits += [init(k + "_s", F(s)), init(k + "_z", z)]
    T = helper.make_tensor_value_info
    for out, x, xk, y, yk, xv, yv, t in [("m", "a", "ma", "b", "mb", a, b, np.uint8),
                                         ("t", "a", "ta", "b", "tb", a, b, np.uint8),
                                         ("r", "a", "ra", "b", "rb", a, b, np.uint8),
                                         ("mi", "a", "ia", "c", "ic", a, c, np.int8),
                                         ("mz", "a", "za", "c", "zc", a, c, np.int8),
                                         ("l1", "a", "l1a", "b", "l1b", a, b, np.uint8),
                                         ("l2", "a", "l2a", "b", "l2b", a, b, np.uint8)]:
        relu = out.startswith("l")
        nodes += [N("DequantizeLinear", [x, xk + "_s", xk + "_z"], [xk + "_f"]),
                  N("DequantizeLinear", [y, yk + "_s", yk + "_z"], [yk + "_f"]),
                  N("Add", [xk + "_f", yk + "_f"], [out + "_sum"], name="add_" + out)]
        if relu:
            nodes.append(N("Relu", [out + "_sum"], [out + "_relu"]))
        nodes.append(N("QuantizeLinear", [out + ("_relu" if relu else "_sum"), out + "_s",
                                          out + "_z"], [out]))
        s = dq(xv, *p[xk]) + dq(yv, *p[yk])
        outs.append(q(np.maximum(s, F(0)) if relu else s, *p[out], t))
        if not relu:
            mm = mismatches(xv, p[xk], yv, p[yk], p[out], t)
            assert (min(mm) == 0) == out.startswith("m"), (out, mm)
    ins = [T("a", TensorProto.UINT8, shp), T("b", TensorProto.UINT8, shp),
           T("c", TensorProto.INT8, shp)]
    outv = [T(o, TensorProto.INT8 if o in ("mi", "mz") else TensorProto.UINT8, shp)
            for o in ("m", "t", "r", "mi", "mz", "l1", "l2")]
    g = helper.make_graph(nodes, "qdq_add_all", ins, outv, inits)
    save("qdq_add_all", g, [a, b, c], outs)


if __name__ == "__main__":
    main()
