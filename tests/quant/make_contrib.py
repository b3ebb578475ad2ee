#!/usr/bin/python3
"""Writes tests/quant/contrib: ONNX Runtime's quantized contrib operators (domain
com.microsoft, as its QOperator quantizer and tf2onnx write them), which kiln's loader
rewrites into its own operators (frontend/onnx_contrib.c). The expected outputs are
computed here in numpy float64 from the formulas of ONNX Runtime's
docs/ContribOperators.md (real arithmetic on the float32 scales), not from kiln:

  QLinearAdd      C = (As (A - Az) + Bs (B - Bz)) / Cs + Cz
  QLinearMul      C = (A - Az)(B - Bz) As Bs / Cs + Cz
  QLinearConcat   Y = concat(quantize(dequantize(X_i)))
  QLinearSigmoid, QLinearLeakyRelu, QLinearSoftmax, QLinearAveragePool,
  QLinearGlobalAveragePool, QLinearReduceMean
                  quantize(op(dequantize(X))) ("Output = Dequantize(Input) -> op on fp32
                  data -> Quantize(output)")
  QLinearWhere    Z = quantize(where(condition, dequantize(X), dequantize(Y)))
  QGemm           Y = alpha As Bs (sum (A - Az)(B - Bz) + C), quantized when y_scale is given
  QLinearConv     the ONNX QLinearConv (qref.conv_ref), channels_last: NHWC in and out
  QuantizeLinear, DequantizeLinear   the ONNX definitions

quantize(v) = saturate(round_half_even(v / s) + z). The data of each case is drawn (seed
after seed) until no unsaturated output lies within MARGIN quantization steps of a
rounding tie, so that any faithful float32 evaluation (kiln's, ONNX Runtime's) rounds
to the same integer as the exact value: the reference does not depend on the order of
float operations.

    /usr/bin/python3 tests/quant/make_contrib.py
    MARGIN=0 OUT=DIR /usr/bin/python3 tests/quant/make_contrib.py    (no margin, elsewhere)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import gen_common as gc  # noqa: E402
from qref import conv_ref  # noqa: E402

MS = "com.microsoft"
MARGIN = float(os.environ.get("MARGIN", "1e-3"))
OUT = os.environ.get("OUT", os.path.join(HERE, "contrib"))  # bench/ort_contrib.py's runs
F = np.float32
N = helper.make_node
TT = {np.bool_: TensorProto.BOOL, np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8, np.float32: TensorProto.FLOAT,
      np.int32: TensorProto.INT32}


class NearTie(Exception):
    pass


def quant(v, s, z, t):
    """quantize(v) in float64; raises NearTie when an unsaturated value is too close to a tie."""
    info = np.iinfo(t)
    r = np.asarray(v, np.float64) / np.float64(F(s))
    f = np.abs(r - np.floor(r) - 0.5)
    y = np.rint(r) + float(z)
    live = (y >= info.min) & (y <= info.max)
    if MARGIN > 0 and np.any(f[live] < MARGIN):
        raise NearTie()
    return np.clip(y, info.min, info.max).astype(t)


def deq(x, s, z):
    return (x.astype(np.float64) - float(z)) * np.float64(F(s))


def rand(rng, t, shape):
    info = np.iinfo(t)
    return rng.integers(info.min, info.max + 1, shape).astype(t)


def vi(name, a):
    return helper.make_tensor_value_info(name, TT[a.dtype.type], list(a.shape))


def init(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def qp(name, s, z):
    """Initializers name_s (float32 scale) and name_z (zero point of z's type)."""
    return [init(name + "_s", F(s)), init(name + "_z", z)]


def save(name, nodes, inits, inputs, outputs, opset=13):
    g = helper.make_graph(nodes, name, [vi(k, a) for k, a in inputs],
                          [vi(k, a) for k, a in outputs], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset),
                                            helper.make_opsetid(MS, 1)],
                          producer_name="kiln-tests")
    m.ir_version = 7
    onnx.checker.check_model(m)
    gc.write_case(os.path.join(OUT, name), m, inputs, outputs)


def drawn(fn):
    """Calls fn(rng) with seeds 0, 1, ... until it raises no NearTie."""
    for seed in range(1000):
        try:
            return fn(np.random.default_rng(seed))
        except NearTie:
            pass
    raise RuntimeError("no seed without near ties")


