#!/usr/bin/python3
"""Writes tests/onnx/opset18/*: backend-style test cases (model.onnx + test_data_set_0)
for the operators that opsets 18-21 added or changed, since Debian's ONNX test data
stops at opset 17. Expected outputs are computed here with numpy from the operator
definitions in the ONNX specification, and each is cross-checked at authoring time
against ONNX Runtime (npm's onnxruntime-node; casegen.py) when it is installed.
CTest runs the folder through every backend with `kiln check-onnx`.

usage: /usr/bin/python3 tests/onnx/make_opset18.py [NAME...]   (default: all)"""
import math
import os
import re
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "models"))
import casegen  # noqa: E402

OUT = os.path.join(HERE, "opset18")
rng = np.random.default_rng(18)
T = {np.float32: TensorProto.FLOAT, np.int64: TensorProto.INT64, np.int32: TensorProto.INT32,
     np.uint8: TensorProto.UINT8, np.bool_: TensorProto.BOOL, np.float16: TensorProto.FLOAT16,
     np.int8: TensorProto.INT8, np.uint16: TensorProto.UINT16, np.object_: TensorProto.STRING}
CASES = {}


def case(name, op, inputs, outputs, opset=18, consts=(), **attrs):
    """One node `op` reading inputs (name -> array; a name in consts is an
    initializer) and producing outputs (name -> expected array, or (dtype, shape) when
    ONNX Runtime's output is the reference: ops whose numpy form would be long)."""
    ins = [n for n in inputs if n not in consts]
    inits = [numpy_helper.from_array(inputs[n], n) for n in consts]
    node = helper.make_node(op, list(inputs), list(outputs), name=name, **attrs)
    g = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info(n, T[inputs[n].dtype.type], inputs[n].shape) for n in ins],
        [helper.make_tensor_value_info(n, T[a.dtype.type], a.shape) if isinstance(a, np.ndarray)
         else helper.make_tensor_value_info(n, T[a[0]], a[1]) for n, a in outputs.items()],
        inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="kiln-tests")
    m.ir_version = 10 if opset >= 21 else 9 if opset >= 19 else 8
    CASES[name] = (m, [inputs[n] for n in ins], list(outputs.values()))


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def erf(x):
    return np.vectorize(math.erf)(x.astype(np.float64))


# ---- numpy references for Resize (opsets 11-19) and the windowed pools, written from the
# operator definitions (the ONNX reference implementation's 1-D interpolation, applied
# axis by axis, which is the same as the tensor product of the axes' taps)


def _resize_coeffs(mode, ratio, scale, antialias, A, nearest_mode):
    """Weights of the taps at offsets start..start+n-1 from floor-with-ratio-in-(0,1]."""
    if mode == "nearest":
        if ratio == 1:
            return 0, np.array([0.0, 1.0])
        right = {"round_prefer_floor": ratio > 0.5, "round_prefer_ceil": ratio >= 0.5,
                 "floor": False, "ceil": True}[nearest_mode]
        return 0, np.array([float(not right), float(right)])
    if mode == "linear":
        if not antialias:
            return 0, np.array([1 - ratio, ratio])
        s = min(scale, 1.0)
        start = int(np.floor(-1 / s) + 1)
        args = (np.arange(start, 2 - start) - ratio) * s
        c = np.clip(1 - np.abs(args), 0, 1)
        return start, c / c.sum()

    def cubic(x):
        x = abs(x)
        if x <= 1:
            return (A + 2) * x ** 3 - (A + 3) * x ** 2 + 1
        if x < 2:
            return A * x ** 3 - 5 * A * x ** 2 + 8 * A * x - 4 * A
        return 0.0
    s = min(scale, 1.0) if antialias else 1.0
    start = int(np.floor(-2 / s) + 1)
    c = np.array([cubic(s * (i - ratio)) for i in range(start, 2 - start)])
    return start, (c / c.sum() if antialias else c)


def resize_1d(x, axis, olen, scale, mode="nearest", coord="half_pixel", antialias=0, A=-0.75,
              exclude_outside=0, nearest_mode="round_prefer_floor"):
    """Resizes x (float64) along axis to olen elements."""
    x = np.moveaxis(x, axis, 0)
    n = x.shape[0]
    owidth = scale * n
    out = []
    for o in range(olen):
        if coord == "half_pixel":
            xo = (o + 0.5) / scale - 0.5
        elif coord == "pytorch_half_pixel":
            xo = (o + 0.5) / scale - 0.5 if olen > 1 else 0.0
        elif coord == "align_corners":
            xo = 0.0 if owidth == 1 else o * (n - 1) / (owidth - 1)
        elif coord == "asymmetric":
            xo = o / scale
        elif coord == "half_pixel_symmetric":
            xo = n / 2 * (1 - olen / owidth) + (o + 0.5) / scale - 0.5
        else:
            raise ValueError(coord)
        base = np.floor(xo)
        ratio = xo - base
        if ratio == 0:
            base, ratio = base - 1, 1.0
        start, c = _resize_coeffs(mode, ratio, scale, antialias, A, nearest_mode)
        k = len(c)
        pad = (k + 1) // 2
        # the k neighbours of xo on the axis padded by `pad` edge values
        first = min(max(int(base) + start, -pad), n - 1 + pad - (k - 1))
        idx = np.arange(first, first + k)
        if exclude_outside:
            c = np.where((idx >= 0) & (idx < n), c, 0)
            c = c / c.sum()
        pts = x[np.clip(idx, 0, n - 1)]
        out.append(np.tensordot(c, pts, axes=1))
    return np.moveaxis(np.stack(out), 0, axis)


def resize(x, scales=None, sizes=None, axes=None, policy="stretch", **kw):
    """Resize-18/19 of x with the given scales or sizes over axes (default: all)."""
    axes = list(range(x.ndim)) if axes is None else [a % x.ndim for a in axes]
    y = x.astype(np.float64)
    if sizes is not None:
        sc = [sizes[i] / x.shape[a] for i, a in enumerate(axes)]
        if policy != "stretch":
            s = min(sc) if policy == "not_larger" else max(sc)
            sc = [s] * len(axes)
            sizes = [int(np.round(s * x.shape[a])) for a in axes]
        outs = list(sizes)
    else:
        sc = list(scales)
        outs = [int(np.floor(x.shape[a] * s)) for a, s in zip(axes, sc)]
    for a, s, o in zip(axes, sc, outs):
        if s != 1 or o != x.shape[a] or kw.get("coord") == "half_pixel_symmetric":
            y = resize_1d(y, a, o, s, **kw)
    return y.astype(x.dtype)


def pool(x, kind, kernel_shape, strides=None, dilations=None, pads=None, ceil_mode=0,
         count_include_pad=0, p=2):
    """AveragePool-19 / LpPool-18 on x [N, C, spatial...]: a window of kernel_shape taps
    dilations apart, strides apart, over x padded by pads (begins, then ends); with
    ceil_mode the last window is kept while it starts inside the input or the begin padding.
    The average divides by the taps inside the input, or, with count_include_pad, inside
    the padded input."""
    nsp = x.ndim - 2
    st = strides or [1] * nsp
    dl = dilations or [1] * nsp
    pd = pads or [0] * (2 * nsp)
    outs = []
    for i in range(nsp):
        ek = (kernel_shape[i] - 1) * dl[i] + 1
        span = x.shape[i + 2] + pd[i] + pd[i + nsp] - ek
        o = (-(-span // st[i]) if ceil_mode else span // st[i]) + 1
        if ceil_mode and (o - 1) * st[i] >= x.shape[i + 2] + pd[i]:
            o -= 1
        outs.append(o)
    y = np.zeros(x.shape[:2] + tuple(outs))
    xd = x.astype(np.float64)
    for oc in np.ndindex(*outs):
        taps, inside_pad = [], 1
        for i in range(nsp):
            pos = [oc[i] * st[i] - pd[i] + k * dl[i] for k in range(kernel_shape[i])]
            taps.append([q for q in pos if 0 <= q < x.shape[i + 2]])
            inside_pad *= sum(-pd[i] <= q < x.shape[i + 2] + pd[i + nsp] for q in pos)
        win = xd[(slice(None), slice(None)) + np.ix_(*taps)].reshape(x.shape[:2] + (-1,))
        if kind == "lp":
            v = (np.abs(win) ** p).sum(-1) ** (1.0 / p)
        else:
            v = win.sum(-1) / (inside_pad if count_include_pad else win.shape[-1])
        y[(slice(None), slice(None)) + oc] = v
    return y.astype(x.dtype)


# ---- elementwise: Gelu (20), Mish (18), Bitwise* (18)
x = f32(2, 3, 4) * 2
case("test_gelu_default_18", "Gelu", {"x": x},
     {"y": (0.5 * x * (1 + erf(x / np.sqrt(2)))).astype(np.float32)}, opset=20)
case("test_gelu_tanh_18", "Gelu", {"x": x},
     {"y": (0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))).astype(np.float32)},
     opset=20, approximate="tanh")
