#!/usr/bin/python3
"""Writes the models of tests/attn/models: MatMul and Gemm whose B is a graph input (known
only at run time), which the tile pass packs into an arena scratch at run time and
multiplies with the register tiles of the constant-weight contractions (passes/tile.c).
Expected outputs are computed with numpy (np.matmul in float64, softmax in float64) from
the same inputs, so `kiln check-onnx tests/attn/models --backend B` compares every backend.

  batched          [2,3,5,7] x [2,3,7,9]             one B per batch
  broadcast_a      [1,5,7] x [4,7,9]                 A broadcast over B's batch
  broadcast_b      [2,3,5,7] x [3,7,9]               B broadcast over A's leading dim
  tiles            [2,3,37,40] x [2,3,40,50]         full and partial row tiles and
                                                     column blocks in every vector width
  small            [3,2,3] x [3,3,5]                 smaller than a tile
  odd              [2,17,33] x [2,33,19]             odd sizes, partial blocks
  shared_b         [4,6,24] x [24,20] (B an input)   one run-time B for every batch
  gemm_transb      Gemm(A[6,20], B[33,20], C[33]) transB, alpha 0.5, beta 2, B and C inputs
  gemm_transa      Gemm(A[20,6], B[20,40], C const) transA, alpha 1.5
  matmul_add_relu  Relu([2,4,9,16] x [2,4,16,24] + R)  fused epilogue with a y-shaped operand
  attention        softmax(Q K^T / sqrt(8)) V, Q, K, V [1,2,12,8] (MatMul, Softmax, MatMul)
  attention_mask   the same with an additive mask [1,1,12,12] (an epilogue operand that
                   broadcasts over the heads)
  bcast_epi        Relu([2,3,9,16] x [2,3,16,24] + R[3,1,24] + S[2,1,9,1])  operands
                   broadcast over batch dims, rows and columns
  const_b_col      [10,20] x constant [20,40] + C[10,1]  constant B, a column operand
  vec_batched      [2,3,6,20] x [2,3,20,32]          columns a multiple of 16: vector
                                                     work-items on OpenCL (partial row tile)
  vec_bcast_b      [2,3,5,7] x [3,7,48]              the same, B broadcast over A's leading dim
  vec_shared_b     [4,7,24] x [24,32] (B an input)   the same, one run-time B for every batch
  heads            softmax(Q K^T), K [48,4,16] transposed by perm [1,2,0] (rows_cases)
  softmax_rows     Softmax of [2,9,20] and of [3,17] (rows_cases)
  matvec_wide      [1,1100] x B [1100,520] + c, B folded from small constants (rows_cases)
  matvec_classes   [1,1100] x B [1100,1000] + c, the same: a 1000-class classifier's columns
                   (8 past the last 32-column tile, 40 past the last 64-column one)

usage: /usr/bin/python3 tests/attn/make_attn.py"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(16)
F = TensorProto.FLOAT


def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def vi(name, a):
    return helper.make_tensor_value_info(name, F, list(a.shape))


def save(name, nodes, inputs, outputs, inits=()):
    """inputs, outputs: lists of (name, array)."""
    g = helper.make_graph(nodes, name, [vi(n, a) for n, a in inputs],
                          [vi(n, a) for n, a in outputs],
                          [numpy_helper.from_array(a, n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.checker.check_model(m)
    d = os.path.join(HERE, "models", name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(m, os.path.join(d, "model.onnx"))
    for kind, vals in (("input", inputs), ("output", outputs)):
        for k, (n, a) in enumerate(vals):
            with open(os.path.join(d, "test_data_set_0", f"{kind}_{k}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(a, n).SerializeToString())


def mm(a, b):
    return np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)


def matmul_case(name, ashape, bshape):
    a, b = rand(*ashape), rand(*bshape)
    save(name, [helper.make_node("MatMul", ["a", "b"], ["y"])], [("a", a), ("b", b)],
         [("y", mm(a, b))])


def gemm_transb():
    a, b, c = rand(6, 20), rand(33, 20), rand(33)
    y = (0.5 * mm(a, b.T).astype(np.float64) + 2.0 * c).astype(np.float32)
    save("gemm_transb",
         [helper.make_node("Gemm", ["a", "b", "c"], ["y"], transB=1, alpha=0.5, beta=2.0)],
         [("a", a), ("b", b), ("c", c)], [("y", y)])


def gemm_transa():
    a, b, c = rand(20, 6), rand(20, 40), rand(40)
    y = (1.5 * mm(a.T, b).astype(np.float64) + c).astype(np.float32)
    save("gemm_transa", [helper.make_node("Gemm", ["a", "b", "c"], ["y"], transA=1, alpha=1.5)],
         [("a", a), ("b", b)], [("y", y)], inits=[("c", c)])


def matmul_add_relu():
    a, b, r = rand(2, 4, 9, 16), rand(2, 4, 16, 24), rand(2, 4, 9, 24)
    y = np.maximum(mm(a, b).astype(np.float64) + r, 0).astype(np.float32)
    save("matmul_add_relu",
         [helper.make_node("MatMul", ["a", "b"], ["p"]),
          helper.make_node("Add", ["p", "r"], ["s"]),
          helper.make_node("Relu", ["s"], ["y"])],
         [("a", a), ("b", b), ("r", r)], [("y", y)])


def attention():
    q, k, v = rand(1, 2, 12, 8), rand(1, 2, 12, 8), rand(1, 2, 12, 8)
    s = np.matmul(q.astype(np.float64), k.astype(np.float64).transpose(0, 1, 3, 2))
    s = s / np.sqrt(8.0)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    y = np.matmul(p, v.astype(np.float64)).astype(np.float32)
    scale = np.array(1 / np.sqrt(8.0), np.float32)
    save("attention",
         [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
          helper.make_node("MatMul", ["q", "kt"], ["s"]),
          helper.make_node("Mul", ["s", "scale"], ["ss"]),
          helper.make_node("Softmax", ["ss"], ["p"], axis=-1),
          helper.make_node("MatMul", ["p", "v"], ["y"])],
         [("q", q), ("k", k), ("v", v)], [("y", y)], inits=[("scale", scale)])


def attention_mask():
    q, k, v = rand(1, 2, 12, 8), rand(1, 2, 12, 8), rand(1, 2, 12, 8)
    mask = np.where(rng.random((1, 1, 12, 12)) < 0.3, -1e4, 0).astype(np.float32)
    s = np.matmul(q.astype(np.float64), k.astype(np.float64).transpose(0, 1, 3, 2))
    s = s / np.sqrt(8.0) + mask
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    y = np.matmul(p, v.astype(np.float64)).astype(np.float32)
    scale = np.array(1 / np.sqrt(8.0), np.float32)
    save("attention_mask",
         [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
          helper.make_node("MatMul", ["q", "kt"], ["s"]),
          helper.make_node("Mul", ["s", "scale"], ["ss"]),
          helper.make_node("Add", ["ss", "mask"], ["sm"]),
          helper.make_node("Softmax", ["sm"], ["p"], axis=-1),
          helper.make_node("MatMul", ["p", "v"], ["y"])],
         [("q", q), ("k", k), ("v", v), ("mask", mask)], [("y", y)],
         inits=[("scale", scale)])


def bcast_epi():
    a, b, r, c = rand(2, 3, 9, 16), rand(2, 3, 16, 24), rand(3, 1, 24), rand(2, 1, 9, 1)
    y = np.maximum(mm(a, b).astype(np.float64) + r + c, 0).astype(np.float32)
    save("bcast_epi",
         [helper.make_node("MatMul", ["a", "b"], ["p"]),
          helper.make_node("Add", ["p", "r"], ["s"]),
          helper.make_node("Add", ["s", "c"], ["t"]),
          helper.make_node("Relu", ["t"], ["y"])],
         [("a", a), ("b", b), ("r", r), ("c", c)], [("y", y)])


def const_b_col():
    a, b, c = rand(10, 20), rand(20, 40), rand(10, 1)
    y = (mm(a, b).astype(np.float64) + c).astype(np.float32)
    save("const_b_col",
         [helper.make_node("MatMul", ["a", "b"], ["p"]),
          helper.make_node("Add", ["p", "c"], ["y"])],
         [("a", a), ("c", c)], [("y", y)], inits=[("b", b)])


def main():
    matmul_case("batched", (2, 3, 5, 7), (2, 3, 7, 9))
    matmul_case("broadcast_a", (1, 5, 7), (4, 7, 9))
    matmul_case("broadcast_b", (2, 3, 5, 7), (3, 7, 9))
    matmul_case("tiles", (2, 3, 37, 40), (2, 3, 40, 50))
    matmul_case("small", (3, 2, 3), (3, 3, 5))
    matmul_case("odd", (2, 17, 33), (2, 33, 19))
    matmul_case("shared_b", (4, 6, 24), (24, 20))
    gemm_transb()
    gemm_transa()
    matmul_add_relu()
    attention()
    attention_mask()
    bcast_epi()
    const_b_col()
    vec_cases()
    rows_cases()


def softmax64(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def rows_cases():
    """Appended after vec_cases, with a generator of their own.

    heads         softmax(Q K^T) with K [48,4,16] as a BERT export holds it (sequence, heads,
                  head size), transposed [4,16,48] by one Transpose: the blocked transpose of
                  ir/lower/tensor.c (48 columns, input rows 256 bytes apart), and the Softmax
                  row kernel four rows a step (192 rows)
    softmax_rows  Softmax of [2,9,20] (18 rows: two a step; rows of 20, a tail past 16
                  lanes) and of [3,17] (3 rows: one a step)"""
    global rng
    rng = np.random.default_rng(1617)
    q, k = rand(4, 48, 16), rand(48, 4, 16)
    kt = k.astype(np.float64).transpose(1, 2, 0)
    p = softmax64(np.matmul(q.astype(np.float64), kt)).astype(np.float32)
    save("heads",
         [helper.make_node("Transpose", ["k"], ["kt"], perm=[1, 2, 0]),
          helper.make_node("MatMul", ["q", "kt"], ["s"]),
          helper.make_node("Softmax", ["s"], ["p"], axis=-1)],
         [("q", q), ("k", k)], [("p", p)])
    a, b = rand(2, 9, 20), rand(3, 17)
    save("softmax_rows",
         [helper.make_node("Softmax", ["a"], ["pa"], axis=-1),
          helper.make_node("Softmax", ["b"], ["pb"], axis=-1)],
         [("a", a), ("b", b)],
         [("pa", softmax64(a.astype(np.float64)).astype(np.float32)),
          ("pb", softmax64(b.astype(np.float64)).astype(np.float32))])
    matvec_wide()
    matvec_wide("matvec_classes", 1000)


def matvec_wide(name="matvec_wide", n=520):
    """x [1,1100] times a constant B [1100,n] (2.3 MB at n = 520: more than the L2 of the
    machines kiln was measured on, so the tile pass takes 4-vector tiles, passes/tile.c
    mm_matvec_widen; at n = 1000 a program for several threads keeps 2-vector ones) plus a
    bias; B = u1 v1 + u2 v2 is built from small constants by MatMul and Add, which the fold
    pass evaluates at compile time (f32, as numpy here)."""
    u1, v1, u2, v2 = rand(1100, 1), rand(1, n), rand(1100, 1), rand(1, n)
    x, c = rand(1, 1100), rand(n)
    b = (u1 * v1) + (u2 * v2)  # one f32 product and one f32 sum an element
    y = (mm(x, b).astype(np.float64) + c).astype(np.float32)
    save(name,
         [helper.make_node("MatMul", ["u1", "v1"], ["b1"]),
          helper.make_node("MatMul", ["u2", "v2"], ["b2"]),
          helper.make_node("Add", ["b1", "b2"], ["b"]),
          helper.make_node("Gemm", ["x", "b", "c"], ["y"])],
         [("x", x)], [("y", y)], inits=[("u1", u1), ("v1", v1), ("u2", u2), ("v2", v2), ("c", c)])


def vec_cases():
    """Appended last, with a generator of their own: the earlier models stay as they were."""
    global rng
    rng = np.random.default_rng(1616)
    matmul_case("vec_batched", (2, 3, 6, 20), (2, 3, 20, 32))
    matmul_case("vec_bcast_b", (2, 3, 5, 7), (3, 7, 48))
    matmul_case("vec_shared_b", (4, 7, 24), (24, 32))


if __name__ == "__main__":
    main()