def case_add(rng):
    a = rand(rng, np.uint8, (2, 4, 3, 19))
    b = rand(rng, np.uint8, (1, 4, 1, 19))
    c = rand(rng, np.int8, (2, 4, 3, 19))
    d = rand(rng, np.int8, (2, 4, 3, 19))
    y1 = quant(deq(a, 0.0371, 121) + deq(b, 0.0219, 98), 0.0523, 112, np.uint8)
    y2 = quant(deq(c, 0.043, 0) + deq(d, 0.061, 0), 0.0817, 0, np.int8)
    nodes = [N("QLinearAdd", ["a", "a_s", "a_z", "b", "b_s", "b_z", "y1_s", "y1_z"], ["y1"],
               name="add_u8", domain=MS),
             N("QLinearAdd", ["c", "c_s", "c_z", "d", "d_s", "d_z", "y2_s", "y2_z"], ["y2"],
               name="add_i8", domain=MS)]
    inits = (qp("a", 0.0371, np.uint8(121)) + qp("b", 0.0219, np.uint8(98)) +
             qp("y1", 0.0523, np.uint8(112)) + qp("c", 0.043, np.int8(0)) +
             qp("d", 0.061, np.int8(0)) + qp("y2", 0.0817, np.int8(0)))
    save("ms_add", nodes, inits, [("a", a), ("b", b), ("c", c), ("d", d)],
         [("y1", y1), ("y2", y2)])


def case_add_grid(rng):
    """Every pair of u8 operands (65,536) at scales whose float32 sums fall on exact
    ties where the real-number formula does not (0.05 + 0.05 -> 0.1: float32 steps
    round 6,444 of them the other way) and at power-of-two ratios (exact ties in both,
    rounded half to even). No margin: the formula in float64 is exact here."""
    global MARGIN
    a = np.repeat(np.arange(256, dtype=np.uint8), 256)
    b = np.tile(np.arange(256, dtype=np.uint8), 256)
    saved, MARGIN = MARGIN, 0
    y1 = quant(deq(a, 0.05, 128) + deq(b, 0.05, 128), 0.1, 128, np.uint8)
    y2 = quant(deq(a, 0.5, 128) + deq(b, 0.25, 100), 0.75, 128, np.uint8)
    MARGIN = saved
    nodes = [N("QLinearAdd", ["a", "t_s", "t_z", "b", "t_s", "t_z", "y1_s", "t_z"], ["y1"],
               name="add_ties", domain=MS),
             N("QLinearAdd", ["a", "p_s", "t_z", "b", "q_s", "q_z", "y2_s", "t_z"], ["y2"],
               name="add_pow2", domain=MS)]
    inits = (qp("t", 0.05, np.uint8(128)) + [init("y1_s", F(0.1)), init("p_s", F(0.5))] +
             qp("q", 0.25, np.uint8(100)) + [init("y2_s", F(0.75))])
    save("ms_add_grid", nodes, inits, [("a", a), ("b", b)], [("y1", y1), ("y2", y2)])


def case_mul(rng):
    a = rand(rng, np.uint8, (3, 7, 11))
    b = rand(rng, np.uint8, (3, 1, 11))
    y = quant(deq(a, 0.021, 130) * deq(b, 0.017, 120), 0.0093, 128, np.uint8)
    nodes = [N("QLinearMul", ["a", "a_s", "a_z", "b", "b_s", "b_z", "y_s", "y_z"], ["y"],
               name="mul", domain=MS)]
    inits = qp("a", 0.021, np.uint8(130)) + qp("b", 0.017, np.uint8(120)) + qp(
        "y", 0.0093, np.uint8(128))
    save("ms_mul", nodes, inits, [("a", a), ("b", b)], [("y", y)])


