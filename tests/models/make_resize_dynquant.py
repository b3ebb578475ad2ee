#!/usr/bin/python3
"""Writes tests/models/resize_dynquant: bilinear Resizes, each followed by a
DynamicQuantizeLinear, as in the dynamically quantized IS-Net (docs/models.md,
"imgly_isnet_quint8"), where a Resize result one float32 ulp off ONNX Runtime's moved
one element across a rounding boundary of the quantizer; the code one step off then grew
through the ConvIntegers of the decoder to an error of 0.47.

Two Resizes of x [1, 2, 6, 6] (its values in [0, 255], 0 and 255 in corners, so each
quantizer's scale is 1 and its zero point 0): r1 to [1, 2, 12, 12] with half_pixel
coordinates (IS-Net's 2x upsampling), r2 to [1, 2, 9, 10] with align_corners (weights
that are not dyadic). Outputs: y1, q1 (y1's uint8 codes), y2, q2.

Expected outputs: numpy, in ONNX Runtime's arithmetic for a bilinear Resize (its CPU
kernel, onnxruntime/core/providers/cpu/tensor/upsample.h, UpsampleBilinear; kiln's
ir/ops/image_attrs.h states it): float32 coordinates clamped to [0, len - 1], two taps
with weights |x - x2| and |x - x1| (0.5 each when the taps coincide), and
((w11 x11 + w21 x21) + w12 x12) + w22 x22 in float32, every product rounded. Checked
against ONNX Runtime 1.30 (onnxruntime-node, tests/models/ort_run.js) when written: every
output identical. The values of x are drawn (seeded) until, for each way of computing the
same interpolation that kiln used before (the interpreter's float64 taps rounded once,
the compiled backends' edge-padded float32 taps unfused or fused), some element of q1 or
q2 differs from ONNX Runtime's: the test fails on any of them.

    /usr/bin/python3 tests/models/make_resize_dynquant.py
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import gen_common as gc  # noqa: E402

f32 = np.float32
SHAPE = (1, 2, 6, 6)
OUT1 = (1, 2, 12, 12)
OUT2 = (1, 2, 9, 10)


def ort_coords(ilen, olen, mode):
    """ONNX Runtime's taps on one axis: x1, x2 and their weights, in float32."""
    s = f32(olen) / f32(ilen)
    x = np.arange(olen, dtype=f32)
    if s == 1:
        c = x
    elif mode == "half_pixel":
        c = (x + f32(0.5)) / s - f32(0.5)
    else:  # align_corners
        c = x * f32(ilen - 1) / f32(olen - 1) if olen > 1 else np.zeros_like(x)
    c = np.maximum(f32(0), np.minimum(c, f32(ilen - 1))).astype(f32)
    x1 = np.minimum(c.astype(np.int64), ilen - 1)
    x2 = np.minimum(x1 + 1, ilen - 1)
    w1 = np.abs(c - x2.astype(f32)).astype(f32)  # weight of x1
    w2 = np.abs(c - x1.astype(f32)).astype(f32)  # weight of x2
    w1[x1 == x2] = 0.5
    w2[x1 == x2] = 0.5
    return x1, x2, w1, w2


def ort_resize(x, out, mode):
    y1, y2, wy1, wy2 = ort_coords(x.shape[2], out[2], mode)
    x1, x2, wx1, wx2 = ort_coords(x.shape[3], out[3], mode)
    g = lambda ys, xs: x[:, :, ys][:, :, :, xs]  # noqa: E731
    t = [(wy1[:, None] * wx1[None, :]) * g(y1, x1), (wy1[:, None] * wx2[None, :]) * g(y1, x2),
         (wy2[:, None] * wx1[None, :]) * g(y2, x1), (wy2[:, None] * wx2[None, :]) * g(y2, x2)]
    return (((t[0] + t[1]) + t[2]) + t[3]).astype(f32)


def old_taps(ilen, olen, mode):
    """kiln's former taps (the ONNX reference's): the axis padded with edge values, the
    taps at floor(c) and floor(c) + 1 (clamped), weights 1 - r and r, in float64."""
    s = olen / ilen
    x = np.arange(olen, dtype=np.float64)
    c = (x + 0.5) / s - 0.5 if mode == "half_pixel" else x * (ilen - 1) / (olen - 1)
    b = np.floor(c)
    r = c - b
    z = r == 0
    b[z] -= 1
    r[z] = 1
    i0 = np.clip(b.astype(np.int64), 0, ilen - 1)
    i1 = np.clip(b.astype(np.int64) + 1, 0, ilen - 1)
    return i0, i1, 1 - r, r


