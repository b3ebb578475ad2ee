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


# float8 and int4 (ONNX data types 17-22, newer than Debian's onnx 1.12, so written by
# number): accepted by the ops that take them (these load and run), refused elsewhere
# naming the node, the value and the type (float8_add); float4 refused by name
def save21(name, nodes, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    onnx.save(m, os.path.join(HERE, name))


FLOAT8E4M3FN, FLOAT8E5M2, UINT4, INT4 = 17, 19, 21, 22
x4 = helper.make_tensor_value_info("x", T.FLOAT, [4])
y4 = helper.make_tensor_value_info("y", T.FLOAT, [4])
save21("float8_cast.onnx",
       [helper.make_node("Cast", ["x"], ["h"], to=FLOAT8E4M3FN, name="to_f8"),
        helper.make_node("Cast", ["h"], ["y"], to=T.FLOAT, name="back")], [x4], [y4])
zp = onnx.TensorProto(name="zp", data_type=INT4, int32_data=[0])
save21("int4_zero_point.onnx",
       [helper.make_node("QuantizeLinear", ["x", "sc", "zp"], ["q"], name="q4"),
        helper.make_node("DequantizeLinear", ["q", "sc", "zp"], ["y"], name="dq4")],
       [x4], [y4], [helper.make_tensor("sc", T.FLOAT, [], [0.5]), zp])
xf8 = helper.make_tensor_value_info("x", T.FLOAT, [4])
xf8.type.tensor_type.elem_type = FLOAT8E5M2
save21("float8_input.onnx", [helper.make_node("Cast", ["x"], ["y"], to=T.FLOAT, name="c")],
       [xf8], [y4])
save21("float8_quantize.onnx",
       [helper.make_node("QuantizeLinear", ["x", "sc"], ["y"], output_dtype=FLOAT8E4M3FN,
                         name="qf8")],
       [x4], [helper.make_tensor_value_info("y", T.UINT8, [4])],
       [helper.make_tensor("sc", T.FLOAT, [], [0.5])])
w = onnx.TensorProto(name="w", data_type=UINT4, dims=[4], raw_data=bytes([0x21, 0x43]))
save21("uint4_initializer.onnx", [helper.make_node("Cast", ["w"], ["y"], to=T.FLOAT, name="c")],
       [], [y4], [w])
xa = helper.make_tensor_value_info("x", FLOAT8E4M3FN, [2])
save21("float8_add.onnx", [helper.make_node("Add", ["x", "x"], ["y"], name="add8")], [xa],
       [helper.make_tensor_value_info("y", FLOAT8E4M3FN, [2])])
FLOAT4E2M1 = 23
save21("float4_cast.onnx", [helper.make_node("Cast", ["x"], ["y"], to=FLOAT4E2M1, name="to_f4")],
       [x4], [helper.make_tensor_value_info("y", FLOAT4E2M1, [4])])
# blocked quantization (opset 21 block_size) whose scale does not have ceil(D / b)
# entries along the axis: refused naming the node and the extents
save21("blocked_scale.onnx",
       [helper.make_node("DequantizeLinear", ["x", "sc"], ["y"], axis=1, block_size=4,
                         name="dqb")],
       [helper.make_tensor_value_info("x", T.UINT8, [2, 10])],
       [helper.make_tensor_value_info("y", T.FLOAT, [2, 10])],
       [helper.make_tensor("sc", T.FLOAT, [2, 2], [0.5, 1, 2, 4])])
