#!/usr/bin/python3
"""Writes two QLinearMatMul test models into tests/quant/models for the split-word
matrix tiles of microcontrollers (passes/tile.c, mm_split_suits: each row's 4
consecutive inputs read as one word, kx_load_word, split by SXTB16/UXTB16 into its
even and odd elements for SMLAD; the weights packed as 16-bit pairs (k0, k2), (k1, k3)):

  mm_split_u8/  uint8 A (5 x 16, zero point 131) x uint8 B (16 x 8, zero point 120:
                differences up to 135, 16-bit parts of both signs) -> uint8 (zero point
                100): a full tile of rows and a partial one, two blocks of columns
  mm_split_s8/  int8 A (1 x 2 x 24, zero point -5) x int8 B (24 x 12, zero point 3)
                -> int8 (zero point -7): a matrix-vector product per batch row, three
                blocks of columns, 6 words per row
  mm_odd_s8/    int8 A (1 x 20, zero point 4) x int8 B (20 x 8, zero point -2) -> int8: 5
                words a row, an odd count (one step an iteration, not two), two blocks
                of columns (on the M4 the words read in place; mm_split_s8 and
                mm_red16_s8, three blocks, take the pre-split pairs, mm_xsplit)
  mm_red16_u8/  uint8 A (3 x 32, zero point 131) x uint8 B (32 x 8, zero point 128: every
                w - wz in [-128, 127]) -> uint8: Helium's reduction tiles (VMLADAVA.S8,
                mm_red16_suits) with u8 input (x - 128 as x ^ 0x80), a tile of 2 rows and
                one of 1, 2 steps of 16
  mm_red16_s8/  int8 A (1 x 48, zero point -5) x int8 B (48 x 12, zero point 0) -> int8:
                the autoencoder's matrix-vector shape, 3 steps, 3 blocks of columns

Expected outputs from the ONNX operator definition with numpy: zero points
subtracted, products summed in int64, then
y = saturate(round_half_even(acc * a_scale * b_scale / y_scale) + y_zp) in double.

    /usr/bin/python3 tests/quant/make_mm_split.py
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import gen_common as gc  # noqa: E402

rng = np.random.default_rng(43)


def qmatmul(a, az, b, bz, s, yz, dtype):
    acc = (a.astype(np.int64) - np.int64(az)) @ (b.astype(np.int64) - np.int64(bz))
    v = np.rint(acc.astype(np.float64) * s) + np.float64(yz)
    info = np.iinfo(dtype)
    return np.clip(v, info.min, info.max).astype(dtype)


def case(name, a, az, b, bz, as_, bs, ys, yz, onnx_type):
    dtype = a.dtype.type
    y = qmatmul(a, az, b, bz, np.float64(as_) * np.float64(bs) / np.float64(ys), yz, dtype)
    inits = [numpy_helper.from_array(np.asarray(v), n) for n, v in
             [("as", as_), ("az", az), ("b", b), ("bs", bs), ("bz", bz), ("ys", ys), ("yz", yz)]]
    node = helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"],
                            name="mm")
    g = helper.make_graph([node], name,
                          [helper.make_tensor_value_info("a", onnx_type, list(a.shape))],
                          [helper.make_tensor_value_info("y", onnx_type, list(y.shape))], inits)
    gc.write_case(os.path.join(HERE, "models", name), gc.model(g, opset=13, ir_version=7),
                  [("a", a)], [("y", y)])


case("mm_split_u8", rng.integers(0, 256, (5, 16), dtype=np.uint8), np.uint8(131),
     rng.integers(0, 256, (16, 8), dtype=np.uint8), np.uint8(120), np.float32(0.02),
     np.float32(0.003), np.float32(0.06), np.uint8(100), TensorProto.UINT8)
case("mm_split_s8", rng.integers(-128, 128, (1, 2, 24), dtype=np.int8), np.int8(-5),
     rng.integers(-128, 128, (24, 12), dtype=np.int8), np.int8(3), np.float32(0.05),
     np.float32(0.004), np.float32(0.3), np.int8(-7), TensorProto.INT8)
case("mm_odd_s8", rng.integers(-128, 128, (1, 20), dtype=np.int8), np.int8(4),
     rng.integers(-128, 128, (20, 8), dtype=np.int8), np.int8(-2), np.float32(0.05),
     np.float32(0.004), np.float32(0.2), np.int8(3), TensorProto.INT8)
case("mm_red16_u8", rng.integers(0, 256, (3, 32), dtype=np.uint8), np.uint8(131),
     rng.integers(0, 256, (32, 8), dtype=np.uint8), np.uint8(128), np.float32(0.02),
     np.float32(0.003), np.float32(0.08), np.uint8(100), TensorProto.UINT8)
case("mm_red16_s8", rng.integers(-128, 128, (1, 48), dtype=np.int8), np.int8(-5),
     rng.integers(-128, 128, (48, 12), dtype=np.int8), np.int8(0), np.float32(0.05),
     np.float32(0.004), np.float32(0.4), np.int8(-7), TensorProto.INT8)
