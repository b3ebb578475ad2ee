#!/usr/bin/python3
"""Writes three ONNX backend-test folders (model.onnx, test_data_set_0) of one network,
Conv(w) -> Relu -> Conv(w) -> Relu -> Flatten -> Gemm(g) -> Relu -> MatMul(m) -> Relu ->
MatMul(m), whose convolution and matrix weights are used twice:

  shared/    each weight is one initializer read by both nodes
  copies/    two initializers with equal values
  distinct/  two initializers with different values

Outputs computed with numpy from the operator definitions. tests/shared/check.sh checks
that kiln emits a weight used twice once. usage: /usr/bin/python3 make_shared.py"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def conv(x, w):  # NCHW, stride 1, pads 1, no bias
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    y = np.zeros((n, m, h, wd), np.float64)
    for i in range(kh):
        for j in range(kw):
            y += np.einsum("nchw,mc->nmhw", xp[:, :, i:i + h, j:j + wd], w[:, :, i, j])
    return y


def write(folder, cw2, mw2, rng_in):
    here = os.path.dirname(os.path.abspath(__file__))
    d = os.path.join(here, folder)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    inits = [numpy_helper.from_array(CW, "cw"), numpy_helper.from_array(G, "g"),
             numpy_helper.from_array(GB, "gb"), numpy_helper.from_array(MW, "mw")]
    cw_b, mw_b = "cw", "mw"
    if cw2 is not None:
        inits += [numpy_helper.from_array(cw2, "cw2"), numpy_helper.from_array(mw2, "mw2")]
        cw_b, mw_b = "cw2", "mw2"
    nodes = [helper.make_node("Conv", ["x", "cw"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", cw_b], ["c2"], pads=[1, 1, 1, 1], name="conv2"),
             helper.make_node("Relu", ["c2"], ["r2"]),
             helper.make_node("Flatten", ["r2"], ["f"]),
             helper.make_node("Gemm", ["f", "g", "gb"], ["h"], name="gemm"),
             helper.make_node("Relu", ["h"], ["r3"]),
             helper.make_node("MatMul", ["r3", "mw"], ["m1"], name="mm1"),
             helper.make_node("Relu", ["m1"], ["r4"]),
             helper.make_node("MatMul", ["r4", mw_b], ["y"], name="mm2")]
    g = helper.make_graph(nodes, "shared_weights",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 6, 6])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 20])], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]),
              os.path.join(d, "model.onnx"))
    x = rng_in.standard_normal((1, 8, 6, 6)).astype(np.float32)
    c2w = CW if cw2 is None else cw2
    m2w = MW if mw2 is None else mw2
    r = np.maximum(conv(np.maximum(conv(x.astype(np.float64), CW), 0), c2w), 0)
    h = np.maximum(r.reshape(1, -1) @ G + GB, 0)
    y = np.maximum(h @ MW, 0) @ m2w
    onnx.save_tensor(numpy_helper.from_array(x, "x"), os.path.join(d, "test_data_set_0", "input_0.pb"))
    onnx.save_tensor(numpy_helper.from_array(y.astype(np.float32), "y"),
                     os.path.join(d, "test_data_set_0", "output_0.pb"))


rng = np.random.default_rng(13)
CW = (rng.standard_normal((8, 8, 3, 3)) * 0.3).astype(np.float32)
G = (rng.standard_normal((288, 20)) * 0.1).astype(np.float32)
GB = rng.standard_normal(20).astype(np.float32)
MW = (rng.standard_normal((20, 20)) * 0.3).astype(np.float32)
write("shared", None, None, np.random.default_rng(1))
write("copies", CW.copy(), MW.copy(), np.random.default_rng(1))
write("distinct", (rng.standard_normal((8, 8, 3, 3)) * 0.3).astype(np.float32),
      (rng.standard_normal((20, 20)) * 0.3).astype(np.float32), np.random.default_rng(1))
