#!/usr/bin/python3
"""Writes tests/quant/models/qdq_add: residual adds in QDQ form, which the qdq pass
rewrites into kiln's QLinearAdd (passes/qdq.c), with the expected outputs computed here
from the ONNX operator definitions in numpy float32 (DequantizeLinear: (x - zp) * scale;
Add; Relu / Clip; QuantizeLinear: rint(x / scale) + zp, saturated):

  a u8 [2, 16, 7, 37], b u8 [2, 16, 7, 37], c i8 [2, 16, 7, 37], e i8 [1, 16, 1, 1]
  s1 = Q_u8(DQ(a) + DQ(b))                        scales 0.0371, 0.0219 -> 0.0523
  s2 = Q_u8(Relu(DQ(s1) + DQ(c)))                 u8 + i8 operands, Relu -> clamp
  s3 = Q_i8(Clip(DQ(s2) + DQ(b), 0, 6))           Relu6 -> clamp [q(0), q(6)]
  s4 = Q_u8(DQ(a) + DQ(e))                        e broadcast over [2, 16, 7, 37]
  t  = Q_u8(DQ(a) + DQ(b))                        scales 0.5, 0.25 -> 0.75 and 1.0:
  t1 = Q_u8(DQ(a) + DQ(c))                        exact quotients ending in .5 (ties,
                                                  rounded half to even)
Outputs s1 .. s4, t, t1. Rows of 37 give vector bodies and scalar tails.

    /usr/bin/python3 tests/quant/make_qdq_add.py
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qref import dq, init, q, save  # noqa: E402

rng = np.random.default_rng(12)
N = helper.make_node
F = np.float32


def main():
    shp = (2, 16, 7, 37)
    a = rng.integers(0, 256, shp, dtype=np.uint8)
    b = rng.integers(0, 256, shp, dtype=np.uint8)
    c = rng.integers(-128, 128, shp, dtype=np.int8)
    e = rng.integers(-128, 128, (1, 16, 1, 1), dtype=np.int8)
    p = {  # name: (scale, zero point)
        "a": (0.0371, np.uint8(121)), "b": (0.0219, np.uint8(98)), "c": (0.043, np.int8(-5)),
        "e": (0.061, np.int8(3)), "s1": (0.0523, np.uint8(112)), "s2": (0.0471, np.uint8(0)),
        "s3": (0.0249, np.int8(-128)), "s4": (0.0817, np.uint8(90)),
        "ta": (0.5, np.uint8(128)), "tb": (0.25, np.uint8(100)), "tc": (0.5, np.int8(0)),
        "t": (0.75, np.uint8(128)), "t1": (1.0, np.uint8(128)),
    }
    inits, nodes = [], []
    for k, (s, z) in p.items():
        inits += [init(k + "_s", F(s)), init(k + "_z", z)]

    def DQ(x, k, out):
        nodes.append(N("DequantizeLinear", [x, k + "_s", k + "_z"], [out]))

    def Q(x, k, out):
        nodes.append(N("QuantizeLinear", [x, k + "_s", k + "_z"], [out]))

    # s1
    DQ("a", "a", "a_f"), DQ("b", "b", "b_f")
    nodes.append(N("Add", ["a_f", "b_f"], ["sum1"], name="add1"))
    Q("sum1", "s1", "s1")
    s1 = q(dq(a, *p["a"]) + dq(b, *p["b"]), *p["s1"], np.uint8)
    # s2: Relu
    DQ("s1", "s1", "s1_f"), DQ("c", "c", "c_f")
    nodes += [N("Add", ["s1_f", "c_f"], ["sum2"], name="add2"), N("Relu", ["sum2"], ["relu2"])]
    Q("relu2", "s2", "s2")
    s2 = q(np.maximum(dq(s1, *p["s1"]) + dq(c, *p["c"]), F(0)), *p["s2"], np.uint8)
    # s3: Clip(0, 6) into int8 (b's DequantizeLinear read a second time)
    DQ("s2", "s2", "s2_f")
    inits += [init("lo", F(0)), init("hi", F(6))]
    nodes += [N("Add", ["s2_f", "b_f"], ["sum3"], name="add3"),
              N("Clip", ["sum3", "lo", "hi"], ["clip3"])]
    Q("clip3", "s3", "s3")
    s3 = q(np.clip(dq(s2, *p["s2"]) + dq(b, *p["b"]), F(0), F(6)), *p["s3"], np.int8)
    # s4: broadcast
    DQ("e", "e", "e_f")
    nodes.append(N("Add", ["a_f", "e_f"], ["sum4"], name="add4"))
    Q("sum4", "s4", "s4")
    s4 = q(dq(a, *p["a"]) + dq(e, *p["e"]), *p["s4"], np.uint8)
    # t, t1: ties
    DQ("a", "ta", "ta_f"), DQ("b", "tb", "tb_f"), DQ("c", "tc", "tc_f")
    nodes.append(N("Add", ["ta_f", "tb_f"], ["sumt"], name="addt"))
    Q("sumt", "t", "t")
    t = q(dq(a, *p["ta"]) + dq(b, *p["tb"]), *p["t"], np.uint8)
    nodes.append(N("Add", ["ta_f", "tc_f"], ["sumt1"], name="addt1"))
    Q("sumt1", "t1", "t1")
    t1 = q(dq(a, *p["ta"]) + dq(c, *p["tc"]), *p["t1"], np.uint8)
    ties = np.abs((dq(a, *p["ta"]) + dq(c, *p["tc"])) / F(1.0) % 1 - 0.5) == 0
    assert ties.sum() > 100, ties.sum()

    T = helper.make_tensor_value_info
    ins = [T("a", TensorProto.UINT8, shp), T("b", TensorProto.UINT8, shp),
           T("c", TensorProto.INT8, shp), T("e", TensorProto.INT8, (1, 16, 1, 1))]
    outs = [T("s1", TensorProto.UINT8, shp), T("s2", TensorProto.UINT8, shp),
            T("s3", TensorProto.INT8, shp), T("s4", TensorProto.UINT8, shp),
            T("t", TensorProto.UINT8, shp), T("t1", TensorProto.UINT8, shp)]
    g = helper.make_graph(nodes, "qdq_add", ins, outs, inits)
    save("qdq_add", g, [a, b, c, e], [s1, s2, s3, s4, t, t1])


if __name__ == "__main__":
    main()
