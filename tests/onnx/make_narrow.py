#!/usr/bin/python3
"""Writes tests/onnx/narrow/*: backend-style cases (model.onnx + test_data_set_0) for the
float8 (FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ) and 4-bit (INT4, UINT4)
types: Cast/CastLike to and from them (saturate on and off), QuantizeLinear and
DequantizeLinear with float8 and 4-bit zero points (opsets 19 and 21), initializers
(4-bit packed two to a byte), ConstantOfShape, data movement, Pad (opset 21: every
mode, a float8 constant_value), Where (broadcast) and blocked Quantize/DequantizeLinear
(opset 21 block_size). Most cases read graph
inputs, so constant folding cannot hide the kernels; CTest runs the folder through every
backend with `kiln check-onnx`.

Expected outputs are computed here with numpy from the ONNX specification (Cast-19's
float8 tables, onnx/docs/technical/int4.md), independently of kiln's C: a float8 value is
rounded by searching the sorted list of the format's finite values (ties to the even
code), not by exponent arithmetic. Debian's onnx (1.12) predates these types, so the
tensors are written by hand (raw_data; TensorProto.data_type is a plain int32).

usage: /usr/bin/python3 tests/onnx/make_narrow.py"""
import os
import shutil

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "narrow")
rng = np.random.default_rng(8)

E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ, UINT4, INT4 = 17, 18, 19, 20, 21, 22
F8 = (E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ)
NAME = {E4M3FN: "e4m3fn", E4M3FNUZ: "e4m3fnuz", E5M2: "e5m2", E5M2FNUZ: "e5m2fnuz",
        UINT4: "uint4", INT4: "int4"}
NP = {np.float32: TensorProto.FLOAT, np.float16: TensorProto.FLOAT16,
      np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8, np.int64: TensorProto.INT64,
      np.bool_: TensorProto.BOOL}
# (mantissa bits, exponent bias, unsigned-zero kinds: NaN is 0x80 and there is no -0)
FMT = {E4M3FN: (3, 7, False), E4M3FNUZ: (3, 8, True), E5M2: (2, 15, False),
       E5M2FNUZ: (2, 16, True)}


class Narrow:
    """A float8 tensor (its codes, uint8) or a 4-bit one (int8/uint8, one a byte)."""

    def __init__(self, t, a):
        self.t, self.a = t, np.asarray(a)
        self.shape = self.a.shape


# ---- the formats, from the specification


def f8_value(t, c):
    """The value of code c (Cast-19 / the float8 technical note)."""
    m, bias, uz = FMT[t]
    e_bits = 7 - m
    sign = -1.0 if c & 0x80 else 1.0
    e, f = (c & 0x7F) >> m, c & ((1 << m) - 1)
    if uz and c == 0x80:
        return np.nan
    if t == E4M3FN and c & 0x7F == 0x7F:
        return np.nan
    if t == E5M2 and e == (1 << e_bits) - 1:
        return sign * np.inf if f == 0 else np.nan
    if e == 0:
        return sign * f * 2.0 ** (1 - bias - m)
    return sign * (1 + f / 2.0 ** m) * 2.0 ** (e - bias)


def f8_table(t):
    return np.array([f8_value(t, c) for c in range(256)])


def f8_max(t):
    v = f8_table(t)
    return np.nanmax(v[np.isfinite(v)])


