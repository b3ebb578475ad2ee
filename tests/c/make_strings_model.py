# Writes tests/c/strings.onnx, the string model of tests/c/compile.sh (checked in; run
# with Debian's /usr/bin/python3 to regenerate): inputs x: float[3], s: string[2];
# outputs xs = Cast(x, to=STRING), su = StringNormalizer(s, UPPER), sf = Cast(s, to=FLOAT).
import os
from onnx import TensorProto, helper, save

g = helper.make_graph(
    [
        helper.make_node("Cast", ["x"], ["xs"], to=TensorProto.STRING),
        helper.make_node("StringNormalizer", ["s"], ["su"], case_change_action="UPPER"),
        helper.make_node("Cast", ["s"], ["sf"], to=TensorProto.FLOAT),
    ],
    "strings",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3]),
     helper.make_tensor_value_info("s", TensorProto.STRING, [2])],
    [helper.make_tensor_value_info("xs", TensorProto.STRING, [3]),
     helper.make_tensor_value_info("su", TensorProto.STRING, [2]),
     helper.make_tensor_value_info("sf", TensorProto.FLOAT, [2])],
)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="kiln-tests")
save(m, os.path.join(os.path.dirname(os.path.abspath(__file__)), "strings.onnx"))
