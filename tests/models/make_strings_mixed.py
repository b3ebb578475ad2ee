#!/usr/bin/python3
"""Writes tests/models/strings_mixed/: numeric and string operators interleaved, so the
OpenCL backend's host kernels (string ops, run on the host) and device kernels pass
data both ways through the arena (a device result cast to string on the host, a host
result added on the device). The expected outputs are written out by hand below from
the ONNX operator definitions (ONNX Runtime's node runner takes no strings):

  y   = x * 2                          Mul (device)
  ys  = Cast(y, to=string)             numpy's str() of each float32 (host)
  cat = StringConcat(ys, s)            (host)               -> output 'cat'
  f   = Cast(s, to=float)              strtod-style parsing (host)
  z   = f + y                          Add (device)         -> output 'z'
  m   = RegexFullMatch(cat, '-?[0-9.]+') (host)             -> output 'm'

usage: /usr/bin/python3 tests/models/make_strings_mixed.py"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from casegen import HERE, write_case  # noqa: E402

x = np.array([[1.5, -2.0, 0.25], [3.0, 0.0, 10.0]], dtype=np.float32)
s = np.array([["1.5", "-2", "3e1"], ["0.125", "7", "-0.5"]], dtype=object)
# by hand: y = [[3, -4, 0.5], [6, 0, 20]]; str() of each; concatenated with s
cat = np.array([["3.01.5", "-4.0-2", "0.53e1"], ["6.00.125", "0.07", "20.0-0.5"]], dtype=object)
z = np.array([[4.5, -6.0, 30.5], [6.125, 7.0, 19.5]], dtype=np.float32)
m = np.array([[True, False, False], [True, True, False]])
# the same from Python, as a check of the hand-written values
y = x * np.float32(2)
assert (np.vectorize(lambda v: str(np.float32(v)))(y).astype(object) + s == cat).all()
assert (s.astype(np.float32) + y == z).all()

nodes = [
    helper.make_node("Mul", ["x", "two"], ["y"], name="mul"),
    helper.make_node("Cast", ["y"], ["ys"], name="to_string", to=TensorProto.STRING),
    helper.make_node("StringConcat", ["ys", "s"], ["cat"], name="concat"),
    helper.make_node("Cast", ["s"], ["f"], name="to_float", to=TensorProto.FLOAT),
    helper.make_node("Add", ["f", "y"], ["z"], name="add"),
    helper.make_node("RegexFullMatch", ["cat"], ["m"], name="match", pattern="-?[0-9.]+"),
]
g = helper.make_graph(
    nodes, "strings_mixed",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
     helper.make_tensor_value_info("s", TensorProto.STRING, [2, 3])],
    [helper.make_tensor_value_info("cat", TensorProto.STRING, [2, 3]),
     helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 3]),
     helper.make_tensor_value_info("m", TensorProto.BOOL, [2, 3])],
    [numpy_helper.from_array(np.array(2.0, dtype=np.float32), "two")])
model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)],
                          producer_name="kiln-tests")
model.ir_version = 9
write_case(os.path.join(HERE, "strings_mixed"), model, [([x, s], [cat, z, m])])