def f8_encode(t, x, saturate=True):
    """x (float32 values) to codes: nearest finite magnitude, ties to the even code;
    past the largest finite value (after rounding) or infinite: saturate to it, else
    infinity (E5M2) or NaN; NaN to NaN."""
    m, bias, uz = FMT[t]
    vals = f8_table(t)[:128]  # non-negative codes, increasing with the code
    codes = [c for c in range(128) if np.isfinite(vals[c])]
    mags = vals[codes]
    top = mags[-1] + (mags[-1] - mags[-2])  # the next value of the grid past the max
    grid = np.append(mags, top)
    out = []
    for v in np.asarray(x, dtype=np.float64).ravel():
        neg = np.signbit(v)
        if np.isnan(v):
            out.append(0x80 if uz else 0x7F | (0x80 if neg else 0))
            continue
        a = abs(v)
        if np.isinf(a):
            if uz:
                out.append(0x80)
                continue
            k = len(grid) - 1  # overflow
        else:
            k = int(np.argmin(np.abs(grid - a)))
            d = abs(grid[k] - a)
            if k + 1 < len(grid) and abs(grid[k + 1] - a) == d and k % 2 == 1:
                k += 1
            if k > 0 and abs(grid[k - 1] - a) == d and k % 2 == 1:
                k -= 1
        if k == len(grid) - 1:  # beyond the largest finite value
            if saturate:
                mag = codes[-1]
            elif uz:
                out.append(0x80)
                continue
            else:
                mag = 0x7C if t == E5M2 else 0x7F
        else:
            mag = codes[k]
        if uz and mag == 0:
            neg = False
        out.append(mag | (0x80 if neg else 0))
    return np.array(out, dtype=np.uint8).reshape(np.shape(x))


def f8_decode(t, codes):
    return f8_table(t)[np.asarray(codes, dtype=np.int64)].astype(np.float32)


def to_4bit(t, x):
    lo, hi = (-8, 7) if t == INT4 else (0, 15)
    x = np.asarray(x, dtype=np.float64)
    r = np.rint(np.clip(np.nan_to_num(x, nan=0.0), lo, hi))
    return r.astype(np.int8 if t == INT4 else np.uint8)


def pack4(a):
    """Two to a byte, element 2j in the low nibble of byte j (int4.md)."""
    u = (np.asarray(a).ravel().astype(np.int64) & 0xF).astype(np.uint8)
    if u.size % 2:
        u = np.append(u, 0)
    return (u[0::2] | (u[1::2] << 4)).astype(np.uint8).tobytes()


# ---- writing


def tensor(name, v):
    if not isinstance(v, Narrow):
        return numpy_helper.from_array(np.asarray(v), name)
    t = TensorProto()
    t.name = name
    t.data_type = v.t
    t.dims.extend(v.shape)
    t.raw_data = pack4(v.a) if v.t in (UINT4, INT4) else v.a.astype(np.uint8).tobytes()
    return t


def vinfo(name, v):
    t = v.t if isinstance(v, Narrow) else NP[np.asarray(v).dtype.type]
    return helper.make_tensor_value_info(name, t, list(np.shape(v.a if isinstance(v, Narrow)
                                                                 else v)))


CASES = {}


