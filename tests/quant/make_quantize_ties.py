#!/usr/bin/python3
"""Writes tests/quant/models/quantize_ties: QuantizeLinear from float32 into uint8 and int8
at the values where a rounding or saturation shortcut would go wrong, with the expected
bytes computed here with numpy from the ONNX definition, y = saturate(round_half_even(x /
scale) + zero_point), the quotient in float32 (NaN gives 0, kiln's choice: ir/lower/quant.c):

  - ties k + 0.5 for every k that lands in or next to the output range (scale 1 and 0.5,
    so the quotient is exact), on both sides of every bound, and their neighbours one
    float32 ulp away (0.49999997, 0.50000006, 2.4999998, ...);
  - magnitudes around 2^22 and 2^23 (where the 1.5 * 2^23 addition of kx_round_small
    stops being exact, and the range test of the int32 path sits), 1e30, +-inf, NaN,
    -0.0, subnormals;
  - random values with an inexact scale (0.0137) and per-axis scales and zero points;
  - for inexact scales (where the microcontrollers' vector form divides by a reciprocal
    multiply and two exact corrections, passes/vmath.c kn_vmath_div_const): inputs whose
    float32 quotient is exactly a tie k + 0.5, their neighbours 1 and 2 ulp away, values
    around the clamp at 2^22 * scale, and the edge values above (x) through the same
    scales: input xt, outputs y_t_*; a length that is not a multiple of 4 (the scalar rest);
  - NaN and infinities at several places of the blocks of 16 that the microcontrollers
    quantize with one NaN test (xn, outputs y_n_*).

    /usr/bin/python3 tests/quant/make_quantize_ties.py
"""
import os

import numpy as np
from onnx import TensorProto, helper

from make_quant_models import init, save

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(22)


