# Writes tests/index/dyn_relu.onnx: y = Relu(x) for x of shape [N, 8] with N symbolic, so
# that `kiln compile --shape x=Nx8` sets the loop extents (tests/index/check.sh).
# usage: /usr/bin/python3 make_index.py
import onnx
from onnx import TensorProto, helper

x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 8])
g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "dyn_relu", [x], [y])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="kiln tests")
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, "dyn_relu.onnx")