def case(name, nodes, inputs, outputs, opset=19, inits=()):
    """nodes: helper nodes; inputs/outputs: name -> value (np array or Narrow); inits:
    names among inputs that are initializers."""
    ins = [n for n in inputs if n not in inits]
    g = helper.make_graph(nodes, name, [vinfo(n, inputs[n]) for n in ins],
                          [vinfo(n, v) for n, v in outputs.items()],
                          [tensor(n, inputs[n]) for n in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="kiln-tests")
    m.ir_version = 10 if opset >= 21 else 9
    CASES[name] = (m, [(n, inputs[n]) for n in ins], list(outputs.items()))


def write(folder, m, ins, outs):
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    os.makedirs(os.path.join(folder, "test_data_set_0"))
    onnx.save(m, os.path.join(folder, "model.onnx"))
    for j, (n, v) in enumerate(ins):
        with open(os.path.join(folder, "test_data_set_0", "input_%d.pb" % j), "wb") as f:
            f.write(tensor(n, v).SerializeToString())
    for j, (n, v) in enumerate(outs):
        with open(os.path.join(folder, "test_data_set_0", "output_%d.pb" % j), "wb") as f:
            f.write(tensor(n, v).SerializeToString())


# ---- the cases


def cast_inputs(t):
    """float32 values that exercise a format: zeros, subnormals, ties, the largest
    finite value and past it, infinities, NaN, and random values at several scales."""
    mx = f8_max(t)
    m, bias, _ = FMT[t]
    sub = 2.0 ** (1 - bias - m)  # smallest subnormal
    special = [0.0, -0.0, sub, -sub, sub / 2, sub * 1.5, sub * 0.49, 1.0, -1.0,
               1 + 2.0 ** -(m + 1),  # halfway between 1 and the next: to even (1)
               1 + 3 * 2.0 ** -(m + 1),  # halfway, to even (up)
               mx, -mx, mx * 1.03, mx * 1.06, -mx * 1.2, mx * 4, np.inf, -np.inf, np.nan,
               2.0 ** (1 - bias), 2.0 ** (1 - bias) * 0.97]
    r = np.concatenate([rng.standard_normal(20) * s for s in (0.01, 1, 30, mx / 4)])
    return np.concatenate([special, r]).astype(np.float32).reshape(2, -1)


for t in F8:
    k = NAME[t]
    x = cast_inputs(t)
    case("cast_f32_to_%s" % k, [helper.make_node("Cast", ["x"], ["y"], name="c", to=t)],
         {"x": x}, {"y": Narrow(t, f8_encode(t, x, True))})
    case("cast_f32_to_%s_nosat" % k,
         [helper.make_node("Cast", ["x"], ["y"], name="c", to=t, saturate=0)],
         {"x": x}, {"y": Narrow(t, f8_encode(t, x, False))})
    codes = np.arange(256, dtype=np.uint8).reshape(16, 16)
    case("cast_%s_to_f32" % k, [helper.make_node("Cast", ["x"], ["y"], name="c", to=1)],
         {"x": Narrow(t, codes)}, {"y": f8_decode(t, codes)})

# CastLike, float16 on either side, float8 to float8 and to integers
x = cast_inputs(E5M2)
like = Narrow(E4M3FN, np.zeros(1, np.uint8))
case("castlike_f16_to_e4m3fn",
     [helper.make_node("CastLike", ["x", "like"], ["y"], name="cl", saturate=0)],
     {"x": x.astype(np.float16), "like": like},
     {"y": Narrow(E4M3FN, f8_encode(E4M3FN, x.astype(np.float16).astype(np.float32), False))})
codes = np.arange(256, dtype=np.uint8).reshape(8, 32)
case("cast_e5m2_to_f16", [helper.make_node("Cast", ["x"], ["y"], name="c", to=10)],
     {"x": Narrow(E5M2, codes)}, {"y": f8_decode(E5M2, codes).astype(np.float16)})
case("cast_e5m2_to_e4m3fnuz", [helper.make_node("Cast", ["x"], ["y"], name="c", to=E4M3FNUZ)],
     {"x": Narrow(E5M2, codes)},
     {"y": Narrow(E4M3FNUZ, f8_encode(E4M3FNUZ, f8_decode(E5M2, codes), True))})
fin = f8_decode(E4M3FN, codes)
ok = np.isfinite(fin) & (np.abs(fin) < 127)
c8 = codes[ok].reshape(-1)
case("cast_e4m3fn_to_i8", [helper.make_node("Cast", ["x"], ["y"], name="c", to=3)],
     {"x": Narrow(E4M3FN, c8)}, {"y": np.trunc(f8_decode(E4M3FN, c8)).astype(np.int8)})

# 4-bit casts
x = (rng.standard_normal((3, 7)) * 6).astype(np.float32)
x[0, :5] = [0.5, 1.5, 2.5, -7.5, -8.5]  # ties to even, then the clamp
for t in (INT4, UINT4):
    case("cast_f32_to_%s" % NAME[t], [helper.make_node("Cast", ["x"], ["y"], name="c", to=t)],
         {"x": x}, {"y": Narrow(t, to_4bit(t, x))}, opset=21)
i4 = np.arange(-8, 7, dtype=np.int8).reshape(3, 5)  # 15 elements: an odd count to pack
case("cast_int4_to_f32", [helper.make_node("Cast", ["x"], ["y"], name="c", to=1)],
     {"x": Narrow(INT4, i4)}, {"y": i4.astype(np.float32)}, opset=21)
u4 = np.arange(0, 15, dtype=np.uint8).reshape(5, 3)
case("cast_uint4_to_i64", [helper.make_node("Cast", ["x"], ["y"], name="c", to=7)],
     {"x": Narrow(UINT4, u4)}, {"y": u4.astype(np.int64)}, opset=21)
b = np.array([[-100, -9, -8, -1, 0, 7, 8, 127]], dtype=np.int8)
case("cast_i8_to_int4", [helper.make_node("Cast", ["x"], ["y"], name="c", to=INT4)],
     {"x": b}, {"y": Narrow(INT4, to_4bit(INT4, b))}, opset=21)

# QuantizeLinear / DequantizeLinear, float8 (opset 19) and 4-bit (opset 21)
x = (rng.standard_normal((2, 3, 4)) * 40).astype(np.float32)
x[0, 0, :3] = [1e6, -1e6, 0]
s3 = np.array([0.5, 2.0, 0.125], dtype=np.float32)
zf8 = Narrow(E4M3FN, np.zeros(3, np.uint8))
case("quantize_e4m3fn_axis", [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"],
                                               name="q", axis=1)],
     {"x": x, "s": s3, "z": zf8},
     {"y": Narrow(E4M3FN, f8_encode(E4M3FN, x / s3.reshape(1, 3, 1), True))}, inits=("z",))