def qref(x, scale, zp, dtype):
    """The ONNX QuantizeLinear definition: float32 quotient, half-to-even, saturate."""
    info = np.iinfo(dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        q = (x.astype(np.float32) / np.asarray(scale, np.float32)).astype(np.float64)
        y = np.clip(np.rint(q) + np.asarray(zp, np.float64), info.min, info.max)
    y = np.where(np.isnan(q), 0, y)
    return y.astype(dtype)


def edge_values():
    f = np.float32
    ties = np.arange(-400, 400, dtype=np.float64) + 0.5
    v = [ties, ties / 2]  # exact quotients k + 0.5 with scale 1 and 0.5
    up = np.nextafter(ties.astype(f), f(np.inf))
    dn = np.nextafter(ties.astype(f), f(-np.inf))
    v += [up, dn]
    big = []
    for e in (21, 22, 23, 24, 31, 32):
        b = f(2.0**e)
        big += [b, np.nextafter(b, f(0)), np.nextafter(b, f(np.inf)), b + f(0.5), b - f(0.5),
                b * f(1.5)]
    big = np.array(big, f)
    v += [big, -big]
    v.append(np.array([0.0, -0.0, 1e-45, -1e-45, 1.1754942e-38, 0.49999997, -0.49999997,
                       0.50000006, -0.50000006, 1e30, -1e30, 3.4028235e38, -3.4028235e38,
                       np.inf, -np.inf, np.nan, -np.nan], f))
    x = np.concatenate([np.asarray(a, f).reshape(-1) for a in v])
    return x


TSCALES = [np.float32(v) for v in (0.0137, 0.1, 1.0 / 3.0, 0.004296875, 3.7, 1.3 * 2.0**-60,
                                    0.7 * 2.0**60)]


def tie_inputs():
    """Per scale s: v with float32(v / s) == k + 0.5 (searched around float32((k + .5) s)),
    v's neighbours 1 and 2 ulp away, and values around 2^22 s and 2^15 s."""
    f = np.float32
    out = []
    for s in TSCALES:
        for k in range(-140, 141):
            t = f(k + 0.5)
            v = f(np.float64(t) * np.float64(s))
            for _ in range(8):  # step v until its quotient is the tie, if one exists
                q = v / s
                if q == t:
                    break
                v = np.nextafter(v, f(np.inf) if q < t else f(-np.inf))
            out += [v, np.nextafter(v, f(np.inf)), np.nextafter(v, f(-np.inf)),
                    np.nextafter(np.nextafter(v, f(np.inf)), f(np.inf)),
                    np.nextafter(np.nextafter(v, f(-np.inf)), f(-np.inf))]
        for m in (2.0**22, 2.0**15, 127.5, 255.5):
            b = f(m * np.float64(s))
            out += [b, np.nextafter(b, f(0)), np.nextafter(b, f(np.inf)), -b,
                    np.nextafter(-b, f(0)), np.nextafter(-b, f(-np.inf))]
    x = np.array(out, f)
    return x[: x.size - (x.size % 4) + 3] if x.size % 4 != 3 else x


def main():
    x = edge_values()
    n = x.size
    xr = (rng.standard_normal((4, 257)) * 2.0).astype(np.float32)
    cases = [  # (name, scale, zero point, dtype)
        ("u8_s1_z128", np.float32(1.0), np.uint8(128), np.uint8),
        ("u8_s05_z0", np.float32(0.5), np.uint8(0), np.uint8),
        ("u8_s1_z255", np.float32(1.0), np.uint8(255), np.uint8),
        ("s8_s1_z0", np.float32(1.0), np.int8(0), np.int8),
        ("s8_s05_zm3", np.float32(0.5), np.int8(-3), np.int8),
        ("s8_s1_z127", np.float32(1.0), np.int8(127), np.int8),
        ("s8_s1_zm128", np.float32(1.0), np.int8(-128), np.int8),
    ]
    N = helper.make_node
    nodes, inits, outs, expect = [], [], [], []
    for name, s, z, dt in cases:
        nodes.append(N("QuantizeLinear", ["x", "s_" + name, "z_" + name], ["y_" + name],
                       name="q_" + name))
        inits += [init("s_" + name, s), init("z_" + name, z)]
        tp = TensorProto.UINT8 if dt == np.uint8 else TensorProto.INT8
        outs.append(helper.make_tensor_value_info("y_" + name, tp, [n]))
        expect.append(qref(x, s, z, dt))
    # random values, an inexact scale; per-axis scales and zero points (axis 0 of 4 rows)
    nodes.append(N("QuantizeLinear", ["xr", "s_r", "z_r"], ["y_r"], name="q_r"))
    inits += [init("s_r", np.float32(0.0137)), init("z_r", np.int8(-5))]
    outs.append(helper.make_tensor_value_info("y_r", TensorProto.INT8, list(xr.shape)))
    expect.append(qref(xr, np.float32(0.0137), np.int8(-5), np.int8))
    sa = np.array([0.0137, 0.5, 1.0, 0.031], np.float32)
    za = np.array([3, 0, 250, 128], np.uint8)
    nodes.append(N("QuantizeLinear", ["xr", "s_a", "z_a"], ["y_a"], axis=0, name="q_a"))
    inits += [init("s_a", sa), init("z_a", za)]
    outs.append(helper.make_tensor_value_info("y_a", TensorProto.UINT8, list(xr.shape)))
    expect.append(qref(xr, sa.reshape(4, 1), za.reshape(4, 1), np.uint8))
    # inexact scales: the ties and their neighbours (xt), the edge values (x)
    xt = tie_inputs()
    for i, s in enumerate(TSCALES):
        dt, tp, z = (np.uint8, TensorProto.UINT8, np.uint8(128)) if i % 2 else \
            (np.int8, TensorProto.INT8, np.int8(-5 + i))
        for inp, xin in (("xt", xt), ("x", x)):
            name = "t%d_%s" % (i, inp)
            nodes.append(N("QuantizeLinear", [inp, "s_" + name, "z_" + name], ["y_" + name],
                           name="q_" + name))
            inits += [init("s_" + name, s), init("z_" + name, z)]
            outs.append(helper.make_tensor_value_info("y_" + name, tp, [xin.size]))
            expect.append(qref(xin, s, z, dt))
    # NaN and infinities inside the microcontrollers' blocks of 16 (ir/lower/quant.c
    # QUANT_BLOCK: one NaN test for a block, then each element tested): xn
    xn = nan_blocks()
    for name, s, z, dt, tp in (("n_u8", 0.05, np.uint8(128), np.uint8, TensorProto.UINT8),
                               ("n_s8", 0.05, np.int8(-3), np.int8, TensorProto.INT8),
                               ("n_z0", 0.05, np.int8(0), np.int8, TensorProto.INT8)):
        nodes.append(N("QuantizeLinear", ["xn", "s_" + name, "z_" + name], ["y_" + name],
                       name="q_" + name))
        inits += [init("s_" + name, np.float32(s)), init("z_" + name, z)]
        outs.append(helper.make_tensor_value_info("y_" + name, tp, [xn.size]))
        expect.append(qref(xn, np.float32(s), z, dt))
    g = helper.make_graph(nodes, "quantize_ties",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n]),
                           helper.make_tensor_value_info("xr", TensorProto.FLOAT, list(xr.shape)),
                           helper.make_tensor_value_info("xt", TensorProto.FLOAT, [xt.size]),
                           helper.make_tensor_value_info("xn", TensorProto.FLOAT, [xn.size])],
                          outs, inits)
    save("quantize_ties", g, [x, xr, xt, xn], expect)


def nan_blocks():
    """11 blocks of 16 and 3 more: random values, and in block b the specials of case b --
    a NaN first, last or in the middle, -NaN, two NaNs, +inf and -inf together (their sum
    is NaN with no NaN among them), +inf alone, NaN next to an infinity, none."""
    f = np.float32
    r = np.random.default_rng(7)
    xn = (r.standard_normal(11 * 16 + 3) * 4).astype(f)
    nan, inf = f(np.nan), f(np.inf)
    cases = [{}, {0: nan}, {15: nan}, {7: -nan}, {3: nan, 12: nan}, {5: inf, 9: -inf},
             {2: inf}, {4: -inf}, {8: nan, 9: inf}, {1: -inf, 14: nan}, {}]
    for b, c in enumerate(cases):
        for k, v in c.items():
            xn[16 * b + k] = v
    xn[-2] = nan
    return xn


if __name__ == "__main__":
    main()
