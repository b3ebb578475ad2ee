# tests/pwstride: a strided 1x1 convolution (1024 -> 64, 14x14 -> 7x7, bias, Relu) whose
# input (800 KB) passes half of a 1 MB L2 and whose 49 pixels leave 15 of the packed
# form's 64 lanes empty (ResNet-50's layer4 downsample in small): packed on
# x86-64-avx512, in the convolution tiles on x86-64-zen4 (passes/tile.c
# pw_strided_packs). Reference outputs from numpy in float64.
# usage: /usr/bin/python3 make_pwstride.py  (writes model.onnx and test_data_set_0/)
import os
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(16)
x = rng.uniform(-1, 1, (1, 1024, 14, 14)).astype(np.float32)
w = (rng.standard_normal((64, 1024, 1, 1)) / 32).astype(np.float32)
b = rng.uniform(-0.5, 0.5, 64).astype(np.float32)
g = helper.make_graph(
    [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="ds", strides=[2, 2], kernel_shape=[1, 1]),
     helper.make_node("Relu", ["c"], ["y"], name="relu")], "pwstride",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1024, 14, 14])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64, 7, 7])],
    [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), "model.onnx")
xs = x[:, :, ::2, ::2].astype(np.float64)
y = np.einsum("mc,nchw->nmhw", w[:, :, 0, 0].astype(np.float64), xs) + b[None, :, None, None]
y = np.maximum(y, 0).astype(np.float32)
os.makedirs("test_data_set_0", exist_ok=True)
for name, a, f in (("x", x, "input_0.pb"), ("y", y, "output_0.pb")):
    with open(os.path.join("test_data_set_0", f), "wb") as fh:
        fh.write(numpy_helper.from_array(a, name).SerializeToString())