def case_concat(rng):
    a = rand(rng, np.uint8, (1, 3, 4, 5))
    b = rand(rng, np.uint8, (1, 2, 4, 5))
    c = rand(rng, np.uint8, (1, 4, 4, 5))
    e = rand(rng, np.uint8, (1, 3, 4, 3))
    ys, yz = 0.05, np.uint8(100)
    # different scales: requantized; the same scale and zero point: copied
    y1 = np.concatenate([quant(deq(a, 0.031, 90), ys, yz, np.uint8),
                         quant(deq(b, 0.07, 130), ys, yz, np.uint8),
                         quant(deq(c, ys, yz), ys, yz, np.uint8)], axis=1)
    y2 = np.concatenate([a, e], axis=-1)
    nodes = [N("QLinearConcat", ["y_s", "y_z", "a", "a_s", "a_z", "b", "b_s", "b_z", "c", "y_s",
                                 "y_z"], ["y1"], name="cat_requant", axis=1, domain=MS),
             N("QLinearConcat", ["y_s", "y_z", "a", "y_s", "y_z", "e", "y_s", "y_z"], ["y2"],
               name="cat_same", axis=-1, domain=MS)]
    inits = qp("y", ys, yz) + qp("a", 0.031, np.uint8(90)) + qp("b", 0.07, np.uint8(130))
    save("ms_concat", nodes, inits, [("a", a), ("b", b), ("c", c), ("e", e)], [("y1", y1), ("y2", y2)])


def case_unary(rng):
    xu = rand(rng, np.uint8, (2, 3, 37))
    xi = rand(rng, np.int8, (2, 3, 37))
    sig = quant(1 / (1 + np.exp(-deq(xu, 0.047, 128))), 1 / 256, 0, np.uint8)
    fi = deq(xi, 0.031, -3)
    leaky = quant(np.where(fi < 0, 0.1 * fi, fi), 0.027, 5, np.int8)
    sig8 = quant(1 / (1 + np.exp(-deq(xi, 0.05, 0))), 1 / 256, 0, np.int8)
    nodes = [N("QLinearSigmoid", ["xu", "xu_s", "xu_z", "sig_s", "sig_z"], ["sig"], name="sig",
               domain=MS),
             N("QLinearLeakyRelu", ["xi", "xi_s", "xi_z", "lk_s", "lk_z"], ["leaky"],
               name="leaky", alpha=0.1, domain=MS),
             N("QLinearSigmoid", ["xi", "s8_s", "s8_z", "sig_s", "s8_z"], ["sig8"], name="sig8",
               domain=MS)]
    inits = (qp("xu", 0.047, np.uint8(128)) + qp("sig", 1 / 256, np.uint8(0)) +
             qp("xi", 0.031, np.int8(-3)) + qp("lk", 0.027, np.int8(5)) +
             qp("s8", 0.05, np.int8(0)))
    save("ms_unary", nodes, inits, [("xu", xu), ("xi", xi)],
         [("sig", sig), ("leaky", leaky), ("sig8", sig8)])