case("test_mish_18", "Mish", {"x": x},
     {"y": (x * np.tanh(np.log1p(np.exp(x.astype(np.float64))))).astype(np.float32)})
a = rng.integers(-1000, 1000, (3, 4)).astype(np.int32)
b = rng.integers(-1000, 1000, (4,)).astype(np.int32)
case("test_bitwise_and_i32_bcast_18", "BitwiseAnd", {"a": a, "b": b}, {"y": a & b})
case("test_bitwise_or_i32_18", "BitwiseOr", {"a": a, "b": b}, {"y": a | b})
ua = rng.integers(0, 255, (3, 4)).astype(np.uint8)
ub = rng.integers(0, 255, (3, 4)).astype(np.uint8)
case("test_bitwise_xor_u8_18", "BitwiseXor", {"a": ua, "b": ub}, {"y": ua ^ ub})
case("test_bitwise_not_u8_18", "BitwiseNot", {"x": ua}, {"y": ~ua})
case("test_bitwise_not_i32_18", "BitwiseNot", {"x": a}, {"y": ~a})

# ---- reductions with axes as an input (18), ReduceMax/Min on bool (20)
x = f32(2, 3, 4)
for op, fn in [("ReduceMean", np.mean), ("ReduceMax", np.max), ("ReduceL2", None),
               ("ReduceLogSumExp", None), ("ReduceProd", np.prod)]:
    ax = np.array([0, -1], dtype=np.int64)
    if op == "ReduceL2":
        want = np.sqrt(np.sum(x.astype(np.float64) ** 2, axis=(0, 2), keepdims=True))
    elif op == "ReduceLogSumExp":
        want = np.log(np.sum(np.exp(x.astype(np.float64)), axis=(0, 2), keepdims=True))
    else:
        want = fn(x.astype(np.float64), axis=(0, 2), keepdims=True)
    case("test_%s_axes_input_18" % op.lower(), op, {"x": x, "axes": ax},
         {"y": want.astype(np.float32)}, consts=("axes",))
case("test_reducemean_empty_axes_noop_18", "ReduceMean",
     {"x": x, "axes": np.zeros(0, dtype=np.int64)}, {"y": x}, consts=("axes",),
     noop_with_empty_axes=1)
xb = rng.integers(0, 2, (3, 4)).astype(np.bool_)
case("test_reducemax_bool_20", "ReduceMax", {"x": xb, "axes": np.array([1], dtype=np.int64)},
     {"y": xb.any(axis=1, keepdims=True)}, opset=20, consts=("axes",))
case("test_reducemin_bool_20", "ReduceMin", {"x": xb, "axes": np.array([1], dtype=np.int64)},
     {"y": xb.all(axis=1, keepdims=True)}, opset=20, consts=("axes",))

# ---- Split with num_outputs (18): the last part is smaller when it does not divide
x = f32(2, 7)
case("test_split_num_outputs_uneven_18", "Split", {"x": x},
     {"a": x[:, 0:3], "b": x[:, 3:6], "c": x[:, 6:7]}, axis=1, num_outputs=3)
x6 = f32(6, 2)
case("test_split_num_outputs_even_18", "Split", {"x": x6}, {"a": x6[:3], "b": x6[3:]}, axis=0,
     num_outputs=2)

# ---- ScatterElements / ScatterND with max and min reductions (18)
data = f32(3, 4)
idx = np.array([[0, 1, 1], [2, 2, 0]], dtype=np.int64)
upd = f32(2, 3)
for red, fn in [("max", np.maximum), ("min", np.minimum)]:
    want = data.copy()
    for i in range(2):
        for j in range(3):
            want[i, idx[i, j]] = fn(want[i, idx[i, j]], upd[i, j])
    case("test_scatter_elements_%s_18" % red, "ScatterElements",
         {"data": data, "indices": idx, "updates": upd}, {"y": want}, axis=1, reduction=red)
nd_idx = np.array([[0], [2], [0]], dtype=np.int64)
nd_upd = f32(3, 4)
for red, fn in [("max", np.maximum), ("min", np.minimum)]:
    want = data.copy()
    for k in range(3):
        want[nd_idx[k, 0]] = fn(want[nd_idx[k, 0]], nd_upd[k])
    case("test_scatternd_%s_18" % red, "ScatterND",
         {"data": data, "indices": nd_idx, "updates": nd_upd}, {"y": want}, reduction=red)

# ---- Pad with axes as an input (18) and mode "wrap" (19)
x = f32(2, 3, 4)
pads = np.array([1, 2, 0, 1], dtype=np.int64)  # axes (1, -1): begin 1, 2; end 0, 1
want = np.pad(x, [(0, 0), (1, 0), (2, 1)], mode="constant", constant_values=0.5)
case("test_pad_axes_constant_18", "Pad",
     {"x": x, "pads": pads, "value": np.array(0.5, dtype=np.float32),
      "axes": np.array([1, -1], dtype=np.int64)}, {"y": want}, consts=("pads", "value", "axes"))
pw = np.array([0, 2, 3, 0, 1, 3], dtype=np.int64)
case("test_pad_wrap_19", "Pad", {"x": x, "pads": pw},
     {"y": np.pad(x, [(0, 0), (2, 1), (3, 3)], mode="wrap")}, opset=19, consts=("pads",),
     mode="wrap")

# ---- Resize-18: axes, keep_aspect_ratio_policy, antialias; Resize-19: half_pixel_symmetric
# (numpy; the cases without antialias agree within 2e-6 with the ONNX Runtime outputs
# committed before, see casegen.py)
x = f32(1, 2, 5, 7)
E = np.zeros(0, np.float32)
case("test_resize_axes_sizes_linear_18", "Resize",
     {"x": x, "roi": E, "scales": E, "sizes": np.array([8, 4], np.int64)},
     {"y": resize(x, sizes=[8, 4], axes=[2, 3], mode="linear")},
     consts=("roi", "scales", "sizes"), axes=[2, 3], mode="linear")
case("test_resize_axes_scales_nearest_18", "Resize",
     {"x": x, "roi": E, "scales": np.array([2.0, 0.5], np.float32)},
     {"y": resize(x, scales=[2.0, 0.5], axes=[-2, -1])}, consts=("roi", "scales"), axes=[-2, -1])
case("test_resize_not_larger_18", "Resize",
     {"x": x, "roi": E, "scales": E, "sizes": np.array([10, 10], np.int64)},
     {"y": resize(x, sizes=[10, 10], axes=[2, 3], policy="not_larger", mode="linear")},
     consts=("roi", "scales", "sizes"), axes=[2, 3], mode="linear",
     keep_aspect_ratio_policy="not_larger")