zq = Narrow(E5M2, np.zeros((), np.uint8))
case("quantize_e5m2_nosat", [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"],
                                              name="q", saturate=0)],
     {"x": x * np.float32(1e3), "s": np.array(0.25, np.float32), "z": zq},
     {"y": Narrow(E5M2, f8_encode(E5M2, (x * np.float32(1e3)) / np.float32(0.25), False))},
     inits=("z",))
codes = rng.integers(0, 256, size=(2, 3, 5)).astype(np.uint8)
codes[codes == 0x80] = 0x81  # no NaN code in DequantizeLinear's input
case("dequantize_e4m3fnuz_axis", [helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"],
                                                   name="dq", axis=1)],
     {"x": Narrow(E4M3FNUZ, codes), "s": s3, "z": Narrow(E4M3FNUZ, np.zeros(3, np.uint8))},
     {"y": (f8_decode(E4M3FNUZ, codes) * s3.reshape(1, 3, 1)).astype(np.float32)}, inits=("z",))
x = (rng.standard_normal((3, 5)) * 10).astype(np.float32)
s = np.array([1.0, 2.0, 0.5], dtype=np.float32)
z4 = np.array([-2, 0, 3], dtype=np.int8)
q = np.clip(np.rint(x / s.reshape(3, 1)) + z4.reshape(3, 1), -8, 7).astype(np.int8)
case("quantize_int4_axis", [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"],
                                             name="q", axis=0)],
     {"x": x, "s": s, "z": Narrow(INT4, z4)}, {"y": Narrow(INT4, q)}, opset=21, inits=("z",))
zu = np.array(8, dtype=np.uint8)
qu = np.clip(np.rint(x / np.float32(0.75)) + 8, 0, 15).astype(np.uint8)
case("quantize_uint4", [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="q")],
     {"x": x, "s": np.array(0.75, np.float32), "z": Narrow(UINT4, zu)}, {"y": Narrow(UINT4, qu)},
     opset=21, inits=("z",))
# a packed int4 initializer (odd count) dequantized with a run-time scale: not folded
w = rng.integers(-8, 8, size=(3, 5)).astype(np.int8)
case("dequantize_int4_init", [helper.make_node("DequantizeLinear", ["w", "s", "z"], ["y"],
                                               name="dq", axis=0)],
     {"w": Narrow(INT4, w), "s": s, "z": Narrow(INT4, z4)},
     {"y": ((w.astype(np.float32) - z4.reshape(3, 1)) * s.reshape(3, 1)).astype(np.float32)},
     opset=21, inits=("w", "z"))

# data movement and constants: Reshape, Transpose, Concat, Slice and Gather on float8
# codes and 4-bit values from inputs and initializers; ConstantOfShape of a float8 value
a = Narrow(E4M3FN, rng.integers(0, 256, size=(2, 6)).astype(np.uint8))
c = Narrow(E4M3FN, rng.integers(0, 256, size=(3, 2)).astype(np.uint8))
shape = np.array([3, 4], dtype=np.int64)
r = a.a.reshape(3, 4)
cat = np.concatenate([r, c.a], axis=1)
case("move_e4m3fn", [
    helper.make_node("Reshape", ["a", "shape"], ["r"], name="reshape"),
    helper.make_node("Concat", ["r", "c"], ["cat"], name="concat", axis=1),
    helper.make_node("Transpose", ["cat"], ["y"], name="transpose", perm=[1, 0]),
    helper.make_node("Identity", ["y"], ["z"], name="identity")],
    {"a": a, "c": c, "shape": shape}, {"z": Narrow(E4M3FN, cat.T)}, inits=("c", "shape"))
