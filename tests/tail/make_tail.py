#!/usr/bin/python3
"""Writes ONNX backend-test folders (model.onnx, test_data_set_0) whose products have a
number of output columns that is not a multiple of the tile width (4 columns on
microcontrollers' scalar tiles), so the last block of columns is partial and packed
narrower (passes/tile.c, mm_lower):

  gemm10/    float Gemm, 3 rows x 64 -> 10 classes (transB, bias): 2 full blocks + 2 columns
  gemm7/     float MatMul 5 x 33 -> 7 then Add: 1 full block + 3 columns
  mmint10/   MatMulInteger, uint8 3 x 64 by int8 64 x 10 with zero points -> int32 10
  gemm13/    float Gemm 3 x 24 -> 13 (bias) then Relu: on cortex-m4 the register-block
             tiles (passes/tile.c, mm_fblock: 8 columns x 8 inputs a step), one full block
             of 8 columns and a partial one of 5 computed as 6
  gemv45/    float Gemm 1 x 40 -> 45 (transB, bias) then Relu: on cortex-m55 the
             matrix-vector tiles of 7 vectors (28 columns) and an edge tile of 17
  mmodd37/   float MatMul 24 x 37 -> 64: on 32-register CPUs two reduction steps an
             iteration and, K being odd, the last one alone (passes/tile.c, mm_k_unroll)
  mmgrp/     float MatMul 45 x 37 -> 269: with a schedule's mc (tests/tail/mmgrp.sh) the
             4 full blocks of columns in 2 groups, each in blocks of 12 rows and 9 left
             (passes/tile.c, mm_groups), the partial block of 13 columns after
  mmpf/      float MatMul 13 x 129 -> 515 (266 KB of B): each tile prefetches its share of
             the next block's B (passes/tile.c, mm_bpf; tests/tail/mmpf.sh), the last
             full block itself, the partial block of 3 columns none
  pwpf/      float 1x1 Conv 131 -> 517 channels (271 KB of weights, bias) on 9 x 11 pixels:
             each tile of output channels prefetches the next tile's weights (passes/
             tile.c, pw_apf; tests/tail/mmpf.sh), 86 tiles of 6 and one of 1
  pwwide/    float 1x1 Conv 61 -> 50 channels (bias) on 29 x 31 pixels, plus a residual
             input and Relu: on 32-register CPUs the 4 x 6 tile (passes/tile.c, pw_wide;
             tests/tail/pwwide.sh), 9 blocks of 96 pixels and a partial one of 35
             (3 vectors, the last with 3 pixels), 12 tiles of 4 rows and one of 2
  pwwide49/  float 1x1 Conv 800 -> 40 channels at stride 2 on 13 x 13 pixels (7 x 7 = 49
             output pixels, bias, 541 KB of input, packed): the 6 x 4 tile over the 49
             pixels as one partial block where 8 x 3 would take 48 and a tail of 1 (pw_wide)
  pwchpf/    float 1x1 Conv 600 -> 230 channels (bias) on 5 x 5 pixels, plus a residual
             input and Relu (552 KB of weights): the channel tiles prefetch the next block's
             weights (passes/tile.c, conv_pf; tests/tail/pwchpf.sh)
  pwodd/     float 1x1 Conv 301 -> 70 channels (bias) on 5 x 5 pixels, plus a residual
             input and Relu: on 32-register CPUs the channel tiles make two input channels
             an iteration, the last (301 odd) alone (passes/tile.c, conv_k_unroll;
             tests/tail/pwodd.sh)
  pwwide169/ float 1x1 Conv 64 -> 520 channels (bias) on 13 x 13 pixels, then Relu: the
             6 x 4 tile at 512 output channels or more where kt_widen keeps 8 x 2 (pw_wide)
  mmserp/    float MatMul 93 x 360 -> 205 (A 134 KB): the serpentine order of the blocks'
             tiles of rows (passes/tile.c, mm_serp; tests/tail/mmserp.sh), 3 full blocks
             of columns (a pair and one in order), 15 tiles of 6 rows and one of 3, and a
             partial block of 13 columns

Outputs computed with numpy (float64 sums rounded to float32; integers exactly).
tests/tail/check.sh checks the weights are no longer padded. usage: /usr/bin/python3 make_tail.py"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import gen_common as gc  # noqa: E402

rng = np.random.default_rng(10)


def save(name, graph, inputs, outputs):
    gc.write_case(os.path.join(HERE, name), gc.model(graph, opset=13, ir_version=8), inputs,
                  outputs)


def matmul_case(name, m, k, n, scale):
    """y = x M: x [m][k] an input, M [k][n] * scale a constant; the float64 reference."""
    x = rng.standard_normal((m, k)).astype(np.float32)
    mw = (rng.standard_normal((k, n)) * scale).astype(np.float32)
    y = (x.astype(np.float64) @ mw.astype(np.float64)).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "m"], ["y"], name="mm")], name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])],
        [numpy_helper.from_array(mw, "m")])
    save(name, g, [("x", x)], [("y", y)])


# gemm10: y = x W^T + b
x = rng.standard_normal((3, 64)).astype(np.float32)
w = (rng.standard_normal((10, 64)) * 0.1).astype(np.float32)
b = rng.standard_normal(10).astype(np.float32)
y = (x.astype(np.float64) @ w.astype(np.float64).T + b).astype(np.float32)
g = helper.make_graph(
    [helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1, name="fc")], "gemm10",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 64])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 10])],
    [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
save("gemm10", g, [("x", x)], [("y", y)])

# gemm7: y = x M + c
x = rng.standard_normal((5, 33)).astype(np.float32)
mw = (rng.standard_normal((33, 7)) * 0.2).astype(np.float32)
c = rng.standard_normal(7).astype(np.float32)
y = (x.astype(np.float64) @ mw.astype(np.float64)).astype(np.float32) + c
g = helper.make_graph(
    [helper.make_node("MatMul", ["x", "m"], ["p"], name="mm"),
     helper.make_node("Add", ["p", "c"], ["y"], name="add")], "gemm7",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 33])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [5, 7])],
    [numpy_helper.from_array(mw, "m"), numpy_helper.from_array(c, "c")])
save("gemm7", g, [("x", x)], [("y", y)])

# mmint10: (a - az)(B - bz), exact in int32
a = rng.integers(0, 256, (3, 64)).astype(np.uint8)
bq = rng.integers(-128, 128, (64, 10)).astype(np.int8)
az, bz = np.uint8(131), np.int8(-3)
y = ((a.astype(np.int64) - int(az)) @ (bq.astype(np.int64) - int(bz))).astype(np.int32)
g = helper.make_graph(
    [helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"], name="mmi")], "mmint10",
    [helper.make_tensor_value_info("a", TensorProto.UINT8, [3, 64])],
    [helper.make_tensor_value_info("y", TensorProto.INT32, [3, 10])],
    [numpy_helper.from_array(bq, "b"), numpy_helper.from_array(np.array(az), "az"),
     numpy_helper.from_array(np.array(bz), "bz")])
save("mmint10", g, [("a", a)], [("y", y)])

# gemm13: y = relu(x W + b), the register-block tiles of cortex-m4 (K = 24: 3 input blocks)
x = rng.standard_normal((3, 24)).astype(np.float32)
w = (rng.standard_normal((24, 13)) * 0.3).astype(np.float32)
b = (rng.standard_normal(13) * 0.5).astype(np.float32)
y = np.maximum(x.astype(np.float64) @ w.astype(np.float64) + b, 0).astype(np.float32)
g = helper.make_graph(
    [helper.make_node("Gemm", ["x", "w", "b"], ["p"], name="fc"),
     helper.make_node("Relu", ["p"], ["y"], name="relu")], "gemm13",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 24])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 13])],
    [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
save("gemm13", g, [("x", x)], [("y", y)])

# gemv45: y = relu(x W^T + b) at batch 1, a matrix-vector product: on cortex-m55 the float
# tiles of 7 vectors (28 columns, passes/tile.c, kt_choose), then an edge tile of 17
# columns (4 whole vectors and one column)
x = rng.standard_normal((1, 40)).astype(np.float32)
w = (rng.standard_normal((45, 40)) * 0.2).astype(np.float32)
b = (rng.standard_normal(45) * 0.5).astype(np.float32)
y = np.maximum(x.astype(np.float64) @ w.astype(np.float64).T + b, 0).astype(np.float32)
g = helper.make_graph(
    [helper.make_node("Gemm", ["x", "w", "b"], ["p"], transB=1, name="fc"),
     helper.make_node("Relu", ["p"], ["y"], name="relu")], "gemv45",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 40])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 45])],
    [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
save("gemv45", g, [("x", x)], [("y", y)])

# mmodd37: y = x M, 24 x 37 -> 64: on CPUs with 32 vector registers the float tiles take two
# steps of the reduction an iteration (passes/tile.c, mm_k_unroll), and with K = 37 the last
# step alone after the loop
matmul_case("mmodd37", 24, 37, 64, 0.2)

# mmgrp: y = x M, 45 x 37 -> 269 = 4 blocks of 64 columns + 13: grouped by a schedule's mc
# (passes/tile.c, mm_groups; tests/tail/mmgrp.sh), odd rows, reduction and columns
matmul_case("mmgrp", 45, 37, 269, 0.2)

# mmpf: y = x M, 13 x 129 -> 515 = 8 blocks of 64 columns + 3, B 266 KB: the tiles prefetch
# the next block's packed B (passes/tile.c, mm_bpf; tests/tail/mmpf.sh)
matmul_case("mmpf", 13, 129, 515, 0.1)

# pwpf: 1x1 Conv 131 -> 517 (bias) on 9 x 11 pixels, weights 271 KB: the tiles of output
# channels prefetch the next tile's weights (passes/tile.c, pw_apf; tests/tail/mmpf.sh)
x = rng.standard_normal((1, 131, 9, 11)).astype(np.float32)
w = (rng.standard_normal((517, 131, 1, 1)) * 0.1).astype(np.float32)
b = rng.standard_normal(517).astype(np.float32)
y = (np.einsum("oc,chw->ohw", w[:, :, 0, 0].astype(np.float64), x[0].astype(np.float64)) +
     b.astype(np.float64)[:, None, None])[None].astype(np.float32)
g = helper.make_graph(
    [helper.make_node("Conv", ["x", "w", "b"], ["y"], name="pw")], "pwpf",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 131, 9, 11])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 517, 9, 11])],
    [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
save("pwpf", g, [("x", x)], [("y", y)])

def pw_residual(name, cin, cout, h, wd, scale):
    """y = Relu(Conv1x1(x) + b + r): x [1][cin][h][wd], w [cout][cin] * scale, the
    residual r an input; the float64 reference."""
    x = rng.standard_normal((1, cin, h, wd)).astype(np.float32)
    r = rng.standard_normal((1, cout, h, wd)).astype(np.float32)
    w = (rng.standard_normal((cout, cin, 1, 1)) * scale).astype(np.float32)
    b = rng.standard_normal(cout).astype(np.float32)
    conv = (np.einsum("oc,chw->ohw", w[:, :, 0, 0].astype(np.float64),
                      x[0].astype(np.float64)) +
            b.astype(np.float64)[:, None, None])[None].astype(np.float32)
    y = np.maximum(conv + r, np.float32(0))
    g = helper.make_graph(
        [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="pw"),
         helper.make_node("Add", ["c", "r"], ["s"]),
         helper.make_node("Relu", ["s"], ["y"])], name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, cin, h, wd]),
         helper.make_tensor_value_info("r", TensorProto.FLOAT, [1, cout, h, wd])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, cout, h, wd])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    save(name, g, [("x", x), ("r", r)], [("y", y)])


# pwwide: 1x1 Conv 61 -> 50 (bias) on 29 x 31 = 899 pixels, + r, Relu: the 4 x 6 tile of
# pointwise convolutions of at most 64 input channels (passes/tile.c, pw_wide;
# tests/tail/pwwide.sh), 9 full blocks of 96 pixels and a partial one of 35
pw_residual("pwwide", 61, 50, 29, 31, 0.1)

# pwwide49: 1x1 Conv 800 -> 40 (bias) at stride 2 on 13 x 13 (7 x 7 = 49 output pixels):
# the 6 x 4 tile over all 49 pixels (passes/tile.c, pw_wide; tests/tail/pwwide.sh)
x = rng.standard_normal((1, 800, 13, 13)).astype(np.float32)
w = (rng.standard_normal((40, 800, 1, 1)) * 0.05).astype(np.float32)
b = rng.standard_normal(40).astype(np.float32)
y = (np.einsum("oc,chw->ohw", w[:, :, 0, 0].astype(np.float64),
               x[0, :, ::2, ::2].astype(np.float64)) +
     b.astype(np.float64)[:, None, None])[None].astype(np.float32)
g = helper.make_graph(
    [helper.make_node("Conv", ["x", "w", "b"], ["y"], name="pw", strides=[2, 2])], "pwwide49",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 800, 13, 13])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 40, 7, 7])],
    [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
save("pwwide49", g, [("x", x)], [("y", y)])

# pwchpf: 1x1 Conv 600 -> 230 (bias) on 5 x 5 pixels, + r, Relu, weights 552 KB: the
# channel tiles (passes/tile.c, pw_channel_tiles) prefetch the next block's weights
# (conv_pf; tests/tail/pwchpf.sh), 3 blocks of 64 channels and a partial one of 38
pw_residual("pwchpf", 600, 230, 5, 5, 0.05)

# pwodd: 1x1 Conv 301 -> 70 (bias) on 5 x 5 pixels, + r, Relu: the channel tiles on
# 32-register CPUs make two input channels an iteration and, 301 being odd, the last one
# alone (passes/tile.c, conv_k_unroll; tests/tail/pwodd.sh)
pw_residual("pwodd", 301, 70, 5, 5, 0.05)

# pwwide169: 1x1 Conv 64 -> 520 (bias) on 13 x 13 = 169 pixels, then Relu: the 6 x 4 tile
# where kt_widen keeps 8 x 2 for its smaller partial block of pixels, as the output channels
# are 512 or more (SqueezeNet's classifier; passes/tile.c, pw_wide; tests/tail/pwwide.sh):
# 2 blocks of 64 pixels and a partial one of 41, 86 tiles of 6 channels and one of 4
x = rng.standard_normal((1, 64, 13, 13)).astype(np.float32)
w = (rng.standard_normal((520, 64, 1, 1)) * 0.1).astype(np.float32)
b = rng.standard_normal(520).astype(np.float32)
y = np.maximum((np.einsum("oc,chw->ohw", w[:, :, 0, 0].astype(np.float64),
                          x[0].astype(np.float64)) +
                b.astype(np.float64)[:, None, None])[None].astype(np.float32), np.float32(0))
g = helper.make_graph(
    [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="pw"),
     helper.make_node("Relu", ["c"], ["y"])], "pwwide169",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 13, 13])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 520, 13, 13])],
    [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
save("pwwide169", g, [("x", x)], [("y", y)])

# mmserp: y = x M, 93 x 360 -> 205 = 3 blocks of 64 columns + 13 (A 134 KB): the full
# blocks in the serpentine order (passes/tile.c, mm_serp; tests/tail/mmserp.sh), by default
# on x86-64-avx2 (its L2 256 KB: A over half of it), by a schedule's serp=1 on the host: the
# first pair's second block's 15 tiles of 6 rows last to first, the pair's two partial tiles
# of 3 rows after both, the third block alone in order, then the partial block of 13 columns
matmul_case("mmserp", 93, 360, 205, 0.1)