case("test_resize_not_smaller_18", "Resize",
     {"x": x, "roi": E, "scales": E, "sizes": np.array([10, 10], np.int64)},
     {"y": resize(x, sizes=[10, 10], axes=[2, 3], policy="not_smaller", mode="cubic")},
     consts=("roi", "scales", "sizes"), axes=[2, 3], mode="cubic",
     keep_aspect_ratio_policy="not_smaller")
s19 = np.array([1, 1, 1.7, 0.6], np.float32)
case("test_resize_half_pixel_symmetric_19", "Resize", {"x": x, "roi": E, "scales": s19},
     {"y": resize(x, scales=s19.astype(np.float64), mode="linear", coord="half_pixel_symmetric")},
     opset=19, consts=("roi", "scales"), mode="linear",
     coordinate_transformation_mode="half_pixel_symmetric")
# antialias=1: when downscaling, the linear/cubic filter is stretched by 1/scale (its
# footprint grows to 2*ceil(1/scale) or 4*ceil(1/scale) taps), weights normalized
# (inputs from their own generator so that the later cases' inputs stay as they were)
x = np.random.default_rng(1818).standard_normal((1, 2, 9, 13)).astype(np.float32)
sa = np.array([1, 1, 0.45, 0.3], np.float32)
case("test_resize_antialias_linear_scales_18", "Resize", {"x": x, "roi": E, "scales": sa},
     {"y": resize(x, scales=sa.astype(np.float64), mode="linear", antialias=1)},
     consts=("roi", "scales"), mode="linear", antialias=1)
case("test_resize_antialias_cubic_sizes_18", "Resize",
     {"x": x, "roi": E, "scales": E, "sizes": np.array([4, 6], np.int64)},
     {"y": resize(x, sizes=[4, 6], axes=[2, 3], mode="cubic", antialias=1)},
     consts=("roi", "scales", "sizes"), axes=[2, 3], mode="cubic", antialias=1)
sm = np.array([1, 1, 0.5, 1.6], np.float32)  # down on one axis, up on the other
case("test_resize_antialias_linear_mixed_align_18", "Resize", {"x": x, "roi": E, "scales": sm},
     {"y": resize(x, scales=sm.astype(np.float64), mode="linear", antialias=1,
                  coord="align_corners")},
     consts=("roi", "scales"), mode="linear", antialias=1,
     coordinate_transformation_mode="align_corners")
case("test_resize_antialias_cubic_exclude_outside_18", "Resize",
     {"x": x, "roi": E, "scales": sa},
     {"y": resize(x, scales=sa.astype(np.float64), mode="cubic", antialias=1,
                  exclude_outside=1, A=-0.5)},
     consts=("roi", "scales"), mode="cubic", antialias=1, exclude_outside=1, cubic_coeff_a=-0.5)
case("test_resize_antialias_nearest_ignored_18", "Resize", {"x": x, "roi": E, "scales": sa},
     {"y": resize(x, scales=sa.astype(np.float64))}, consts=("roi", "scales"), antialias=1)

# ---- DFT-20: axis as an input (default -2); GridSample-20: mode names linear/cubic
x = f32(2, 6, 1)
want = np.fft.fft(x[..., 0].astype(np.float64), axis=1)
case("test_dft_axis_input_20", "DFT",
     {"x": x, "len": np.array(6, np.int64), "axis": np.array(1, np.int64)},
     {"y": np.stack([want.real, want.imag], -1).astype(np.float32)}, opset=20,
     consts=("len", "axis"))
x = f32(4, 3, 2)
want = np.fft.fft(x[..., 0] + 1j * x[..., 1], axis=1)  # default axis -2: the last signal axis
case("test_dft_default_axis_20", "DFT", {"x": x},
     {"y": np.stack([want.real, want.imag], -1).astype(np.float32)}, opset=20)
x = f32(1, 2, 4, 5)
grid = (rng.random((1, 3, 3, 2)) * 2.4 - 1.2).astype(np.float32)
for mode in ("linear", "nearest"):
    case("test_gridsample_%s_20" % mode, "GridSample", {"x": x, "grid": grid},
         {"y": (np.float32, [1, 2, 3, 3])}, opset=20, mode=mode, padding_mode="border")
# cubic inside the image only: with border padding, samples near the edge differ between
# ONNX Runtime and kiln's reading of the spec (which clamps each tap); not settled here
case("test_gridsample_cubic_20", "GridSample", {"x": x, "grid": (grid / 1.2 * 0.7).astype(np.float32)},
     {"y": (np.float32, [1, 2, 3, 3])}, opset=20, mode="cubic")

# 3-D GridSample (X [N, C, D, H, W], grid [N, D', H', W', 3] holding x, y, z): torch's
# grid_sample on 5-D input is the reference (trilinear for linear), cross-checked against
# ONNX Runtime; coordinates reach 1.3 outside [-1, 1] so every padding rule is exercised.


def torch_grid_sample(x, grid, mode, padding, align):
    import torch
    y = torch.nn.functional.grid_sample(
        torch.from_numpy(x.astype(np.float64)), torch.from_numpy(grid.astype(np.float64)),
        mode={"linear": "bilinear"}.get(mode, mode), padding_mode=padding,
        align_corners=bool(align))
    return y.numpy().astype(np.float32)


x = f32(2, 3, 4, 5, 6)
grid = (rng.random((2, 3, 4, 2, 3)) * 2.6 - 1.3).astype(np.float32)
for mode, padding, align in (("linear", "zeros", 0), ("linear", "border", 1),
                             ("linear", "reflection", 0), ("nearest", "zeros", 1),
                             ("nearest", "reflection", 1)):
    case("test_gridsample_3d_%s_%s_align%d_20" % (mode, padding, align), "GridSample",
         {"x": x, "grid": grid}, {"y": torch_grid_sample(x, grid, mode, padding, align)},
         opset=20, mode=mode, padding_mode=padding, align_corners=align)

# ---- AveragePool-19 dilations, LpPool-18 ceil_mode and dilations (numpy; they also
# agree within 1e-6 with the ONNX Runtime outputs committed before)
x = f32(1, 2, 7, 8)
case("test_averagepool_dilations_19", "AveragePool", {"x": x},
     {"y": pool(x, "avg", [3, 2], dilations=[2, 3], strides=[2, 2])},
     opset=19, kernel_shape=[3, 2], dilations=[2, 3], strides=[2, 2])
case("test_averagepool_dilations_pads_ceil_19", "AveragePool", {"x": x},
     {"y": pool(x, "avg", [2, 2], dilations=[2, 2], strides=[2, 2], pads=[1, 1, 1, 1],
                ceil_mode=1)}, opset=19, kernel_shape=[2, 2], dilations=[2, 2],
     strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1, count_include_pad=0)
case("test_averagepool_dilations_include_pad_ceil_19", "AveragePool", {"x": x},
     {"y": pool(x, "avg", [3, 2], dilations=[1, 2], strides=[2, 3], pads=[1, 0, 1, 2],
                ceil_mode=1, count_include_pad=1)}, opset=19, kernel_shape=[3, 2],
     dilations=[1, 2], strides=[2, 3], pads=[1, 0, 1, 2], ceil_mode=1, count_include_pad=1)
case("test_lppool_ceil_dilations_18", "LpPool", {"x": x},
     {"y": pool(x, "lp", [2, 2], dilations=[2, 1], strides=[2, 2], ceil_mode=1, p=2)},
     kernel_shape=[2, 2], dilations=[2, 1], strides=[2, 2], ceil_mode=1, p=2)
case("test_lppool_p3_pads_dilations_18", "LpPool", {"x": x},
     {"y": pool(x, "lp", [3, 3], dilations=[2, 2], pads=[2, 1, 0, 1], p=3)},
     kernel_shape=[3, 3], dilations=[2, 2], pads=[2, 1, 0, 1], p=3)

