#!/usr/bin/python3
"""Writes tests/quant/models/dq_pool: the float tail of an int8 classifier (MobileNetV2's,
DS-CNN's): a per-tensor DequantizeLinear of uint8 x [1, 13, 5, 7] (zero point 121) into a
GlobalAveragePool and into an AveragePool whose one window is the whole input
(kernel_shape [5, 7], no padding), and of uint8 z [1, 6, 3, 3] into a GlobalAveragePool.
On microcontrollers the pool pass sums each channel in one loop over its h * w elements,
unrolled (passes/pool.c, gap_rewrite: 35 elements by 16, 9 whole), on Helium 4 channels a
vector (one gather of 4 elements h * w apart a step: 13 channels are 3 vectors and one
channel alone, 6 are one vector and two alone). Expected outputs with
numpy, in the order the lowering adds: each channel's float32 values summed one after the
other from 0 in row-major order, then divided by the float32 count.

    /usr/bin/python3 tests/quant/make_dq_pool.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(41)
x = rng.integers(0, 256, (1, 13, 5, 7), dtype=np.uint8)
z = rng.integers(0, 256, (1, 6, 3, 3), dtype=np.uint8)
xs, xz, zs, zz = np.float32(0.0213), np.uint8(121), np.float32(0.75), np.uint8(3)
nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xf"], name="dq_x"),
         helper.make_node("GlobalAveragePool", ["xf"], ["g"], name="gap"),
         helper.make_node("AveragePool", ["xf"], ["a"], name="avg", kernel_shape=[5, 7]),
         helper.make_node("DequantizeLinear", ["z", "zs", "zz"], ["zf"], name="dq_z"),
         helper.make_node("GlobalAveragePool", ["zf"], ["h"], name="gap9")]
inits = [numpy_helper.from_array(np.array(a), n) for a, n in ((xs, "xs"), (xz, "xz"), (zs, "zs"), (zz, "zz"))]
g = helper.make_graph(nodes, "dq_pool",
                      [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 13, 5, 7]),
                       helper.make_tensor_value_info("z", TensorProto.UINT8, [1, 6, 3, 3])],
                      [helper.make_tensor_value_info("g", TensorProto.FLOAT, [1, 13, 1, 1]),
                       helper.make_tensor_value_info("a", TensorProto.FLOAT, [1, 13, 1, 1]),
                       helper.make_tensor_value_info("h", TensorProto.FLOAT, [1, 6, 1, 1])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 7
onnx.checker.check_model(m)
d = os.path.join(HERE, "models", "dq_pool")
os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
onnx.save(m, os.path.join(d, "model.onnx"))


def dq(q, s, zp):
    return (q.astype(np.int32) - np.int32(zp)).astype(np.float32) * s


def pool(v):  # [1, c, h, w] -> [1, c, 1, 1]: sequential float32 sums, then / count
    out = np.zeros((1, v.shape[1], 1, 1), np.float32)
    for c in range(v.shape[1]):
        acc = np.float32(0)
        for e in v[0, c].reshape(-1):
            acc = np.float32(acc + e)
        out[0, c, 0, 0] = acc / np.float32(v.shape[2] * v.shape[3])
    return out


gy = pool(dq(x, xs, xz))
hy = pool(dq(z, zs, zz))
files = (("input_0", "x", x), ("input_1", "z", z), ("output_0", "g", gy), ("output_1", "a", gy),
         ("output_2", "h", hy))
for fn, name, a in files:
    with open(os.path.join(d, "test_data_set_0", fn + ".pb"), "wb") as f:
        f.write(numpy_helper.from_array(a, name).SerializeToString())