def softmax(v, axis):
    e = np.exp(v - v.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def case_softmax(rng):
    x = rand(rng, np.uint8, (2, 3, 10))
    v = deq(x, 0.06, 140)
    y13 = quant(softmax(v, -1), 1 / 256, 0, np.uint8)
    # opset 11, axis 1: the input coerced to 2 x 30, softmax over each row of 30
    y11 = quant(softmax(v.reshape(2, 30), 1).reshape(2, 3, 10), 1 / 256, 0, np.uint8)
    nodes = [N("QLinearSoftmax", ["x", "x_s", "x_z", "y_s", "y_z"], ["y13"], name="sm13",
               axis=-1, opset=13, domain=MS),
             N("QLinearSoftmax", ["x", "x_s", "x_z", "y_s", "y_z"], ["y11"], name="sm11",
               axis=1, opset=11, domain=MS)]
    inits = qp("x", 0.06, np.uint8(140)) + qp("y", 1 / 256, np.uint8(0))
    save("ms_softmax", nodes, inits, [("x", x)], [("y13", y13), ("y11", y11)])


def avgpool(v, k, s, pads, include_pad, ceil=False):
    """NCHW 2-D average pooling in float64 (pads: top, left, bottom, right)."""
    n, c, h, w = v.shape
    oh = (h + pads[0] + pads[2] - k[0]) / s[0] + 1
    ow = (w + pads[1] + pads[3] - k[1]) / s[1] + 1
    oh, ow = (int(np.ceil(oh)), int(np.ceil(ow))) if ceil else (int(oh), int(ow))
    y = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            y0, x0 = i * s[0] - pads[0], j * s[1] - pads[1]
            y1, x1 = min(y0 + k[0], h + pads[2]), min(x0 + k[1], w + pads[3])
            ys, xs = max(y0, 0), max(x0, 0)
            ye, xe = min(y1, h), min(x1, w)
            win = v[:, :, ys:ye, xs:xe].sum(axis=(2, 3))
            cnt = (y1 - y0) * (x1 - x0) if include_pad else (ye - ys) * (xe - xs)
            y[:, :, i, j] = win / cnt
    return y


def case_pool(rng):
    x = rand(rng, np.uint8, (1, 4, 9, 11))
    xn = rand(rng, np.int8, (2, 7, 6, 5))  # NHWC
    p1 = quant(avgpool(deq(x, 0.04, 120), (3, 3), (2, 2), (1, 1, 1, 1), False), 0.03, 110,
               np.uint8)
    vn = deq(xn, 0.02, -4).transpose(0, 3, 1, 2)
    p2 = quant(avgpool(vn, (3, 2), (2, 2), (1, 0, 1, 1), True), 0.015, 3,
               np.int8).transpose(0, 2, 3, 1)
    g1 = quant(deq(x, 0.04, 120).mean(axis=(2, 3), keepdims=True), 0.021, 100, np.uint8)
    g2 = quant(deq(xn, 0.02, -4).mean(axis=(1, 2), keepdims=True), 0.011, -2, np.int8)
    nodes = [N("QLinearAveragePool", ["x", "x_s", "x_z", "p1_s", "p1_z"], ["p1"], name="ap",
               kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=0,
               domain=MS),
             N("QLinearAveragePool", ["xn", "xn_s", "xn_z", "p2_s", "p2_z"], ["p2"],
               name="ap_nhwc", kernel_shape=[3, 2], strides=[2, 2], pads=[1, 0, 1, 1],
               count_include_pad=1, channels_last=1, domain=MS),
             N("QLinearGlobalAveragePool", ["x", "x_s", "x_z", "g1_s", "g1_z"], ["g1"],
               name="gap", domain=MS),
             N("QLinearGlobalAveragePool", ["xn", "xn_s", "xn_z", "g2_s", "g2_z"], ["g2"],
               name="gap_nhwc", channels_last=1, domain=MS)]
    inits = (qp("x", 0.04, np.uint8(120)) + qp("xn", 0.02, np.int8(-4)) +
             qp("p1", 0.03, np.uint8(110)) + qp("p2", 0.015, np.int8(3)) +
             qp("g1", 0.021, np.uint8(100)) + qp("g2", 0.011, np.int8(-2)))
    save("ms_pool", nodes, inits, [("x", x), ("xn", xn)],
         [("p1", p1), ("p2", p2), ("g1", g1), ("g2", g2)])


def case_reduce_where(rng):
    x = rand(rng, np.uint8, (2, 5, 7))
    y = rand(rng, np.uint8, (5, 7))
    cond = rng.random((2, 1, 7)) < 0.5
    fx = deq(x, 0.043, 117)
    r1 = quant(fx.mean(axis=1), 0.0191, 121, np.uint8)
    r2 = quant(fx.mean(axis=-1, keepdims=True), 0.0173, 125, np.uint8)
    w = quant(np.where(cond, fx, deq(y, 0.031, 90)), 0.047, 110, np.uint8)
    nodes = [N("QLinearReduceMean", ["x", "x_s", "x_z", "r1_s", "r1_z"], ["r1"], name="mean1",
               axes=[1], keepdims=0, domain=MS),
             N("QLinearReduceMean", ["x", "x_s", "x_z", "r2_s", "r2_z"], ["r2"], name="mean2",
               axes=[-1], keepdims=1, domain=MS),
             ]
    inits = (qp("x", 0.043, np.uint8(117)) + qp("r1", 0.0191, np.uint8(121)) +
             qp("r2", 0.0173, np.uint8(125)))
    # ONNX Runtime 1.30 has the schema of QLinearReduceMean but no CPU kernel
    save("ms_reduce", nodes, inits, [("x", x)], [("r1", r1), ("r2", r2)])
    nodes = [N("QLinearWhere", ["c", "x", "x_s", "x_z", "y", "y_s", "y_z", "w_s", "w_z"], ["w"],
               name="where", domain=MS)]
    inits = (qp("x", 0.043, np.uint8(117)) + qp("y", 0.031, np.uint8(90)) +
             qp("w", 0.047, np.uint8(110)))
    save("ms_where", nodes, inits, [("x", x), ("y", y), ("c", cond)], [("w", w)])


def case_gemm(rng):
    m, k, n = 5, 23, 13
    a = rand(rng, np.uint8, (m, k))
    at = rand(rng, np.uint8, (k, m))
    w = rand(rng, np.int8, (n, k))          # transB: N x K
    bs = (0.002 + 0.004 * rng.random(n)).astype(F)  # per column
    bias = rng.integers(-3000, 3000, n).astype(np.int32)
    c2 = rng.integers(-3000, 3000, (m, n)).astype(np.int32)
    acc = (a.astype(np.int64) - 131) @ w.T.astype(np.int64)
    # 1: alpha 1, transB, per-column b_scale, bias per column: QLinearMatMul
    y1 = quant((acc + bias) * np.float64(F(0.03)) * bs.astype(np.float64), 0.07, 120, np.uint8)
    # 2: alpha 0.5, transA, a full C: the general path
    acc2 = (at.T.astype(np.int64) - 128) @ w.T.astype(np.int64)
    y2 = quant(0.5 * (acc2 + c2) * np.float64(F(0.025)) * bs.astype(np.float64), 0.04, 100,
               np.uint8)
    # 3: float output (no y_scale)
    y3 = ((acc + bias) * np.float64(F(0.03)) * bs.astype(np.float64)).astype(F)
    nodes = [N("QGemm", ["a", "a_s", "a_z", "w", "w_s", "w_z", "bias", "y1_s", "y1_z"], ["y1"],
               name="qgemm", transB=1, domain=MS),
             N("QGemm", ["at", "at_s", "at_z", "w", "w_s", "w_z", "c2", "y2_s", "y2_z"], ["y2"],
               name="qgemm_alpha", transA=1, transB=1, alpha=0.5, domain=MS),
             N("QGemm", ["a", "a_s", "a_z", "w", "w_s", "w_z", "bias"], ["y3"],
               name="qgemm_float", transB=1, domain=MS)]
    inits = (qp("a", 0.03, np.uint8(131)) + qp("at", 0.025, np.uint8(128)) +
             [init("w", w), init("w_s", bs), init("w_z", np.zeros(n, np.int8)),
              init("bias", bias), init("c2", c2)] +
             qp("y1", 0.07, np.uint8(120)) + qp("y2", 0.04, np.uint8(100)))
    save("ms_gemm", nodes, inits, [("a", a), ("at", at)], [("y1", y1), ("y2", y2), ("y3", y3)])


def case_conv(rng):
    x = rand(rng, np.uint8, (1, 6, 7, 8))  # NHWC
    w = rand(rng, np.int8, (5, 8, 3, 3))
    bias = rng.integers(-500, 500, 5).astype(np.int32)
    acc = conv_ref(x.transpose(0, 3, 1, 2), 125, w, 0, bias, pads=(1, 1, 1, 1))
    v = acc.astype(np.float64) * np.float64(F(0.02)) * np.float64(F(0.005))
    y = quant(v, 0.06, 128, np.uint8).transpose(0, 2, 3, 1)
    nodes = [N("QLinearConv", ["x", "x_s", "x_z", "w", "w_s", "w_z", "y_s", "y_z", "b"], ["y"],
               name="conv_nhwc", kernel_shape=[3, 3], pads=[1, 1, 1, 1], channels_last=1,
               domain=MS)]
    inits = (qp("x", 0.02, np.uint8(125)) + [init("w", w), init("w_s", F(0.005)),
                                               init("w_z", np.int8(0)), init("b", bias)] +
             qp("y", 0.06, np.uint8(128)))
    save("ms_conv", nodes, inits, [("x", x)], [("y", y)])


def case_chain(rng):
    """float -> com.microsoft QuantizeLinear -> QLinearSigmoid with its zero points omitted
    on the output of a com.microsoft QuantizeLinear (its type that of the zero point) ->
    QLinearAdd with Max(w, w) (int8, its type known only after shape inference: the
    zero point a CastLike) -> com.microsoft DequantizeLinear -> float.
    (ONNX Runtime 1.2x refuses the omitted middle zero points its docs call optional.)"""
    x = rng.uniform(-4, 4, (3, 29)).astype(F)
    xq = quant(x.astype(np.float64), 0.04, 0, np.int8)
    s = quant(1 / (1 + np.exp(-deq(xq, 0.04, 0))), 1 / 128, 0, np.int8)
    w = rand(rng, np.int8, (3, 29))
    t = quant(deq(s, 1 / 128, 0) + deq(w, 0.03, 0), 0.05, 0, np.int8)
    y = deq(t, 0.05, 0).astype(F)
    nodes = [N("QuantizeLinear", ["x", "x_s", "x_z"], ["xq"], name="q", domain=MS),
             N("QLinearSigmoid", ["xq", "x_s", "", "s_s"], ["s"], name="sig", domain=MS),
             N("Max", ["w", "w"], ["wm"], name="max"),
             N("QLinearAdd", ["s", "s_s", "", "wm", "w_s", "", "t_s"], ["t"], name="add",
               domain=MS),
             N("DequantizeLinear", ["t", "t_s"], ["y"], name="dq", domain=MS)]
    inits = [init("x_s", F(0.04)), init("x_z", np.int8(0)), init("s_s", F(1 / 128)),
             init("w_s", F(0.03)), init("t_s", F(0.05))]
    save("ms_chain", nodes, inits, [("x", x), ("w", w)], [("y", y)])


def qconv(x, xs, xz, w, ws, ys, yz, t):
    """The ONNX QLinearConv (3x3, pads 1, per-channel ws, wz 0) in float64."""
    acc = conv_ref(x, xz, w, 0, None, pads=(1, 1, 1, 1)).astype(np.float64)
    m = np.float64(F(xs)) * ws.astype(np.float64).reshape(1, -1, 1, 1)
    return quant(acc * m, ys, yz, t)


def case_cnn(rng):
    """A small CNN as ONNX Runtime's QOperator quantizer writes one: QuantizeLinear,
    QLinearConv x2, a residual QLinearAdd, QLinearAveragePool, QLinearGlobalAveragePool,
    Flatten, QGemm, DequantizeLinear."""
    x = rng.uniform(-2, 2, (1, 3, 8, 8)).astype(F)
    w1 = rand(rng, np.int8, (4, 3, 3, 3))
    w2 = rand(rng, np.int8, (4, 4, 3, 3))
    w3 = rand(rng, np.int8, (10, 4))
    ws1 = (0.002 + 0.003 * rng.random(4)).astype(F)
    ws2 = (0.002 + 0.003 * rng.random(4)).astype(F)
    b3 = rng.integers(-2000, 2000, 10).astype(np.int32)
    xq = quant(x.astype(np.float64), 0.0213, 128, np.uint8)
    c1 = qconv(xq, 0.0213, 128, w1, ws1, 0.0517, 60, np.uint8)
    c2 = qconv(c1, 0.0517, 60, w2, ws2, 0.0613, 100, np.uint8)
    a = quant(deq(c1, 0.0517, 60) + deq(c2, 0.0613, 100), 0.0813, 90, np.uint8)
    p = quant(avgpool(deq(a, 0.0813, 90), (2, 2), (2, 2), (0, 0, 0, 0), False), 0.0719, 90,
              np.uint8)
    g = quant(deq(p, 0.0719, 90).mean(axis=(2, 3), keepdims=True), 0.0531, 100, np.uint8)
    f = g.reshape(1, 4)
    acc = (f.astype(np.int64) - 100) @ w3.T.astype(np.int64) + b3
    yq = quant(acc * np.float64(F(0.0531)) * np.float64(F(0.004)), 0.1093, 128, np.uint8)
    y = ((yq.astype(np.float32) - 128) * F(0.1093)).astype(F)
    c = ["x_s", "x_z"]
    nodes = [N("QuantizeLinear", ["x"] + c, ["xq"], name="quant"),
             N("QLinearConv", ["xq"] + c + ["w1", "w1_s", "w1_z", "c1_s", "c1_z"], ["c1"],
               name="conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             N("QLinearConv", ["c1", "c1_s", "c1_z", "w2", "w2_s", "w2_z", "c2_s", "c2_z"],
               ["c2"], name="conv2", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             N("QLinearAdd", ["c1", "c1_s", "c1_z", "c2", "c2_s", "c2_z", "a_s", "a_z"], ["a"],
               name="add", domain=MS),
             N("QLinearAveragePool", ["a", "a_s", "a_z", "p_s", "p_z"], ["p"], name="pool",
               kernel_shape=[2, 2], strides=[2, 2], domain=MS),
             N("QLinearGlobalAveragePool", ["p", "p_s", "p_z", "g_s", "g_z"], ["g"], name="gap",
               domain=MS),
             N("Flatten", ["g"], ["f"], name="flatten"),
             N("QGemm", ["f", "g_s", "g_z", "w3", "w3_s", "w3_z", "b3", "y_s", "y_z"], ["yq"],
               name="fc", transB=1, domain=MS),
             N("DequantizeLinear", ["yq", "y_s", "y_z"], ["y"], name="dequant")]
    inits = (qp("x", 0.0213, np.uint8(128)) + qp("c1", 0.0517, np.uint8(60)) +
             qp("c2", 0.0613, np.uint8(100)) + qp("a", 0.0813, np.uint8(90)) +
             qp("p", 0.0719, np.uint8(90)) + qp("g", 0.0531, np.uint8(100)) +
             qp("y", 0.1093, np.uint8(128)) +
             [init("w1", w1), init("w1_s", ws1), init("w1_z", np.zeros(4, np.int8)),
              init("w2", w2), init("w2_s", ws2), init("w2_z", np.zeros(4, np.int8)),
              init("w3", w3), init("w3_s", F(0.004)), init("w3_z", np.int8(0)), init("b3", b3)])
    save("ms_cnn", nodes, inits, [("x", x)], [("y", y)])


def case_qdq(rng):
    """A QDQ convolution written with com.microsoft QuantizeLinear/DequantizeLinear (as ORT's
    quantizer writes them for 16-bit types or with its contrib-op option): they become the
    ONNX operators, and the qdq pass then makes the convolution a fixed-point QLinearConv
    (its rounding within a relative 2^-31 of the formula's, inside the margin)."""
    x = rng.uniform(-2, 2, (1, 4, 6, 6)).astype(F)
    w = rand(rng, np.int8, (5, 4, 3, 3))
    ws = (0.002 + 0.003 * rng.random(5)).astype(F)
    xs = F(0.0213)
    bs = (xs * ws).astype(F)  # the bias scale x_scale * w_scale[c], in float32
    b = rng.integers(-500, 500, 5).astype(np.int32)
    xq = quant(x.astype(np.float64), xs, 128, np.uint8)
    acc = conv_ref(xq, 128, w, 0, b, pads=(1, 1, 1, 1)).astype(np.float64)
    yq = quant(acc * np.float64(xs) * ws.astype(np.float64).reshape(1, -1, 1, 1), 0.0617, 120,
               np.uint8)
    y = ((yq.astype(np.float32) - 120) * F(0.0617)).astype(F)
    nodes = [N("QuantizeLinear", ["x", "x_s", "x_z"], ["xq"], name="qx", domain=MS),
             N("DequantizeLinear", ["xq", "x_s", "x_z"], ["xf"], name="dqx", domain=MS),
             N("DequantizeLinear", ["w", "w_s", "w_z"], ["wf"], name="dqw", axis=0, domain=MS),
             N("DequantizeLinear", ["b", "b_s", "b_z"], ["bf"], name="dqb", axis=0, domain=MS),
             N("Conv", ["xf", "wf", "bf"], ["c"], name="conv", kernel_shape=[3, 3],
               pads=[1, 1, 1, 1]),
             N("QuantizeLinear", ["c", "y_s", "y_z"], ["yq"], name="qy", domain=MS),
             N("DequantizeLinear", ["yq", "y_s", "y_z"], ["y"], name="dqy", domain=MS)]
    inits = (qp("x", xs, np.uint8(128)) + qp("y", 0.0617, np.uint8(120)) +
             [init("w", w), init("w_s", ws), init("w_z", np.zeros(5, np.int8)), init("b", b),
              init("b_s", bs), init("b_z", np.zeros(5, np.int32))])
    save("ms_qdq", nodes, inits, [("x", x)], [("y", y)])


def main():
    for fn in (case_add, case_add_grid, case_mul, case_concat, case_unary, case_softmax, case_pool, case_gemm,
               case_conv, case_chain, case_cnn, case_qdq, case_reduce_where):
        drawn(fn)


if __name__ == "__main__":
    main()