# ---- QuantizeLinear-21 output_dtype without a zero point; DequantizeLinear-21
x = (f32(2, 5) * 40).astype(np.float32)
sc = np.array(0.5, np.float32)
case("test_quantizelinear_output_dtype_21", "QuantizeLinear", {"x": x, "s": sc},
     {"y": np.clip(np.rint(x / sc), -128, 127).astype(np.int8)}, opset=21, consts=("s",),
     output_dtype=TensorProto.INT8)
q = rng.integers(-128, 127, (3, 4)).astype(np.int8)
scv = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
zp = np.array([1, -2, 3, 0], np.int8)
case("test_dequantizelinear_axis_21", "DequantizeLinear", {"q": q, "s": scv, "z": zp},
     {"y": ((q.astype(np.int32) - zp) * scv).astype(np.float32)}, opset=21, consts=("s", "z"),
     axis=1)

# ---- GroupNormalization: scale/bias per group (18), per channel (21)
x = f32(2, 6, 3, 4)


def group_norm(x, g, scale, bias, eps, per_channel):
    n, c = x.shape[:2]
    xr = x.astype(np.float64).reshape(n, g, -1)
    m = xr.mean(-1, keepdims=True)
    v = xr.var(-1, keepdims=True)
    y = ((xr - m) / np.sqrt(v + eps)).reshape(x.shape)
    if not per_channel:
        scale, bias = np.repeat(scale, c // g), np.repeat(bias, c // g)
    sh = (1, c) + (1,) * (x.ndim - 2)
    return (y * scale.reshape(sh) + bias.reshape(sh)).astype(np.float32)


sg, bg = f32(3), f32(3)
case("test_group_normalization_18", "GroupNormalization", {"x": x, "scale": sg, "bias": bg},
     {"y": group_norm(x, 3, sg, bg, 1e-5, False)}, consts=("scale", "bias"), num_groups=3)
sc, bc = f32(6), f32(6)
case("test_group_normalization_21", "GroupNormalization", {"x": x, "scale": sc, "bias": bc},
     {"y": group_norm(x, 2, sc, bc, 1e-3, True)}, opset=21, consts=("scale", "bias"),
     num_groups=2, epsilon=1e-3)

# ---- CenterCropPad (18): crop or pad each listed axis, centred
x = f32(5, 4, 3)


def center_crop_pad(x, shape, axes):
    y = x
    for s, a in zip(shape, axes):
        d = y.shape[a]
        if s <= d:
            st = (d - s) // 2
            y = np.take(y, range(st, st + s), axis=a)
        else:
            lo = (s - d) // 2
            pad = [(0, 0)] * y.ndim
            pad[a] = (lo, s - d - lo)
            y = np.pad(y, pad)
    return y


case("test_center_crop_pad_crop_and_pad_18", "CenterCropPad",
     {"x": x, "shape": np.array([3, 7, 3], np.int64)},
     {"y": center_crop_pad(x, [3, 7, 3], [0, 1, 2])}, consts=("shape",))
case("test_center_crop_pad_axes_18", "CenterCropPad",
     {"x": x, "shape": np.array([2, 6], np.int64)},
     {"y": center_crop_pad(x, [2, 6], [2, 0])}, consts=("shape",), axes=[-1, 0])

# ---- Col2Im (18)


def col2im(x, image, block, dil=(1, 1), pads=(0, 0, 0, 0), strides=(1, 1)):
    n, ckk, _ = x.shape
    kh, kw = block
    c = ckk // (kh * kw)
    lh = (image[0] + pads[0] + pads[2] - (dil[0] * (kh - 1) + 1)) // strides[0] + 1
    lw = (image[1] + pads[1] + pads[3] - (dil[1] * (kw - 1) + 1)) // strides[1] + 1
    y = np.zeros((n, c) + tuple(image), np.float64)
    for b in range(n):
        for ch in range(c):
            for i in range(kh):
                for j in range(kw):
                    for l in range(lh * lw):
                        yy = (l // lw) * strides[0] - pads[0] + i * dil[0]
                        xx = (l % lw) * strides[1] - pads[1] + j * dil[1]
                        if 0 <= yy < image[0] and 0 <= xx < image[1]:
                            y[b, ch, yy, xx] += x[b, (ch * kh + i) * kw + j, l]
    return y.astype(np.float32)


x = f32(2, 2 * 2 * 3, 9)
case("test_col2im_18", "Col2Im",
     {"x": x, "image": np.array([4, 5], np.int64), "block": np.array([2, 3], np.int64)},
     {"y": col2im(x, (4, 5), (2, 3))}, consts=("image", "block"))
x = f32(1, 3 * 4, 9)
case("test_col2im_strides_pads_dilations_18", "Col2Im",
     {"x": x, "image": np.array([5, 5], np.int64), "block": np.array([2, 2], np.int64)},
     {"y": col2im(x, (5, 5), (2, 2), (2, 1), (1, 0, 1, 1), (2, 2))}, consts=("image", "block"),
     dilations=[2, 1], pads=[1, 0, 1, 1], strides=[2, 2])



def col2im_nd(x, image, block, dil=None, pads=None, strides=None):
    """Col2Im for any number r of spatial axes, from the specification: block entry k at
    block position l adds to image position l*stride - pad + k*dilation."""
    r = len(image)
    dil, strides = dil or (1,) * r, strides or (1,) * r
    pads = pads or (0,) * (2 * r)
    n, ckk, _ = x.shape
    kk = int(np.prod(block))
    c = ckk // kk
    nl = [(image[d] + pads[d] + pads[d + r] - (dil[d] * (block[d] - 1) + 1)) // strides[d] + 1
          for d in range(r)]
    assert ckk == c * kk and x.shape[2] == np.prod(nl)
    y = np.zeros((n, c) + tuple(image), np.float64)
    for b in range(n):
        for ch in range(c):
            for kf, k in enumerate(np.ndindex(*block)):
                for lf, l in enumerate(np.ndindex(*nl)):
                    pos = tuple(l[d] * strides[d] - pads[d] + k[d] * dil[d] for d in range(r))
                    if all(0 <= pos[d] < image[d] for d in range(r)):
                        y[(b, ch) + pos] += x[b, ch * kk + kf, lf]
    return y.astype(x.dtype)


# the N-D reference agrees with the 2-D one above
x = f32(1, 3 * 4, 9)
assert np.allclose(col2im_nd(x, (5, 5), (2, 2), (2, 1), (1, 0, 1, 1), (2, 2)),
                   col2im(x, (5, 5), (2, 2), (2, 1), (1, 0, 1, 1), (2, 2)), atol=1e-6)
# 3-D: ONNX's test_col2im_5d (onnx/backend/test/case/node/col2im.py, hand-written values:
# a block of 1x1x5 laying the columns out row by row), then overlapping blocks with
# strides, pads and dilations; 1-D
x = np.concatenate([np.arange(1, 61, dtype=np.float32).reshape(12, 5).T,
                    np.arange(61, 121, dtype=np.float32).reshape(12, 5).T])[None]
want = np.arange(1, 121, dtype=np.float32).reshape(1, 2, 3, 4, 5)
assert (col2im_nd(x, (3, 4, 5), (1, 1, 5)) == want).all()
case("test_col2im_5d", "Col2Im",
     {"x": x, "image": np.array([3, 4, 5], np.int64), "block": np.array([1, 1, 5], np.int64)},
     {"y": want}, consts=("image", "block"))
x = f32(2, 2 * 2 * 3 * 2, 2 * 2 * 3)
case("test_col2im_3d_strides_pads_dilations_18", "Col2Im",
     {"x": x, "image": np.array([4, 5, 6], np.int64), "block": np.array([2, 3, 2], np.int64)},
     {"y": col2im_nd(x, (4, 5, 6), (2, 3, 2), (2, 1, 2), (1, 0, 1, 0, 1, 1), (2, 2, 2))},
     consts=("image", "block"), dilations=[2, 1, 2], pads=[1, 0, 1, 0, 1, 1], strides=[2, 2, 2])
x = f32(1, 3 * 3, 3)
case("test_col2im_1d_18", "Col2Im",
     {"x": x, "image": np.array([7], np.int64), "block": np.array([3], np.int64)},
     {"y": col2im_nd(x, (7,), (3,), (1,), (1, 0), (2,))}, consts=("image", "block"),
     pads=[1, 0], strides=[2])

def graph_case(name, nodes, ins, outs, want, opset, inits=()):
    """A small multi-node graph: ins/outs (name, array) pairs; want the expected outputs."""
    g = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, T[a.dtype.type], a.shape) for n, a in ins],
        [helper.make_tensor_value_info(n, T[a.dtype.type], a.shape) for n, a in outs],
        [numpy_helper.from_array(a, n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="kiln-tests")
    m.ir_version = 10
    CASES[name] = (m, [a for _, a in ins], want)


# ---- operators whose opset 19/21 versions only add types: one graph at opset 21 (Shape
# with start/end, Size, Reshape, Squeeze, Unsqueeze, Transpose, Flatten, Identity, Cast,
# CastLike, ConstantOfShape, If, Constant) must load and run as before
x = f32(2, 3, 4)
then_g = helper.make_graph([helper.make_node("Neg", ["t_in"], ["t_out"])], "then", [],
                           [helper.make_tensor_value_info("t_out", TensorProto.FLOAT, None)])
else_g = helper.make_graph([helper.make_node("Abs", ["t_in"], ["e_out"])], "else", [],
                           [helper.make_tensor_value_info("e_out", TensorProto.FLOAT, None)])
nodes = [
    helper.make_node("Shape", ["x"], ["s12"], start=1, end=3),
    helper.make_node("Size", ["x"], ["n"]),
    helper.make_node("Reshape", ["x", "s12b"], ["r"]),
    helper.make_node("Transpose", ["r"], ["t"], perm=[1, 0]),
    helper.make_node("Unsqueeze", ["t", "ax0"], ["u"]),
    helper.make_node("Squeeze", ["u", "ax0"], ["t_in0"]),
    helper.make_node("Flatten", ["t_in0"], ["t_in1"], axis=1),
    helper.make_node("Identity", ["t_in1"], ["t_in"]),
    helper.make_node("Cast", ["n"], ["nf"], to=TensorProto.FLOAT, saturate=1),
    helper.make_node("CastLike", ["nf", "x"], ["nf2"], saturate=1),
    helper.make_node("ConstantOfShape", ["s12"], ["ones"],
                     value=numpy_helper.from_array(np.array([1], np.int64), "v")),
    helper.make_node("Constant", [], ["flag"], value=numpy_helper.from_array(np.array(True), "f")),
    helper.make_node("Greater", ["nf2", "zero"], ["big"]),
    helper.make_node("If", ["big"], ["y0"], then_branch=then_g, else_branch=else_g),
    helper.make_node("Mul", ["y0", "nf2"], ["y"]),
    helper.make_node("Shape", ["ones"], ["ys"]),
]
r = x.reshape(6, 4).T.reshape(4, 6)
case_want = [(-r * 24).astype(np.float32), np.array([3, 4], np.int64)]
graph_case("test_opset21_type_extended_graph", nodes, [("x", x)],
           [("y", case_want[0]), ("ys", case_want[1])], case_want, 21,
           inits=[("s12b", np.array([6, 4], np.int64)), ("ax0", np.array([0], np.int64)),
                  ("zero", np.array(0, np.float32))])


# ---- loader cases: a sparse initializer (densified), model-local functions calling
# each other (an output that is directly an input, an output the caller omits, an
# attribute reference without default left unset), nodes out of order
from onnx import SparseTensorProto  # noqa: E402

dense = np.zeros((3, 4), np.float32)
idx = np.array([1, 6, 11], np.int64)
vals = np.array([1.5, -2.0, 3.25], np.float32)
dense.flat[idx] = vals
x = f32(3, 4)
g = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"], name="add")], "g",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])])
sp = SparseTensorProto()
sp.values.CopyFrom(numpy_helper.from_array(vals, "w"))
sp.indices.CopyFrom(numpy_helper.from_array(idx, "w_idx"))
sp.dims.extend([3, 4])
g.sparse_initializer.append(sp)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)], producer_name="kiln-tests")
m.ir_version = 8
CASES["test_loader_sparse_initializer"] = (m, [x], [x + dense])

