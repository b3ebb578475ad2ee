#!/usr/bin/python3
"""Writes the quantized test models of tests/quant/models (run with /usr/bin/python3, which
has onnx and numpy): graphs of QLinearConv, QLinearMatMul, ConvInteger and MatMulInteger
written directly with onnx.helper, and their expected outputs computed with numpy from the
ONNX operator definitions (zero points subtracted, products summed exactly in int64, bias
added, then y = saturate(round_half_even(acc * (x_scale * w_scale / y_scale)) + y_zp)
in double). Each model gets test_data_set_0 (inputs and expected outputs as TensorProto),
so `kiln check-onnx tests/quant/models --backend B` compares every backend exactly.

    /usr/bin/python3 tests/quant/make_quant_models.py
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qref import conv_ref, dq, init, requant, save  # noqa: E402,F401 (also imported from here)

rng = np.random.default_rng(12)


def qlinear_cnn():
    """u8 image -> QLinearConv (int8 per-channel weights, int32 bias) -> grouped, strided,
    asymmetrically padded QLinearConv (u8 per-tensor weights with a zero point) ->
    Reshape -> QLinearMatMul (int8 weights, per-column scales)."""
    x = rng.integers(0, 256, (2, 3, 9, 9), dtype=np.uint8)
    xs, xz = np.float32(0.02), np.uint8(128)
    w1 = rng.integers(-127, 128, (8, 3, 3, 3), dtype=np.int8)
    w1s = (rng.random(8) * 0.004 + 0.001).astype(np.float32)
    w1z = np.zeros(8, np.int8)
    b1 = rng.integers(-2000, 2000, 8).astype(np.int32)
    y1s, y1z = np.float32(0.05), np.uint8(100)
    acc1 = conv_ref(x, xz, w1, w1z, pads=(1, 1, 1, 1), bias=b1)
    y1 = requant(acc1, xs, w1s, y1s, y1z, np.uint8, (1, 8, 1, 1))

    w2 = rng.integers(0, 256, (16, 4, 3, 3), dtype=np.uint8)
    w2s, w2z = np.float32(0.003), np.uint8(120)
    y2s, y2z = np.float32(0.1), np.uint8(90)
    pads2 = (1, 0, 1, 1)  # begin h, begin w, end h, end w
    acc2 = conv_ref(y1, y1z, w2, w2z, group=2, strides=(2, 2), pads=pads2)
    y2 = requant(acc2, y1s, w2s, y2s, y2z, np.uint8, (1, 1, 1, 1))

    k = int(np.prod(y2.shape[1:]))
    w3 = rng.integers(-127, 128, (k, 10), dtype=np.int8)
    w3s = (rng.random(10) * 0.002 + 0.0005).astype(np.float32)
    w3z = np.zeros(10, np.int8)
    y3s, y3z = np.float32(0.2), np.uint8(128)
    a = y2.reshape(2, k)
    acc3 = (a.astype(np.int64) - np.int64(y2z)) @ (w3.astype(np.int64) - w3z.astype(np.int64))
    y3 = requant(acc3, y2s, w3s, y3s, y3z, np.uint8, (1, 10))

    nodes = [
        helper.make_node("QLinearConv", ["x", "xs", "xz", "w1", "w1s", "w1z", "y1s", "y1z", "b1"], ["y1"],
                         pads=[1, 1, 1, 1], name="conv1"),
        helper.make_node("QLinearConv", ["y1", "y1s", "y1z", "w2", "w2s", "w2z", "y2s", "y2z"], ["y2"],
                         group=2, strides=[2, 2], pads=list(pads2), name="conv2"),
        helper.make_node("Reshape", ["y2", "shape"], ["flat"], name="flatten"),
        helper.make_node("QLinearMatMul", ["flat", "y2s", "y2z", "w3", "w3s", "w3z", "y3s", "y3z"], ["y3"],
                         name="fc"),
    ]
    inits = [init("xs", xs), init("xz", xz), init("w1", w1), init("w1s", w1s), init("w1z", w1z),
             init("y1s", y1s), init("y1z", y1z), init("b1", b1), init("w2", w2), init("w2s", w2s),
             init("w2z", w2z), init("y2s", y2s), init("y2z", y2z), init("shape", np.array([2, k], np.int64)),
             init("w3", w3), init("w3s", w3s), init("w3z", w3z), init("y3s", y3s), init("y3z", y3z)]
    g = helper.make_graph(nodes, "qlinear_cnn", [helper.make_tensor_value_info("x", TensorProto.UINT8, x.shape)],
                          [helper.make_tensor_value_info("y3", TensorProto.UINT8, y3.shape),
                           helper.make_tensor_value_info("y2", TensorProto.UINT8, y2.shape)], inits)
    save("qlinear_cnn", g, [x], [y3, y2])


def integer_ops():
    """ConvInteger (u8 input with a zero point, u8 weights with per-channel zero points,
    padding) and MatMulInteger (u8 rows with a zero point, int8 weights with per-column
    zero points), int32 outputs."""
    x = rng.integers(0, 256, (1, 4, 7, 6), dtype=np.uint8)
    xz = np.uint8(3)
    w = rng.integers(0, 256, (12, 4, 3, 3), dtype=np.uint8)
    wz = rng.integers(100, 150, 12).astype(np.uint8)
    yc = conv_ref(x, xz, w, wz, pads=(1, 1, 1, 1)).astype(np.int32)
    a = rng.integers(0, 256, (5, 40), dtype=np.uint8)
    az = np.uint8(130)
    b = rng.integers(-128, 128, (40, 20), dtype=np.int8)
    bz = rng.integers(-5, 5, 20).astype(np.int8)
    ym = ((a.astype(np.int64) - az) @ (b.astype(np.int64) - bz.astype(np.int64))).astype(np.int32)
    nodes = [
        helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["yc"], pads=[1, 1, 1, 1], name="conv"),
        helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["ym"], name="mm"),
    ]
    inits = [init("w", w), init("xz", xz), init("wz", wz), init("b", b), init("az", az), init("bz", bz)]
    g = helper.make_graph(nodes, "integer_ops",
                          [helper.make_tensor_value_info("x", TensorProto.UINT8, x.shape),
                           helper.make_tensor_value_info("a", TensorProto.UINT8, a.shape)],
                          [helper.make_tensor_value_info("yc", TensorProto.INT32, yc.shape),
                           helper.make_tensor_value_info("ym", TensorProto.INT32, ym.shape)], inits)
    save("integer_ops", g, [x, a], [yc, ym])


def qlinear_odd():
    """Odd sizes for the integer tiles' dot products (KX_DOT): int8 activations with a
    nonzero zero point (the u8 x s8 dot shifts them by 128), 5 and 19 input channels and
    a reduction of 77 (partial words of 4 and of 2), 19 and 13 output channels (partial
    blocks of 8 and 16 lanes), a 3x2 kernel with stride (1, 2) and asymmetric padding
    (padding taps step with the zero point's word), per-channel weight scales; and a
    QLinearMatMul of u8 weights with per-column zero points, whose w - wz leave the int8
    range (the pair-of-16-bit dot)."""
    x = rng.integers(-128, 128, (1, 5, 11, 13), dtype=np.int8)
    xs, xz = np.float32(0.03), np.int8(-5)
    w1 = rng.integers(-127, 128, (19, 5, 3, 2), dtype=np.int8)
    w1s = (rng.random(19) * 0.004 + 0.001).astype(np.float32)
    w1z = np.zeros(19, np.int8)
    b1 = rng.integers(-3000, 3000, 19).astype(np.int32)
    y1s, y1z = np.float32(0.06), np.int8(7)
    pads1 = (2, 1, 0, 1)
    acc1 = conv_ref(x, xz, w1, w1z, strides=(1, 2), pads=pads1, bias=b1)
    y1 = requant(acc1, xs, w1s, y1s, y1z, np.int8, (1, 19, 1, 1))

    w2 = rng.integers(-127, 128, (9, 19, 1, 1), dtype=np.int8)
    w2s = (rng.random(9) * 0.004 + 0.001).astype(np.float32)
    w2z = np.zeros(9, np.int8)
    y2s, y2z = np.float32(0.08), np.int8(-3)
    acc2 = conv_ref(y1, y1z, w2, w2z)
    y2 = requant(acc2, y1s, w2s, y2s, y2z, np.int8, (1, 9, 1, 1))

    k = y2.shape[2] * y2.shape[3]  # 77
    w3 = rng.integers(-127, 128, (k, 13), dtype=np.int8)
    w3s = (rng.random(13) * 0.002 + 0.0005).astype(np.float32)
    w3z = np.zeros(13, np.int8)
    y3s, y3z = np.float32(0.15), np.int8(1)
    a3 = y2.reshape(9, k)
    acc3 = (a3.astype(np.int64) - np.int64(y2z)) @ w3.astype(np.int64)
    y3 = requant(acc3, y2s, w3s, y3s, y3z, np.int8, (1, 13))

    a = rng.integers(0, 256, (3, 10), dtype=np.uint8)
    az, asc = np.uint8(140), np.float32(0.01)
    w4 = rng.integers(0, 256, (10, 17), dtype=np.uint8)
    w4z = rng.integers(100, 150, 17).astype(np.uint8)
    w4s = (rng.random(17) * 0.01 + 0.005).astype(np.float32)
    y4s, y4z = np.float32(0.05), np.uint8(120)
    acc4 = (a.astype(np.int64) - np.int64(az)) @ (w4.astype(np.int64) - w4z.astype(np.int64))
    y4 = requant(acc4, asc, w4s, y4s, y4z, np.uint8, (1, 17))

    nodes = [
        helper.make_node("QLinearConv", ["x", "xs", "xz", "w1", "w1s", "w1z", "y1s", "y1z", "b1"], ["y1"],
                         strides=[1, 2], pads=list(pads1), name="conv1"),
        helper.make_node("QLinearConv", ["y1", "y1s", "y1z", "w2", "w2s", "w2z", "y2s", "y2z"], ["y2"],
                         name="conv2"),
        helper.make_node("Reshape", ["y2", "shape"], ["rows"], name="rows"),
        helper.make_node("QLinearMatMul", ["rows", "y2s", "y2z", "w3", "w3s", "w3z", "y3s", "y3z"], ["y3"],
                         name="fc"),
        helper.make_node("QLinearMatMul", ["a", "as", "az", "w4", "w4s", "w4z", "y4s", "y4z"], ["y4"],
                         name="fc_u8"),
    ]
    inits = [init("xs", xs), init("xz", xz), init("w1", w1), init("w1s", w1s), init("w1z", w1z),
             init("y1s", y1s), init("y1z", y1z), init("b1", b1), init("w2", w2), init("w2s", w2s),
             init("w2z", w2z), init("y2s", y2s), init("y2z", y2z), init("shape", np.array([9, k], np.int64)),
             init("w3", w3), init("w3s", w3s), init("w3z", w3z), init("y3s", y3s), init("y3z", y3z),
             init("as", asc), init("az", az), init("w4", w4), init("w4s", w4s), init("w4z", w4z),
             init("y4s", y4s), init("y4z", y4z)]
    g = helper.make_graph(nodes, "qlinear_odd",
                          [helper.make_tensor_value_info("x", TensorProto.INT8, x.shape),
                           helper.make_tensor_value_info("a", TensorProto.UINT8, a.shape)],
                          [helper.make_tensor_value_info("y3", TensorProto.INT8, y3.shape),
                           helper.make_tensor_value_info("y2", TensorProto.INT8, y2.shape),
                           helper.make_tensor_value_info("y4", TensorProto.UINT8, y4.shape)], inits)
    save("qlinear_odd", g, [x, a], [y3, y2, y4])


def qz(y, scale, zp, dtype):
    """QuantizeLinear: saturate(round_half_even(y / scale) + zp)."""
    v = np.rint(np.asarray(y, np.float64) / np.float64(scale)) + np.float64(zp)
    info = np.iinfo(dtype)
    return np.clip(v, info.min, info.max).astype(dtype)


def conv_f(x, w, b=None, strides=(1, 1), pads=(0, 0, 0, 0)):
    """Float convolution in float64 of float32 values (exact products, double sums)."""
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (xp.shape[2] - kh) // strides[0] + 1
    ow = (xp.shape[3] - kw) // strides[1] + 1
    y = np.zeros((n, m, oh, ow))
    for i in range(oh):
        for j in range(ow):
            win = xp[:, :, i * strides[0]:i * strides[0] + kh, j * strides[1]:j * strides[1] + kw]
            y[:, :, i, j] = np.einsum("nchw,mchw->nm", win, w.astype(np.float64))
    if b is not None:
        y += b.astype(np.float64).reshape(1, m, 1, 1)
    return y


def qdq_cnn():
    """A QDQ model as quantization tools write it (QuantizeLinear/DequantizeLinear
    around float Conv, MatMul and Gemm), which passes/qdq.c rewrites into QLinearConv /
    QLinearMatMul: float input quantized to u8; Conv with per-channel int8 weights
    (axis 0) and an int32 bias dequantized with scale xs * ws, then Relu; a strided,
    padded Conv with per-tensor u8 weights; the u8 activations reshaped; MatMul with
    per-column weights (axis 1); Gemm transB with per-row weights (axis 0) and Relu;
    float outputs through DequantizeLinear. The reference evaluates the QDQ graph by
    its operator definitions in float64 (onnx 1.12 has no onnx.reference); input and
    weight scales are powers of two, so the dequantized products are exact and the
    graph's value is the integer computation's (docs/quantization.md)."""
    x = (rng.random((1, 3, 10, 9)) * 4 - 2).astype(np.float32)
    xs0, xz0 = np.float32(2.0 ** -6), np.uint8(128)
    w1 = rng.integers(-127, 128, (8, 3, 3, 3), dtype=np.int8)
    w1s = (2.0 ** -rng.integers(6, 10, 8)).astype(np.float32)
    b1 = rng.integers(-3000, 3000, 8).astype(np.int32)
    b1s = (xs0 * w1s).astype(np.float32)
    y1s, y1z = np.float32(0.0371), np.uint8(10)
    w2 = rng.integers(0, 256, (6, 8, 3, 3), dtype=np.uint8)
    w2s, w2z = np.float32(2.0 ** -9), np.uint8(119)
    y2s, y2z = np.float32(0.0523), np.uint8(131)
    x0 = qz(x, xs0, xz0, np.uint8)
    f1 = conv_f(dq(x0, xs0, xz0), dq(w1, w1s, 0, (8, 1, 1, 1)), dq(b1, b1s, 0), pads=(1, 1, 1, 1))
    q1 = qz(np.maximum(f1, 0), y1s, y1z, np.uint8)
    f2 = conv_f(dq(q1, y1s, y1z), dq(w2, w2s, w2z), strides=(2, 2), pads=(1, 0, 1, 1))
    q2 = qz(f2, y2s, y2z, np.uint8)
    k = int(np.prod(q2.shape[1:]))
    flat = q2.reshape(1, k)
    w3 = rng.integers(-127, 128, (k, 11), dtype=np.int8)
    w3s = (2.0 ** -rng.integers(7, 11, 11)).astype(np.float32)
    y3s, y3z = np.float32(0.0917), np.int8(-3)
    f3 = dq(flat, y2s, y2z).astype(np.float64) @ dq(w3, w3s, 0, (1, 11)).astype(np.float64)
    q3 = qz(f3, y3s, y3z, np.int8)
    w4 = rng.integers(-127, 128, (7, k), dtype=np.int8)
    w4s = (2.0 ** -rng.integers(7, 11, 7)).astype(np.float32)
    y4s, y4z = np.float32(0.0639), np.uint8(0)
    f4 = dq(flat, y2s, y2z).astype(np.float64) @ dq(w4, w4s, 0, (7, 1)).astype(np.float64).T
    q4 = qz(np.maximum(f4, 0), y4s, y4z, np.uint8)
    out3 = dq(q3, y3s, y3z)
    out4 = dq(q4, y4s, y4z)
    out2 = dq(q2, y2s, y2z)

    N = helper.make_node
    nodes = [
        N("QuantizeLinear", ["x", "xs0", "xz0"], ["x0"], name="q_in"),
        N("DequantizeLinear", ["x0", "xs0", "xz0"], ["x0f"], name="dq_in"),
        N("DequantizeLinear", ["w1", "w1s", "w1z"], ["w1f"], axis=0, name="dq_w1"),
        N("DequantizeLinear", ["b1", "b1s"], ["b1f"], axis=0, name="dq_b1"),
        N("Conv", ["x0f", "w1f", "b1f"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
        N("Relu", ["c1"], ["r1"], name="relu1"),
        N("QuantizeLinear", ["r1", "y1s", "y1z"], ["q1"], name="q1"),
        N("DequantizeLinear", ["q1", "y1s", "y1z"], ["q1f"], name="dq1"),
        N("DequantizeLinear", ["w2", "w2s", "w2z"], ["w2f"], name="dq_w2"),
        N("Conv", ["q1f", "w2f"], ["c2"], strides=[2, 2], pads=[1, 0, 1, 1], name="conv2"),
        N("QuantizeLinear", ["c2", "y2s", "y2z"], ["q2"], name="q2"),
        N("Reshape", ["q2", "shape"], ["flat"], name="flatten"),
        N("DequantizeLinear", ["flat", "y2s", "y2z"], ["flatf"], name="dq_flat"),
        N("DequantizeLinear", ["w3", "w3s", "w3z"], ["w3f"], axis=1, name="dq_w3"),
        N("MatMul", ["flatf", "w3f"], ["m3"], name="fc"),
        N("QuantizeLinear", ["m3", "y3s", "y3z"], ["q3"], name="q3"),
        N("DequantizeLinear", ["q3", "y3s", "y3z"], ["out3"], name="dq3"),
        N("DequantizeLinear", ["w4", "w4s", "w4z"], ["w4f"], axis=0, name="dq_w4"),
        N("Gemm", ["flatf", "w4f"], ["g4"], transB=1, name="gemm"),
        N("Relu", ["g4"], ["r4"], name="relu4"),
        N("QuantizeLinear", ["r4", "y4s", "y4z"], ["q4"], name="q4"),
        N("DequantizeLinear", ["q4", "y4s", "y4z"], ["out4"], name="dq4"),
        N("DequantizeLinear", ["q2", "y2s", "y2z"], ["out2"], name="dq2"),
    ]
    inits = [init("xs0", xs0), init("xz0", xz0), init("w1", w1), init("w1s", w1s),
             init("w1z", np.zeros(8, np.int8)), init("b1", b1), init("b1s", b1s), init("y1s", y1s),
             init("y1z", y1z), init("w2", w2), init("w2s", w2s), init("w2z", w2z), init("y2s", y2s),
             init("y2z", y2z), init("shape", np.array([1, k], np.int64)), init("w3", w3),
             init("w3s", w3s), init("w3z", np.zeros(11, np.int8)), init("y3s", y3s), init("y3z", y3z),
             init("w4", w4), init("w4s", w4s), init("w4z", np.zeros(7, np.int8)), init("y4s", y4s),
             init("y4z", y4z)]
    g = helper.make_graph(nodes, "qdq_cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                          [helper.make_tensor_value_info("out3", TensorProto.FLOAT, out3.shape),
                           helper.make_tensor_value_info("out4", TensorProto.FLOAT, out4.shape),
                           helper.make_tensor_value_info("out2", TensorProto.FLOAT, out2.shape)], inits)
    save("qdq_cnn", g, [x], [out3, out4, out2])


def dyn_quant(x):
    """DynamicQuantizeLinear by its definition, in float32 as the reference computes it."""
    x = x.astype(np.float32)
    lo, hi = np.float32(min(0.0, x.min())), np.float32(max(0.0, x.max()))
    s = np.float32((hi - lo) / np.float32(255))
    z = np.uint8(np.clip(np.rint(np.float32(0) - lo / s), 0, 255))
    q = np.clip(np.rint(x / s) + np.float32(z), 0, 255).astype(np.uint8)
    return q, s, z


def dynamic_quant():
    """Dynamically quantized layers as ONNX Runtime's dynamic quantizer writes them:
    DynamicQuantizeLinear on a float activation -> MatMulInteger / ConvInteger with
    constant int8 weights -> Cast to float -> Mul by (x_scale * w_scale) -> Add bias. The
    integer tiles use the dot products with the activation's zero point read at run
    time. The int32 products are outputs too (compared exactly); the float outputs
    follow the float32 ops of the graph."""
    x = (rng.random((5, 37)) * 3 - 1).astype(np.float32)
    w = rng.integers(-127, 128, (37, 23), dtype=np.int8)
    ws = np.float32(0.0123)
    b = (rng.random(23) - 0.5).astype(np.float32)
    xq, xs, xz = dyn_quant(x)
    acc = ((xq.astype(np.int64) - np.int64(xz)) @ w.astype(np.int64)).astype(np.int32)
    y = (acc.astype(np.float32) * np.float32(xs * ws) + b).astype(np.float32)

    xc = (rng.random((1, 6, 9, 8)) * 2 - 1.5).astype(np.float32)
    wc = rng.integers(-127, 128, (10, 6, 3, 3), dtype=np.int8)
    wcs = np.float32(0.0071)
    bc = (rng.random((1, 10, 1, 1)) - 0.5).astype(np.float32)
    cq, cs, cz = dyn_quant(xc)
    accc = conv_ref(cq, cz, wc, np.int8(0), pads=(1, 1, 1, 1)).astype(np.int32)
    yc = (accc.astype(np.float32) * np.float32(cs * wcs) + bc).astype(np.float32)

    N = helper.make_node
    nodes = [
        N("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"], name="x_quant"),
        N("MatMulInteger", ["xq", "w", "xz", "wz"], ["acc"], name="mm_int"),
        N("Cast", ["acc"], ["accf"], to=TensorProto.FLOAT, name="mm_cast"),
        N("Mul", ["xs", "ws"], ["scale"], name="mm_scale"),
        N("Mul", ["accf", "scale"], ["mmf"], name="mm_mul"),
        N("Add", ["mmf", "b"], ["y"], name="mm_bias"),
        N("DynamicQuantizeLinear", ["xc"], ["cq", "cs", "cz"], name="c_quant"),
        N("ConvInteger", ["cq", "wc", "cz", "wcz"], ["accc"], pads=[1, 1, 1, 1], name="conv_int"),
        N("Cast", ["accc"], ["acccf"], to=TensorProto.FLOAT, name="conv_cast"),
        N("Mul", ["cs", "wcs"], ["cscale"], name="conv_scale"),
        N("Mul", ["acccf", "cscale"], ["cf"], name="conv_mul"),
        N("Add", ["cf", "bc"], ["yc"], name="conv_bias"),
    ]
    inits = [init("w", w), init("wz", np.int8(0)), init("ws", ws), init("b", b), init("wc", wc),
             init("wcz", np.int8(0)), init("wcs", wcs), init("bc", bc)]
    g = helper.make_graph(nodes, "dynamic_quant",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape),
                           helper.make_tensor_value_info("xc", TensorProto.FLOAT, xc.shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, y.shape),
                           helper.make_tensor_value_info("yc", TensorProto.FLOAT, yc.shape),
                           helper.make_tensor_value_info("acc", TensorProto.INT32, acc.shape),
                           helper.make_tensor_value_info("accc", TensorProto.INT32, accc.shape)], inits)
    save("dynamic_quant", g, [x, xc], [y, yc, acc, accc])


if __name__ == "__main__":
    qlinear_cnn()
    integer_ops()
    qlinear_odd()
    qdq_cnn()
    dynamic_quant()