v = Narrow(INT4, rng.integers(-8, 8, size=(4, 5)).astype(np.int8))
idx = np.array([3, 0, 2], dtype=np.int64)
case("move_int4", [
    helper.make_node("Gather", ["v", "idx"], ["g"], name="gather", axis=0),
    helper.make_node("Transpose", ["g"], ["t"], name="transpose", perm=[1, 0]),
    helper.make_node("Cast", ["t"], ["f"], name="to_f32", to=1)],
    {"v": v, "idx": idx}, {"t": Narrow(INT4, v.a[idx].T), "f": v.a[idx].T.astype(np.float32)},
    opset=21, inits=("v",))
val = TensorProto()
val.name, val.data_type = "value", E5M2
val.dims.append(1)
val.raw_data = bytes([0x3D])  # 1.25
xin = np.ones((2, 3), np.float32)
case("constantofshape_e5m2", [
    helper.make_node("Shape", ["x"], ["s"], name="shape"),
    helper.make_node("ConstantOfShape", ["s"], ["y"], name="cos", value=val)],
    {"x": xin}, {"y": Narrow(E5M2, np.full((2, 3), 0x3D, np.uint8))})

# Pad (opset 21 lists float8 and 4-bit types) and Where: element copies, so the expected
# codes are numpy's pad/where of the input codes (np.pad's reflect is ONNX's reflect)
x = Narrow(E4M3FN, rng.integers(0, 256, size=(2, 3, 4)).astype(np.uint8))
cv = Narrow(E4M3FN, np.array(0xB4, np.uint8))  # -1.5
pads = np.array([0, 1, 2, 1, 0, 1], dtype=np.int64)
case("pad_e4m3fn_constant", [helper.make_node("Pad", ["x", "pads", "cv"], ["y"], name="pad")],
     {"x": x, "pads": pads, "cv": cv},
     {"y": Narrow(E4M3FN, np.pad(x.a, [(0, 1), (1, 0), (2, 1)], constant_values=0xB4))},
     opset=21, inits=("pads",))
x = Narrow(E5M2FNUZ, rng.integers(0, 256, size=(3, 5)).astype(np.uint8))
case("pad_e5m2fnuz_reflect",
     [helper.make_node("Pad", ["x", "pads"], ["y"], name="pad", mode="reflect")],
     {"x": x, "pads": np.array([1, 2, 2, 3], dtype=np.int64)},
     {"y": Narrow(E5M2FNUZ, np.pad(x.a, [(1, 2), (2, 3)], mode="reflect"))},
     opset=21, inits=("pads",))
x = Narrow(INT4, rng.integers(-8, 8, size=(2, 5)).astype(np.int8))
case("pad_int4_edge", [helper.make_node("Pad", ["x", "pads"], ["y"], name="pad", mode="edge"),
                       helper.make_node("Cast", ["y"], ["f"], name="to_f32", to=1)],
     {"x": x, "pads": np.array([0, 1, 1, 2], dtype=np.int64)},
     {"y": Narrow(INT4, np.pad(x.a, [(0, 1), (1, 2)], mode="edge")),
      "f": np.pad(x.a, [(0, 1), (1, 2)], mode="edge").astype(np.float32)},
     opset=21, inits=("pads",))
x = Narrow(UINT4, rng.integers(0, 16, size=(3, 4)).astype(np.uint8))
case("pad_uint4_axes_wrap",  # opset 18's axes input; wrap mode; the default fill is unused
     [helper.make_node("Pad", ["x", "pads", "", "axes"], ["y"], name="pad", mode="wrap")],
     {"x": x, "pads": np.array([2, 1], dtype=np.int64), "axes": np.array([-1], dtype=np.int64)},
     {"y": Narrow(UINT4, np.pad(x.a, [(0, 0), (2, 1)], mode="wrap"))},
     opset=21, inits=("pads", "axes"))