inner = helper.make_function(
    "local", "Scale", ["a", "b"], ["s", "same", "unused"],
    [helper.make_node("Mul", ["a", "b"], ["s"], name="mul"),
     helper.make_node("Identity", ["a"], ["same"], name="id"),
     helper.make_node("Neg", ["a"], ["unused"], name="neg")],
    [helper.make_opsetid("", 18)], [])
leaky = helper.make_node("LeakyRelu", ["t"], ["u"], name="leaky")
leaky.attribute.append(onnx.AttributeProto(name="alpha", ref_attr_name="slope",
                                           type=onnx.AttributeProto.FLOAT))
outer = helper.make_function(
    "local", "Block", ["p", "q"], ["r"],
    [helper.make_node("Scale", ["p", "q"], ["t", "t2", "t3"], domain="local", name="scale"),
     leaky,
     helper.make_node("Add", ["u", "t2"], ["r"], name="add")],
    [helper.make_opsetid("", 18), helper.make_opsetid("local", 1)], ["slope"])
nodes = [helper.make_node("Block", ["x", "k"], ["h"], domain="local", name="b2"),
         helper.make_node("Relu", ["h0"], ["y"], name="last"),
         helper.make_node("Block", ["h", "k"], ["h0"], domain="local", name="b1", slope=0.5)]
g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
                      [numpy_helper.from_array(np.float32(-1.5).reshape(()), "k")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("local", 1)],
                      producer_name="kiln-tests", functions=[inner, outer])
m.ir_version = 8
x = f32(2, 3)


def block(v, slope):
    t = v * np.float32(-1.5)
    u = np.where(t < 0, t * np.float32(slope), t)
    return u + v


# the first call sets no slope and the function gives no default: LeakyRelu's own 0.01
CASES["test_loader_nested_functions_unsorted"] = (
    m, [x], [np.maximum(block(block(x, 0.01), 0.5), 0).astype(np.float32)])



# ---- AffineGrid (20): 2-D and 3-D, with and without align_corners; theta an input, size
# a constant (the output's shape). The normalized coordinates are the pixel centres
# (2i+1)/S - 1, or -1 + 2i/(S-1) with align_corners (no axis of 1 there: ONNX's reference
# gives -1, torch 0)
def affine_grid(theta, size, align):
    axes = []
    for s in size[2:]:
        i = np.arange(s, dtype=np.float64)
        axes.append(-1 + 2 * i / (s - 1) if align else (2 * i + 1) / s - 1)
    mesh = np.meshgrid(*axes, indexing="ij")  # outermost axis first: (z,) y, x
    base = np.stack(mesh[::-1] + [np.ones_like(mesh[0])], axis=-1)  # x, y, (z), 1
    g = np.tensordot(theta.astype(np.float64), base, axes=([2], [base.ndim - 1]))
    return np.moveaxis(g, 1, -1).astype(theta.dtype)


for name, size, align in [("2d", [2, 3, 4, 5], 0), ("2d_align_corners", [2, 1, 3, 6], 1),
                          ("3d", [1, 2, 3, 4, 2], 0), ("3d_align_corners", [2, 1, 2, 3, 4], 1)]:
    r = len(size) - 2
    theta = f32(size[0], r, r + 1)
    sz = np.array(size, np.int64)
    case("test_affine_grid_%s_20" % name, "AffineGrid", {"theta": theta, "size": sz},
         {"grid": affine_grid(theta, size, align)}, opset=20, consts=("size",),
         align_corners=align)