def old_resize(x, out, mode, how):
    """how: 'f64' (the interpreter: float64 sums rounded once), 'f32' (unfused) or
    'fma' (each multiply-add fused)."""
    ya, yb, wya, wyb = old_taps(x.shape[2], out[2], mode)
    xa, xb, wxa, wxb = old_taps(x.shape[3], out[3], mode)
    acc = np.zeros(x.shape[:2] + tuple(out[2:]), np.float64 if how == "f64" else f32)
    for yi, wy in ((ya, wya), (yb, wyb)):
        for xi, wx in ((xa, wxa), (xb, wxb)):
            v = x[:, :, yi][:, :, :, xi]
            if how == "f64":
                acc = acc + (wy[:, None] * wx[None, :]) * v
                continue
            w = (wy.astype(f32)[:, None] * wx.astype(f32)[None, :]).astype(f32)
            if how == "f32":
                acc = (acc + w * v).astype(f32)
            else:  # a product of float32s is exact in float64; one rounding of the sum
                acc = (w.astype(np.float64) * v + acc).astype(f32)
    return acc.astype(f32)


def codes(y):
    """DynamicQuantizeLinear's codes for a y whose min is 0 and max 255 (scale 1)."""
    assert y.min() == 0 and y.max() == 255
    return np.clip(np.rint(y), 0, 255).astype(np.uint8)


def draw(seed):
    """x: values near (k + 0.5) / w for the interpolation weights w in play, so that many
    outputs land near a rounding boundary; 0 and 255 in the corners."""
    rng = np.random.default_rng(seed)
    x = (rng.integers(0, 128, SHAPE) * 2 + 1).astype(np.float64) / 2
    x += rng.uniform(-1, 1, SHAPE) * 2.0 ** rng.integers(-18, -8, SHAPE)
    x = np.clip(x, 0, 255).astype(f32)
    x[:, :, 0, 0] = 0
    x[:, :, -1, -1] = 255
    return x


def main():
    for seed in range(1000):
        x = draw(seed)
        cases = [(OUT1, "half_pixel"), (OUT2, "align_corners")]
        ref = [codes(ort_resize(x, o, m)) for o, m in cases]
        hit = all(any((codes(old_resize(x, o, m, how)) != r).any()
                      for (o, m), r in zip(cases, ref))
                  for how in ("f64", "f32", "fma"))
        if hit:
            break
    else:
        raise SystemExit("no seed separates the old arithmetics")
    y1 = ort_resize(x, OUT1, "half_pixel")
    y2 = ort_resize(x, OUT2, "align_corners")
    nodes = [
        helper.make_node("Resize", ["x", "", "", "sizes1"], ["y1"], name="r1", mode="linear",
                         coordinate_transformation_mode="half_pixel"),
        helper.make_node("DynamicQuantizeLinear", ["y1"], ["q1", "s1", "z1"], name="dq1"),
        helper.make_node("Resize", ["x", "", "", "sizes2"], ["y2"], name="r2", mode="linear",
                         coordinate_transformation_mode="align_corners"),
        helper.make_node("DynamicQuantizeLinear", ["y2"], ["q2", "s2", "z2"], name="dq2"),
    ]
    g = helper.make_graph(
        nodes, "resize_dynquant", [gc.vi("x", SHAPE)],
        [gc.vi("y1", OUT1), gc.vi("q1", OUT1, TensorProto.UINT8),
         gc.vi("y2", OUT2), gc.vi("q2", OUT2, TensorProto.UINT8)],
        [numpy_helper.from_array(np.array(OUT1, np.int64), "sizes1"),
         numpy_helper.from_array(np.array(OUT2, np.int64), "sizes2")])
    gc.write_case(os.path.join(HERE, "resize_dynquant"), gc.model(g, opset=13, ir_version=7),
                  [("x", x)], [("y1", y1), ("q1", codes(y1)), ("y2", y2), ("q2", codes(y2))])
    print("seed", seed)


if __name__ == "__main__":
    main()
