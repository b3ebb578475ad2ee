#!/usr/bin/python3
"""tests/quant/models/qdq_gemm_bias: a QDQ Gemm with a float bias, which the qdq pass
(passes/qdq.c) leaves in float with a warning naming the node. The reference is the
QDQ graph computed literally with numpy (QuantizeLinear rounds half to even and
saturates; powers of two as scales keep float32 exact).
usage: /usr/bin/python3 tests/quant/make_qdq_kept.py"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def q(x, s, z):
    return np.clip(np.rint(x / s) + z, 0, 255).astype(np.uint8)


def dq(x, s, z):
    return ((x.astype(np.int32) - np.int32(z)) * s).astype(np.float32)


def main():
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((2, 4)) * 2).astype(np.float32)
    xs, xz = np.float32(1 / 32), np.uint8(128)
    w = rng.integers(-127, 128, (3, 4), dtype=np.int8)  # [n][k], transB
    ws = np.float32(1 / 64)
    b = (rng.standard_normal(3)).astype(np.float32)
    ys, yz = np.float32(1 / 16), np.uint8(128)
    init = [numpy_helper.from_array(np.array(xs), "xs"), numpy_helper.from_array(np.array(xz), "xz"),
            numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.array(ws), "ws"),
            numpy_helper.from_array(np.array(np.int8(0)), "wz"), numpy_helper.from_array(b, "b"),
            numpy_helper.from_array(np.array(ys), "ys"), numpy_helper.from_array(np.array(yz), "yz")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"], name="qx"),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"], name="dqx"),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], name="dqw"),
             helper.make_node("Gemm", ["xd", "wd", "b"], ["g"], name="fc", transB=1),
             helper.make_node("QuantizeLinear", ["g", "ys", "yz"], ["yq"], name="qy"),
             helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"], name="dqy")]
    g = helper.make_graph(nodes, "qdq_gemm_bias",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, (2, 3))], init)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.checker.check_model(m)
    xd = dq(q(x, xs, xz), xs, xz)
    wd = (w.astype(np.float32) * ws).astype(np.float32)
    gm = (xd @ wd.T + b).astype(np.float32)
    y = dq(q(gm, ys, yz), ys, yz)
    d = os.path.join(HERE, "models", "qdq_gemm_bias")
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(m, os.path.join(d, "model.onnx"))
    for name, a in (("input_0", numpy_helper.from_array(x, "x")),
                    ("output_0", numpy_helper.from_array(y, "y"))):
        with open(os.path.join(d, "test_data_set_0", name + ".pb"), "wb") as f:
            f.write(a.SerializeToString())


if __name__ == "__main__":
    main()