# ---- DeformConv (19): a 2-D Conv whose taps are displaced by `offset` and read
# bilinearly (a corner outside the input counts 0: torchvision's deform_conv2d), scaled
# by `mask`; offsets up to +-2.5 pixels so that taps leave the input
def deform_conv(x, w, off, b=None, mask=None, strides=(1, 1), pads=(0, 0, 0, 0), dil=(1, 1),
                group=1, og=1):
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    oh = (h + pads[0] + pads[2] - ((kh - 1) * dil[0] + 1)) // strides[0] + 1
    ow = (wd + pads[1] + pads[3] - ((kw - 1) * dil[1] + 1)) // strides[1] + 1
    k = kh * kw
    x, w, off = x.astype(np.float64), w.astype(np.float64), off.astype(np.float64)

    def sample(img, py, px):
        if py <= -1 or py >= h or px <= -1 or px >= wd:
            return 0.0
        y0, x0 = math.floor(py), math.floor(px)
        v = 0.0
        for yy, wy in ((y0, 1 - (py - y0)), (y0 + 1, py - y0)):
            for xx, wx in ((x0, 1 - (px - x0)), (x0 + 1, px - x0)):
                if 0 <= yy < h and 0 <= xx < wd:
                    v += wy * wx * img[yy, xx]
        return v

    y = np.zeros((n, m, oh, ow))
    for bi in range(n):
        for mo in range(m):
            for oy in range(oh):
                for ox in range(ow):
                    acc = float(b[mo]) if b is not None else 0.0
                    for ci in range(cg):
                        ic = mo // (m // group) * cg + ci
                        g = ic // (c // og)
                        for ky in range(kh):
                            for kx in range(kw):
                                j = ky * kw + kx
                                py = oy * strides[0] - pads[0] + ky * dil[0] + \
                                    off[bi, g * 2 * k + 2 * j, oy, ox]
                                px = ox * strides[1] - pads[1] + kx * dil[1] + \
                                    off[bi, g * 2 * k + 2 * j + 1, oy, ox]
                                v = sample(x[bi, ic], py, px)
                                if mask is not None:
                                    v *= float(mask[bi, g * k + j, oy, ox])
                                acc += v * w[mo, ci, ky, kx]
                    y[bi, mo, oy, ox] = acc
    return y.astype(np.float32)


x = f32(1, 2, 5, 5)
w = f32(3, 2, 3, 3)
off = (rng.uniform(-2.5, 2.5, (1, 18, 3, 3))).astype(np.float32)
case("test_deform_conv_basic_19", "DeformConv", {"x": x, "w": w, "offset": off},
     {"y": deform_conv(x, w, off)}, opset=19, consts=("w",), kernel_shape=[3, 3])
x = f32(2, 4, 6, 5)
w = f32(4, 2, 3, 2)
b = f32(4)
off = (rng.uniform(-2.5, 2.5, (2, 24, 3, 4))).astype(np.float32)
mask = (1 / (1 + np.exp(-f32(2, 12, 3, 4)))).astype(np.float32)
case("test_deform_conv_mask_bias_groups_19", "DeformConv",
     {"x": x, "w": w, "offset": off, "b": b, "mask": mask},
     {"y": deform_conv(x, w, off, b, mask, strides=(2, 1), pads=(1, 0, 1, 1), dil=(1, 2),
                       group=2, og=2)},
     opset=19, consts=("w", "b"), kernel_shape=[3, 2], strides=[2, 1], pads=[1, 0, 1, 1],
     dilations=[1, 2], group=2, offset_group=2)
# offsets far outside (+-1e30: the integer conversion must stay defined), onto the
# borders (-1 and the extent: zero) and just inside them
x = f32(1, 1, 4, 4)
w = f32(1, 1, 2, 2)
off = rng.uniform(-1, 1, (1, 8, 3, 3)).astype(np.float32)
off[0, 0, 0, :] = [1e30, -1e30, -1.0]
off[0, 1, 1, :] = [-1.0, 4.0, 3.999]
off[0, 2, 2, :] = [-0.999, 2.5, -1e30]
case("test_deform_conv_far_offsets_19", "DeformConv", {"x": x, "w": w, "offset": off},
     {"y": deform_conv(x, w, off)}, opset=19, consts=("w",), kernel_shape=[2, 2])



def deform_conv_nd(x, w, off, b=None, mask=None, strides=None, pads=None, dil=None, group=1,
                   og=1):
    """DeformConv for r = 1..3 spatial axes from the specification: offset channel
    (g*K + k)*r + d displaces tap k on axis d (ONNX's reference reshapes offset to
    [N, offset_group, k..., r, o...]); multilinear sampling, corners outside count 0."""
    r = x.ndim - 2
    strides, dil = strides or (1,) * r, dil or (1,) * r
    pads = pads or (0,) * (2 * r)
    n, c = x.shape[:2]
    m, cg = w.shape[:2]
    ks, ins = w.shape[2:], x.shape[2:]
    outs = tuple((ins[d] + pads[d] + pads[d + r] - ((ks[d] - 1) * dil[d] + 1)) // strides[d] + 1
                 for d in range(r))
    k = int(np.prod(ks))
    assert off.shape == (n, og * k * r) + outs
    x, w, off = x.astype(np.float64), w.astype(np.float64), off.astype(np.float64)
    y = np.zeros((n, m) + outs)
    for bi in range(n):
        for mo in range(m):
            for o in np.ndindex(*outs):
                acc = float(b[mo]) if b is not None else 0.0
                for ci in range(cg):
                    ic = mo // (m // group) * cg + ci
                    g = ic // (c // og)
                    for j, kt in enumerate(np.ndindex(*ks)):
                        p = [o[d] * strides[d] - pads[d] + kt[d] * dil[d] +
                             off[(bi, (g * k + j) * r + d) + o] for d in range(r)]
                        v = 0.0
                        if all(-1 < p[d] < ins[d] for d in range(r)):
                            p0 = [math.floor(q) for q in p]
                            for corner in np.ndindex(*(2,) * r):
                                q = tuple(p0[d] + corner[d] for d in range(r))
                                if all(0 <= q[d] < ins[d] for d in range(r)):
                                    wt = np.prod([p[d] - p0[d] if corner[d] else 1 - (p[d] - p0[d])
                                                  for d in range(r)])
                                    v += wt * x[(bi, ic) + q]
                        if mask is not None:
                            v *= float(mask[(bi, g * k + j) + o])
                        acc += v * w[(mo, ci) + kt]
                y[(bi, mo) + o] = acc
    return y.astype(np.float32)


# the N-D reference: the 2-D one on the 2-D case above; a 1-D problem embedded in 2-D
# (height 1, y offsets 0); 3-D with zero offsets is torch's conv3d
x = f32(2, 4, 6, 5)
w = f32(4, 2, 3, 2)
b = f32(4)
off = (rng.uniform(-2.5, 2.5, (2, 24, 3, 4))).astype(np.float32)
mask = (1 / (1 + np.exp(-f32(2, 12, 3, 4)))).astype(np.float32)
assert np.allclose(deform_conv_nd(x, w, off, b, mask, (2, 1), (1, 0, 1, 1), (1, 2), 2, 2),
                   deform_conv(x, w, off, b, mask, (2, 1), (1, 0, 1, 1), (1, 2), 2, 2),
                   atol=1e-5)
x = f32(2, 4, 9)
w = f32(6, 2, 3)
b = f32(6)
off = rng.uniform(-2.5, 2.5, (2, 2 * 3, 4)).astype(np.float32)
mask = (1 / (1 + np.exp(-f32(2, 2 * 3, 4)))).astype(np.float32)
want = deform_conv_nd(x, w, off, b, mask, (2,), (1, 1), (2,), 2, 2)
off2 = np.zeros((2, 2 * 3 * 2, 1, 4), np.float32)
off2[:, 1::2, 0, :] = off
assert np.allclose(want[:, :, None, :],
                   deform_conv(x[:, :, None, :], w[:, :, None, :], off2, b, mask[:, :, None, :],
                               (1, 2), (0, 1, 0, 1), (1, 2), 2, 2), atol=1e-5)
