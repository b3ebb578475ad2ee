#!/usr/bin/python3
"""Writes tests/quant/fixed/qdq_fixed: a QDQ model whose layers the qdq pass turns into
QLinearConv / QLinearMatMul with fixed-point requantization (ir/requant.h,
docs/quantization.md), and its expected outputs computed here from that definition with
Python integers and fractions (an implementation independent of kiln's C):

    M     = float64(x_scale) * float64(w_scale[c]) / float64(y_scale)
    mult  = M's mantissa (frexp, in [0.5, 1)) times 2^31 rounded half up; shift = 31 - exp
    y     = saturate(round_half_even(sat32(acc) * mult / 2^shift) + y_zp)

Layers (8-bit inputs and outputs, so each output is exactly the integer pipeline's):
- xq u8 [1, 8, 7, 7] -> Conv 3x3 pad 1 (int8 per-channel weights, random non-power-of-two
  scales, int32 bias) -> Relu -> QuantizeLinear u8: the conv register tiles.
- aq u8 [6, 2] -> MatMul with int8 B [2, 5] (per-column scales) -> QuantizeLinear i8,
  y_scale 0.75. Column 0 has M = 3/64 exactly, and rows 0-3 give it accumulators 32, 96,
  -32, -96: ties, which round half to even (2, 4, -2, -4; half away from zero would give
  5 and -5). Column 1 has M = w_scale / 6 (53 significant bits), and rows 4-5 give it
  accumulators where the 31-bit multiplier rounds differently from the double product
  (found by search below), so the model tells the fixed-point form from ONNX's.

    /usr/bin/python3 tests/quant/make_qdq_fixed.py
"""
import math
import os
import sys
from fractions import Fraction

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_quant_models import conv_ref, init, save  # noqa: E402

rng = np.random.default_rng(2026)


def qmul(m):
    """(mult, shift) of multiplier m, as docs/quantization.md defines them."""
    if not m > 0:
        return 0, 31
    f, e = math.frexp(m)
    mt = math.floor(f * 2.0 ** 31 + 0.5)
    if mt == 2 ** 31:
        mt //= 2
        e += 1
    if e > 30:
        return 2 ** 30, 1
    if 31 - e > 62:
        return 0, 31
    return mt, 31 - e


def fixed(acc, m, zp, lo, hi):
    mult, shift = qmul(m)
    a = max(min(int(acc), 2 ** 31 - 1), -2 ** 31)
    r = round(Fraction(a * mult, 2 ** shift))  # Fraction rounds half to even
    return max(lo, min(hi, r + int(zp)))


def requant_fixed(acc, xs, ws, ys, yz, dtype, axis):
    """acc int64 array; ws per index along axis (or scalar)."""
    info = np.iinfo(dtype)
    ws = np.broadcast_to(np.asarray(ws, np.float32).reshape(-1), (acc.shape[axis],))
    out = np.empty(acc.shape, dtype)
    for idx in np.ndindex(acc.shape):
        m = float(np.float64(xs)) * float(np.float64(ws[idx[axis]])) / float(np.float64(ys))
        out[idx] = fixed(acc[idx], m, yz, info.min, info.max)
    return out