x = Narrow(UINT4, rng.integers(0, 16, size=(2, 3)).astype(np.uint8))
case("pad_uint4_zero", [helper.make_node("Pad", ["x", "pads"], ["y"], name="pad")],
     {"x": x, "pads": np.array([1, 0, 0, 2], dtype=np.int64)},
     {"y": Narrow(UINT4, np.pad(x.a, [(1, 0), (0, 2)]))}, opset=21, inits=("pads",))
cond = rng.integers(0, 2, size=(2, 1, 4)).astype(np.bool_)
a = Narrow(E4M3FNUZ, rng.integers(0, 256, size=(2, 3, 4)).astype(np.uint8))
b = Narrow(E4M3FNUZ, rng.integers(0, 256, size=(4,)).astype(np.uint8))
case("where_e4m3fnuz", [helper.make_node("Where", ["cond", "a", "b"], ["y"], name="where")],
     {"cond": cond, "a": a, "b": b},
     {"y": Narrow(E4M3FNUZ, np.where(cond, a.a, b.a))}, opset=21, inits=("b",))
cond = rng.integers(0, 2, size=(3, 4)).astype(np.bool_)
a = Narrow(INT4, rng.integers(-8, 8, size=(3, 4)).astype(np.int8))
b = Narrow(INT4, np.array(-7, np.int8))
case("where_int4", [helper.make_node("Where", ["cond", "a", "b"], ["y"], name="where"),
                    helper.make_node("Cast", ["y"], ["f"], name="to_f32", to=1)],
     {"cond": cond, "a": a, "b": b},
     {"y": Narrow(INT4, np.where(cond, a.a, b.a)),
      "f": np.where(cond, a.a, b.a).astype(np.float32)}, opset=21, inits=("b",))

# blocked quantization (opset 21 block_size: the scale has x's shape but ceil(D / b)
# along axis; element j of the axis uses scale j // b), int4 weights as weight-only
# quantized models store them, an 8-bit one with a partial last block
w = Narrow(INT4, rng.integers(-8, 8, size=(3, 10)).astype(np.int8))
sb = (rng.random((3, 3)) + 0.25).astype(np.float32)
zb = Narrow(INT4, rng.integers(-3, 4, size=(3, 3)).astype(np.int8))
jb = np.arange(10) // 4  # block 4: columns 0-3, 4-7, 8-9
yb = (w.a.astype(np.float32) - zb.a[:, jb].astype(np.float32)) * sb[:, jb]
case("dequantize_int4_blocked", [helper.make_node("DequantizeLinear", ["w", "s", "z"], ["y"],
                                                  name="dq", axis=1, block_size=4)],
     {"w": w, "s": sb, "z": zb}, {"y": yb.astype(np.float32)}, opset=21, inits=("z",))
case("dequantize_int4_blocked_init",  # constant weights, run-time scale: not folded
     [helper.make_node("DequantizeLinear", ["w", "s", "z"], ["y"], name="dq", axis=-1,
                       block_size=4)],
     {"w": w, "s": sb, "z": zb}, {"y": yb.astype(np.float32)}, opset=21, inits=("w", "z"))
x = (rng.standard_normal((7, 2)) * 20).astype(np.float32)
sq = np.array([[0.5, 0.25], [1.0, 2.0], [0.75, 0.1]], dtype=np.float32)
zq = np.array([[0, 10], [128, 255], [3, 100]], dtype=np.uint8)
iq = np.arange(7) // 3  # block 3 along axis 0: rows 0-2, 3-5, 6
qb = np.clip(np.rint(x / sq[iq]) + zq[iq], 0, 255).astype(np.uint8)
case("quantize_u8_blocked", [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"],
                                              name="q", axis=0, block_size=3)],
     {"x": x, "s": sq, "z": zq}, {"y": qb}, opset=21, inits=("z",))


def main():
    for n, (m, ins, outs) in sorted(CASES.items()):
        write(os.path.join(OUT, n), m, ins, outs)
    print("wrote %d cases" % len(CASES))


if __name__ == "__main__":
    main()