case("test_deform_conv_1d_19", "DeformConv",
     {"x": x, "w": w, "offset": off, "b": b, "mask": mask}, {"y": want}, opset=19,
     consts=("w", "b"), kernel_shape=[3], strides=[2], pads=[1, 1], dilations=[2], group=2,
     offset_group=2)
x = f32(1, 4, 4, 5, 4)
w = f32(2, 2, 2, 3, 2)
import torch  # noqa: E402
zero = np.zeros((1, 2 * 12 * 3, 3, 2, 2), np.float32)
conv = torch.nn.functional.conv3d(torch.from_numpy(x.astype(np.float64)),
                                  torch.from_numpy(w.astype(np.float64)), stride=(2, 2, 1),
                                  padding=(1, 0, 0), dilation=(1, 1, 2), groups=2).numpy()
assert np.allclose(deform_conv_nd(x, w, zero, None, None, (2, 2, 1), (1, 0, 0, 1, 0, 0),
                                  (1, 1, 2), 2, 2), conv, atol=1e-5)
off = rng.uniform(-1.8, 1.8, zero.shape).astype(np.float32)
mask = (1 / (1 + np.exp(-f32(1, 2 * 12, 3, 2, 2)))).astype(np.float32)
b = f32(2)
case("test_deform_conv_3d_19", "DeformConv",
     {"x": x, "w": w, "offset": off, "b": b, "mask": mask},
     {"y": deform_conv_nd(x, w, off, b, mask, (2, 2, 1), (1, 0, 0, 1, 0, 0), (1, 1, 2), 2, 2)},
     opset=19, consts=("w", "b"), kernel_shape=[2, 3, 2], strides=[2, 2, 1], pads=[1, 0, 0, 1, 0, 0],
     dilations=[1, 1, 2], group=2, offset_group=2)

# ---- StringConcat (20): elementwise with broadcasting; empty strings and UTF-8 bytes
# (not cross-checked: the ONNX Runtime runner takes no strings)
a = np.array([["ab", "", "c d"], ["\u00e9t\u00e9", "x", ""]], dtype=object)
b = np.array(["1", "", "\u2603"], dtype=object)
case("test_string_concat_broadcast_20", "StringConcat", {"x": a, "y": b},
     {"z": np.array([[p + q for p, q in zip(r, b)] for r in a], dtype=object)}, opset=20)
s1 = np.array("pre-", dtype=object)
case("test_string_concat_scalar_20", "StringConcat", {"x": s1, "y": a.reshape(3, 2)},
     {"z": np.array([["pre-" + q for q in r] for r in a.reshape(3, 2)], dtype=object)},
     opset=20)


# ---- StringSplit (20): the ONNX backend cases of onnx/backend/test/case/node/string_split.py
# (hand-written expected values, copied), then kiln's: Python's str.split on Unicode
# white space, maxsplit with white space left at the end, an empty string. Each expected
# value is also checked against Python's str.split here.
def split_ref(x, delimiter=None, maxsplit=None):
    parts = [s.split(delimiter or None, -1 if maxsplit is None else maxsplit) for s in x.flat]
    width = max((len(q) for q in parts), default=0)
    y = np.array([q + [""] * (width - len(q)) for q in parts], dtype=object)
    return (y.reshape(*x.shape, width),
            np.array([len(q) for q in parts], np.int64).reshape(x.shape))


def split_case(name, x, want, length, opset=20, consts=(), **attrs):
    ref = split_ref(x, attrs.get("delimiter"), attrs.get("maxsplit"))
    assert ref[0].shape == want.shape and (ref[0] == want).all(), name
    assert (ref[1] == length).all(), name
    case(name, "StringSplit", {"x": x}, {"substrings": want, "length": length}, opset=opset,
         consts=consts, **attrs)


O = lambda v: np.array(v, dtype=object)  # noqa: E731
split_case("test_string_split_basic", O(["abc.com", "def.net"]),
           O([["abc", "com"], ["def", "net"]]), np.array([2, 2], np.int64), delimiter=".")
split_case("test_string_split_maxsplit", O([["hello world", "def.net"],
                                             ["o n n x", "the quick brown fox"]]),
           O([[["hello", "world", ""], ["def.net", "", ""]],
              [["o", "n", "n x"], ["the", "quick", "brown fox"]]]),
           np.array([[2, 1], [3, 3]], np.int64), maxsplit=2)
split_case("test_string_split_consecutive_delimiters", O(["o-n-n--x-", "o-n----nx"]),
           O([["o", "n", "n", "", "x", ""], ["o", "n", "", "", "", "nx"]]),
           np.array([6, 6], np.int64), delimiter="-")
hw = O(["hello world !", "  hello   world !", " hello world   ! "])
hw_want = O([["hello", "world", "!"]] * 3)
split_case("test_string_split_empty_string_delimiter", hw, hw_want,
           np.array([3, 3, 3], np.int64), delimiter="")
split_case("test_string_split_no_delimiter", hw, hw_want, np.array([3, 3, 3], np.int64))
split_case("test_string_split_empty_tensor", np.array([], dtype=object),
           np.array([], dtype=object).reshape(0, 0), np.array([], np.int64))
split_case("test_string_split_whitespace_20",
           O(["a\u00a0b\u3000c", "\t x  y \n", "", "x\x1cy", "caf\u00e9 au lait  "]),
           O([["a", "b", "c"], ["x", "y", ""], ["", "", ""], ["x", "y", ""],
              ["caf\u00e9", "au", "lait  "]]),
           np.array([3, 2, 0, 2, 3], np.int64), maxsplit=2)
split_case("test_string_split_multichar_delimiter_20", O([["a::b::", ""], ["::", "a:b"]]),
           O([[["a", "b", ""], [""] * 3], [["", "", ""], ["a:b", "", ""]]]),
           np.array([[3, 1], [2, 1]], np.int64), delimiter="::")
split_case("test_string_split_constant_20", O(["p q", "r"]), O([["p", "q"], ["r", ""]]),
           np.array([2, 1], np.int64), consts=("x",))


# ---- RegexFullMatch (20): the ONNX backend cases of onnx/backend/test/case/node/
# regex_full_match.py (hand-written expected values, copied), then kiln's, one pattern
# each for what ir/regex.c rewrites; every expected value is also Python's re.fullmatch.
def regex_case(name, pattern, x, want, consts=(), flags=0):
    ref = np.vectorize(lambda s: re.fullmatch(pattern, s, flags) is not None,
                       otypes=[np.bool_])(x)
    assert ref.shape == want.shape and (ref == want).all(), (name, ref)
    case(name, "RegexFullMatch", {"x": x}, {"y": want}, opset=20, consts=consts,
         pattern=pattern)


regex_case("test_regex_full_match_basic", r"www\.[\w.-]+\.\bcom\b",
           O(["www.google.com", "www.facebook.com", "www.bbc.co.uk"]),
           np.array([True, True, False]))
email = r"(\W|^)[\w.\-]{0,25}@(yahoo|gmail)\.com(\W|$)"
regex_case("test_regex_full_match_email_domain", email,
           O([["account@gmail.com", "account@hotmail.com"], ["not email", "account2@yahoo.com"]]),
           np.array([[True, False], [False, True]]))
regex_case("test_regex_full_match_empty", email, np.array([[], []], dtype=object),
           np.array([[], []], dtype=bool))
regex_case("test_regex_full_match_dot_newline_20", r"a.c",
           O(["abc", "a\nc", "ac", "a.c", "abcc"]), np.array([True, False, False, True, False]))
