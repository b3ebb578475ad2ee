#!/usr/bin/python3
"""Writes tests/quant/models/qdq_pool_strided: 8-bit MaxPools of stride 2 and 3 (QDQ
around each, one scale and zero point, so the qdq pass makes them 8-bit pools), whose
interiors the pool pass builds from strided vector loads on CPU targets
(kx_vload_strided, passes/pool.c): vectors of up to 64 byte lanes, a remainder vector
that overlaps the last full one, borders apart. Expected outputs from the ONNX operator
definitions in numpy float32 (DequantizeLinear: (x - zp) * scale; MaxPool with -inf
padding; QuantizeLinear: rint(x / scale) + zp, saturated), independent of kiln:

  a u8 [1, 3, 7, 151], c i8 [1, 3, 7, 151], d u8 [1, 2, 6, 129]
  p1 = Q(MaxPool3x3 s2 pad 1 (DQ(a)))   76 outputs a row: 74 interior (64 + a remainder)
  p2 = Q(MaxPool2x2 s2 (DQ(c)))         int8, 75 outputs, all interior
  p3 = Q(MaxPool3x3 s3 pad 1 (DQ(a)))   stride 3: 51 outputs, 49 interior (32 + remainder)
  p4 = Q(MaxPool2x2 s2 (DQ(d)))         64 outputs: one full vector, no remainder

    /usr/bin/python3 tests/quant/make_qdq_pool_strided.py
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_quant_models import init, save  # noqa: E402
from make_qdq_pool import maxpool  # noqa: E402
from qref import dq, q  # noqa: E402

rng = np.random.default_rng(33)
N = helper.make_node
F = np.float32


def main():
    sa, sd = (1, 3, 7, 151), (1, 2, 6, 129)
    a = rng.integers(0, 256, sa, dtype=np.uint8)
    c = rng.integers(-128, 128, sa, dtype=np.int8)
    d = rng.integers(0, 256, sd, dtype=np.uint8)
    p = {"a": (0.0371, np.uint8(7)), "c": (0.043, np.int8(-5)), "d": (0.021, np.uint8(130))}
    inits, nodes = [], []
    for k, (s, z) in p.items():
        inits += [init(k + "_s", F(s)), init(k + "_z", z)]
        nodes.append(N("DequantizeLinear", [k, k + "_s", k + "_z"], [k + "_f"]))
    outs, refs = [], []
    for name, x, xv, k, s, pad, t in (("p1", "a", a, 3, 2, 1, np.uint8),
                                      ("p2", "c", c, 2, 2, 0, np.int8),
                                      ("p3", "a", a, 3, 3, 1, np.uint8),
                                      ("p4", "d", d, 2, 2, 0, np.uint8)):
        nodes.append(N("MaxPool", [x + "_f"], ["m" + name], kernel_shape=[k, k],
                       strides=[s, s], pads=[pad] * 4, name="pool_" + name))
        nodes.append(N("QuantizeLinear", ["m" + name, x + "_s", x + "_z"], [name]))
        r = q(maxpool(dq(xv, *p[x]), k, s, pad), *p[x], t)
        refs.append(r)
        et = TensorProto.UINT8 if t == np.uint8 else TensorProto.INT8
        outs.append(helper.make_tensor_value_info(name, et, r.shape))

    T = helper.make_tensor_value_info
    ins = [T("a", TensorProto.UINT8, sa), T("c", TensorProto.INT8, sa), T("d", TensorProto.UINT8, sd)]
    g = helper.make_graph(nodes, "qdq_pool_strided", ins, outs, inits)
    save("qdq_pool_strided", g, [a, c, d], refs)


if __name__ == "__main__":
    main()
