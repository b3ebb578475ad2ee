#!/usr/bin/python3
"""Writes tests/cli/flops_gemm.onnx and flops_conv.onnx, whose FLOPs tests/cli/bench.sh
checks against counts derived by hand (2 per multiply-add, 1 per bias add or
elementwise output, constant subgraphs folded away):

  flops_gemm: Y = Gemm(A[1,784], B[784,512], C) with C = Mul(c1, c2) of two constant
              [512] vectors (folded at compile time, so not counted):
              2*784*512 + 512 = 803,328
  flops_conv: Relu(Conv(X[1,3,8,8], W[4,3,3,3], b[4], pads 1)): 4x8x8 = 256 outputs,
              27 multiply-adds each: 2*256*27 + 256 (bias) + 256 (Relu) = 14,336

usage: /usr/bin/python3 tests/cli/make_flops_models.py"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def save(nodes, inputs, outputs, inits, name):
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="kiln-tests")
    m.ir_version = 7
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, name + ".onnx"))


def f32(*shape):
    return np.linspace(-1, 1, int(np.prod(shape)), dtype=np.float32).reshape(shape)


def main():
    vi = helper.make_tensor_value_info
    save([helper.make_node("Mul", ["c1", "c2"], ["c"], name="bias_mul"),
          helper.make_node("Gemm", ["a", "b", "c"], ["y"], name="gemm")],
         [vi("a", TensorProto.FLOAT, [1, 784]), vi("b", TensorProto.FLOAT, [784, 512])],
         [vi("y", TensorProto.FLOAT, [1, 512])],
         [numpy_helper.from_array(f32(512), "c1"), numpy_helper.from_array(f32(512), "c2")],
         "flops_gemm")
    save([helper.make_node("Conv", ["x", "w", "bias"], ["t"], name="conv", pads=[1, 1, 1, 1]),
          helper.make_node("Relu", ["t"], ["y"], name="relu")],
         [vi("x", TensorProto.FLOAT, [1, 3, 8, 8])], [vi("y", TensorProto.FLOAT, [1, 4, 8, 8])],
         [numpy_helper.from_array(f32(4, 3, 3, 3), "w"),
          numpy_helper.from_array(f32(4), "bias")],
         "flops_conv")


if __name__ == "__main__":
    main()