regex_case("test_regex_full_match_icase_20", r"(?i)hello\s+(?:world|there)",
           O(["Hello World", "HELLO\tthere", "hello", "hello  worlds"]),
           np.array([True, True, False, False]))
regex_case("test_regex_full_match_lazy_counts_20", r"\d{2,3}-[^\d\s]+?x*",
           O(["12-ab", "1234-ab", "123-", "99-zzxx", "12-a b"]),
           np.array([True, False, False, True, False]))
regex_case("test_regex_full_match_brackets_20", r"[]a\-z^]+|[\x41-\x43]{2}|\xe9t\xe9",
           O(["]-^az", "a-b", "AB", "AD", "\u00e9t\u00e9", "^"]),
           np.array([True, False, True, False, True, True]))
regex_case("test_regex_full_match_constant_20", r"[a-c]+", O(["abc", "abd"]),
           np.array([True, False]), consts=("x",))
# non-ASCII input: RE2 matches UTF-8 characters ('.' and [^a] take one code point, a
# literal e-acute under + repeats the character), and its \w is ASCII. By hand from RE2's
# syntax; the check is Python's re on str with re.ASCII (ASCII \w, '.' still one
# character), which agrees with RE2 here. Byte-wise matching gets 3 of the 7 wrong (the
# first and sixth: '.' and [^a]{2} against multi-byte characters, false; the seventh:
# [^a]{2} taking the two bytes of one n-tilde, true); a Unicode \w gets the fifth wrong.
regex_case("test_regex_full_match_utf8_20", "caf.-[^a]{2}-\u00e9+-\\w*",
           O(["caf\u00e9-\u00f1\u00fc-\u00e9\u00e9-abc", "cafe-xy-\u00e9-",
              "caf\u00e9-\u00f1-\u00e9-", "caf\u00e9-ab-\u00e9-",
              "caf\u00e9-xy-\u00e9-d\u00e9", "caf\u00e9-\u6c34\U0001F600-\u00e9-",
              "cafe-\u00f1-\u00e9-"]),
           np.array([True, True, False, False, False, True, False]), flags=re.ASCII)
# non-ASCII characters inside brackets (kiln writes each out: glibc takes no range of
# them in C.UTF-8): a range of two-byte characters, a negated one-character class, a range
# from ASCII to e-acute (U+0061..U+00E9: z, ~ and DEL too) and one of four-byte emoji
# (U+1F600..U+1F64F). By hand from RE2's syntax (code points, ranges by code point), the
# check again Python's re with re.ASCII. Strings: all parts match; E-acute (U+00C9) is
# outside a-grave..y-diaeresis; [^e-acute] on e-acute; e-acute in [a-e-acute]{2} but
# e-circumflex (U+00EA) not; a CJK character is no emoji; a CJK character as [^e-acute]
# and the last emoji of the range; "ab" is two characters, not one; an all-ASCII string.
regex_case("test_regex_full_match_utf8_brackets_20",
           "[\u00e0-\u00ff]+-[^\u00e9]-[a-\u00e9]{2}-[\U0001F600-\U0001F64F]|[^\u00e9]{3}",
           O(["\u00e9\u00f1\u00fc-a-z~-\U0001F600", "\u00c9-a-zz-\U0001F600",
              "\u00e9-\u00e9-zz-\U0001F600", "\u00e9-\u00f1-z\u00e9-\U0001F600",
              "\u00e9-\u00f1-z\u00ea-\U0001F600", "\u00e9-\u00f1-zz-\u6c34",
              "\u00e0-\u6c34-ab-\U0001F64F", "\u00e9-ab-zz-\U0001F600", "abc",
              "\u00f1\u00f1", "ab\u00e9"]),
           np.array([True, False, False, True, False, False, True, False, True, False, False]),
           flags=re.ASCII)

# (?i) outside brackets: RE2 folds the Kelvin sign U+212A with k and K and the long s
# U+017F with s and S (Unicode simple case folding), which neither glibc matcher does;
# e-acute with E-acute; a non-ASCII character under ? is optional as a whole (the
# all-ASCII strings go through the C-locale byte matcher). By hand from RE2's syntax,
# checked against Python's re (Unicode mode, which folds the same pairs). Strings: k, K
# and Kelvin under k+, long s for s, \x6b matching the Kelvin sign; E-acute for
# e-acute; long s for S; t is no s; k+ needs one; e-acute at most once; \x6b missing;
# all ASCII with the optional e-acute absent; the Kelvin sign and long s of the
# pattern matching k and S, and themselves; t is no long s.
regex_case("test_regex_full_match_icase_fold_20", "(?i)k+-s-\u00e9?x\\x6b|\u212a\u017f",
           O(["kK\u212a-\u017f-x\u212a", "K-S-\u00c9xk", "\u212a-\u017f-xK", "k-t-xk",
              "-s-xk", "k-s-\u00e9\u00e9xk", "k-s-x", "kk-s-xk", "kS", "\u212a\u017f", "kt"]),
           np.array([True, True, True, False, False, False, False, True, True, True, False]))

# ---- Equal on strings (19), with broadcasting: equal, different, prefixes, empty
a = np.array([["ab", "abc", ""], ["x", "", "\u00e9"]], dtype=object)
b = np.array(["ab", "ab", ""], dtype=object)
case("test_equal_string_bcast_19", "Equal", {"a": a, "b": b},
     {"y": np.array([[p == q for p, q in zip(r, b)] for r in a])}, opset=19)

# ---- OptionalHasElement / OptionalGetElement on a plain tensor (18): true and the tensor;
# OptionalHasElement with its input omitted: false
x = f32(2, 3)
nodes = [helper.make_node("OptionalHasElement", ["x"], ["has"]),
         helper.make_node("OptionalGetElement", ["x"], ["g"]),
         helper.make_node("Neg", ["g"], ["y"]),
         helper.make_node("OptionalHasElement", [""], ["none"])]
ohe_want = [np.array(True), -x, np.array(False)]
graph_case("test_optional_tensor_input_18", nodes, [("x", x)],
           [("has", ohe_want[0]), ("y", ohe_want[1]), ("none", ohe_want[2])], ohe_want, 18)

# ONNX Runtime (onnxruntime-node 1.30.0) differs from the specification here, so these are
# not cross-checked: its N-D Col2Im (1-D and 3-D images) ignores part of `dilations`
# (without dilations it agrees to 1e-6; numpy follows ONNX's reference implementation,
# onnx/reference/ops/op_col2im.py, which the 2-D cases match in both).
# ONNX Runtime 1.30 runs only 2-D DeformConv ("Input X must be 4D"): the 1-D and 3-D
# cases rest on deform_conv_nd, itself checked against the 2-D reference and torch.
ORT_DISAGREES = {"test_col2im_3d_strides_pads_dilations_18", "test_deform_conv_1d_19",
                 "test_deform_conv_3d_19"}


def main():
    names = sys.argv[1:] or sorted(CASES)
    have_ort = os.path.isdir(casegen.ORT)
    for n in names:
        m, ins, outs = CASES[n]
        if have_ort and all(a.dtype != object for a in ins) and n not in ORT_DISAGREES:
            feeds = {i.name: a for i, a in zip(m.graph.input, ins)}
            got = casegen.ort_run(m, feeds)
            for k, (g, w) in enumerate(zip(got, outs)):
                if isinstance(w, np.ndarray):
                    casegen.check_close(g, w, "%s output %d (numpy vs ONNX Runtime)" % (n, k))
            outs = [w if isinstance(w, np.ndarray) else g for g, w in zip(got, outs)]
        elif not all(isinstance(w, np.ndarray) for w in outs):
            raise SystemExit("%s: needs ONNX Runtime for its reference" % n)
        casegen.write_case(os.path.join(OUT, n), m, [(ins, outs)])
    print("wrote %d cases%s" % (len(names), "" if have_ort else " (no ONNX Runtime cross-check)"))


if __name__ == "__main__":
    main()
