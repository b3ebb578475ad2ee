#!/usr/bin/python3
"""Writes the small models tests/models/messages.sh runs kiln on (expected messages are
in that script): a data-dependent shape (NonZero) reaching an output through a chain of
nodes, an input dim left unfixed, and value_info that contradicts shape inference."""
import os

import onnx
from onnx import TensorProto as T, helper

HERE = os.path.dirname(os.path.abspath(__file__))


def save(name, nodes, inputs, outputs, value_info=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, value_info=list(value_info))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, os.path.join(HERE, name))


save("nonzero_chain.onnx",
     [helper.make_node("NonZero", ["x"], ["nz"], name="nz"),
      helper.make_node("Transpose", ["nz"], ["t"], name="tr"),
      helper.make_node("Cast", ["t"], ["c"], to=T.FLOAT, name="cast"),
      helper.make_node("Relu", ["c"], ["y"], name="relu")],
     [helper.make_tensor_value_info("x", T.FLOAT, [3, 4])],
     [helper.make_tensor_value_info("y", T.FLOAT, None)])
save("unfixed_dim.onnx",
     [helper.make_node("Relu", ["x"], ["a"], name="r1"),
      helper.make_node("Sigmoid", ["a"], ["y"], name="s1")],
     [helper.make_tensor_value_info("x", T.FLOAT, ["N", 4])],
     [helper.make_tensor_value_info("y", T.FLOAT, None)])
# value_info says a is [2, 3] (it is [2, 4]); y's declared dtype is int64 (it is float);
# b's value_info agrees, with a symbolic dim
save("bad_value_info.onnx",
     [helper.make_node("Relu", ["x"], ["a"], name="r1"),
      helper.make_node("Sigmoid", ["a"], ["b"], name="s1"),
      helper.make_node("Neg", ["b"], ["y"], name="n1")],
     [helper.make_tensor_value_info("x", T.FLOAT, [2, 4])],
     [helper.make_tensor_value_info("y", T.INT64, [2, 4])],
     [helper.make_tensor_value_info("a", T.FLOAT, [2, 3]),
      helper.make_tensor_value_info("b", T.FLOAT, ["B", 4])])