def main():
    # ---- conv ----
    xq = rng.integers(0, 256, (1, 8, 7, 7), dtype=np.uint8)
    xs, xz = np.float32(0.0213), np.uint8(119)
    w1 = rng.integers(-127, 128, (16, 8, 3, 3), dtype=np.int8)
    w1s = (rng.random(16) * 0.018 + 0.002).astype(np.float32)
    b1 = rng.integers(-5000, 5000, 16).astype(np.int32)
    b1s = (xs * w1s).astype(np.float32)  # float32 product, as the qdq pass checks
    y1s, y1z = np.float32(0.173), np.uint8(3)
    acc1 = conv_ref(xq, xz, w1, np.zeros(16, np.int64), pads=(1, 1, 1, 1), bias=b1)
    y1 = requant_fixed(np.maximum(acc1, 0), xs, w1s, y1s, y1z, np.uint8, 1)
    # Relu before QuantizeLinear: sat(round(max(v, 0)) + yz); max(acc, 0) has the same value

    # ---- matmul: ties in column 0, double-vs-fixed differences in column 1 ----
    a_s, a_z = np.float32(0.125), np.uint8(128)
    ys, yz = np.float32(0.75), np.int8(-5)
    bs = np.array([0.28125, 0.0, 0, 0, 0], np.float32)  # 0.125 * 0.28125 / 0.75 = 3/64
    bs[2:] = (rng.random(3) * 0.05 + 0.01).astype(np.float32)
    B = np.zeros((2, 5), np.int8)
    B[:, 0] = [1, 0]
    B[:, 1] = [127, 1]
    B[:, 2:] = rng.integers(-127, 128, (2, 3), dtype=np.int8)
    accs = np.arange(-16000, 16001, dtype=np.int64)
    found = None
    for _ in range(20000):  # a column-1 scale where two accumulators tell the forms apart
        s1 = np.float32(rng.random() * 0.2 + 0.05)
        m = float(np.float64(a_s)) * float(np.float64(s1)) / float(np.float64(ys))
        mult, shift = qmul(m)
        prod = accs * mult  # < 2^46: exact in int64
        fl = prod >> shift
        rem = prod - (fl << shift)
        half = 1 << (shift - 1)
        fx = fl + ((rem > half) | ((rem == half) & (fl & 1 == 1)))
        dbl = np.rint(accs.astype(np.float64) * m).astype(np.int64)
        diff = accs[(fx != dbl) & (np.abs(fx) < 100)]
        pos, neg = diff[diff > 0], diff[diff < 0]
        if len(pos) and len(neg):
            found = (s1, int(pos[0]), int(neg[0]))
            break
    assert found, "no scale found"
    bs[1] = found[0]
    A = np.full((6, 2), 128, np.uint8)
    A[0:4, 0] = [160, 224, 96, 32]  # column 0 accumulators 32, 96, -32, -96
    for r, acc in ((4, found[1]), (5, found[2])):
        u = int(round(acc / 127))
        v = acc - 127 * u
        assert -128 <= u <= 127 and -128 <= v <= 127
        A[r] = [u + 128, v + 128]
    acc2 = (A.astype(np.int64) - 128) @ B.astype(np.int64)
    y2 = requant_fixed(acc2, a_s, bs, ys, yz, np.int8, 1)
    m0 = [fixed(a, 3 / 64, 0, -128, 127) for a in acc2[0:4, 0]]
    assert m0 == [2, 4, -2, -4], m0

    N = helper.make_node
    nodes = [
        N("DequantizeLinear", ["xq", "xs", "xz"], ["xf"], name="dq_x"),
        N("DequantizeLinear", ["w1", "w1s", "w1z"], ["w1f"], axis=0, name="dq_w1"),
        N("DequantizeLinear", ["b1", "b1s"], ["b1f"], axis=0, name="dq_b1"),
        N("Conv", ["xf", "w1f", "b1f"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
        N("Relu", ["c1"], ["r1"], name="relu1"),
        N("QuantizeLinear", ["r1", "y1s", "y1z"], ["y1"], name="q1"),
        N("DequantizeLinear", ["aq", "a_s", "a_z"], ["af"], name="dq_a"),
        N("DequantizeLinear", ["B", "bs", "bz"], ["Bf"], axis=1, name="dq_b"),
        N("MatMul", ["af", "Bf"], ["m2"], name="fc"),
        N("QuantizeLinear", ["m2", "ys", "yz"], ["y2"], name="q2"),
    ]
    inits = [init("xs", xs), init("xz", xz), init("w1", w1), init("w1s", w1s),
             init("w1z", np.zeros(16, np.int8)), init("b1", b1), init("b1s", b1s),
             init("y1s", y1s), init("y1z", y1z), init("a_s", a_s), init("a_z", a_z), init("B", B),
             init("bs", bs), init("bz", np.zeros(5, np.int8)), init("ys", ys), init("yz", yz)]
    g = helper.make_graph(nodes, "qdq_fixed",
                          [helper.make_tensor_value_info("xq", TensorProto.UINT8, xq.shape),
                           helper.make_tensor_value_info("aq", TensorProto.UINT8, A.shape)],
                          [helper.make_tensor_value_info("y1", TensorProto.UINT8, y1.shape),
                           helper.make_tensor_value_info("y2", TensorProto.INT8, y2.shape)], inits)
    save("../fixed/qdq_fixed", g, [xq, A], [y1, y2])
    print("column-1 scale %r, accumulators %d %d" % found)


if __name__ == "__main__":
    main()
