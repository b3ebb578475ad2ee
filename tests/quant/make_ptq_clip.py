"""A small CNN with Relu6 (Clip 0..6) after a convolution, as MobileNetV2 has, for the
post-training quantization test (tests/quant/ptq.sh): Conv 3->8 -> Clip(0, 6) ->
Conv 8->8 -> Relu -> GlobalAveragePool -> Flatten -> Gemm 8->4, random weights (seed
0), and 16 calibration inputs (input [1,3,8,8], stacked on axis 0), the first two
also as test_data_set_0/1/input_0.pb.

    /usr/bin/python3 tests/quant/make_ptq_clip.py
writes tests/quant/ptq_clip/{model.onnx, calib.npy, test_data_set_*/input_0.pb}."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ptq_clip")


def main():
    rng = np.random.RandomState(0)
    f = np.float32
    inits = [
        numpy_helper.from_array((rng.randn(8, 3, 3, 3) * 0.5).astype(f), "w1"),
        numpy_helper.from_array((rng.randn(8) * 0.1).astype(f), "b1"),
        numpy_helper.from_array((rng.randn(8, 8, 3, 3) * 0.2).astype(f), "w2"),
        numpy_helper.from_array((rng.randn(8) * 0.1).astype(f), "b2"),
        numpy_helper.from_array((rng.randn(4, 8) * 0.5).astype(f), "w3"),
        numpy_helper.from_array((rng.randn(4) * 0.1).astype(f), "b3"),
        numpy_helper.from_array(np.array(0, f), "lo"),
        numpy_helper.from_array(np.array(6, f), "hi"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], "conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Clip", ["c1", "lo", "hi"], ["r1"], "relu6"),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], "conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"], "relu"),
        helper.make_node("GlobalAveragePool", ["r2"], ["p"], "pool"),
        helper.make_node("Flatten", ["p"], ["fl"], "flatten"),
        helper.make_node("Gemm", ["fl", "w3", "b3"], ["y"], "fc", transB=1),
    ]
    g = helper.make_graph(nodes, "ptq_clip",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="kiln-tests")
    m.ir_version = 7
    onnx.checker.check_model(m)
    os.makedirs(OUT, exist_ok=True)
    onnx.save(m, os.path.join(OUT, "model.onnx"))
    calib = (rng.randn(16, 1, 3, 8, 8) * 2).astype(f)
    np.save(os.path.join(OUT, "calib.npy"), calib)
    for k in range(2):  # the first two samples again, as ONNX test data folders
        d = os.path.join(OUT, "test_data_set_%d" % k)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "input_0.pb"), "wb") as fp:
            fp.write(numpy_helper.from_array(calib[k], "x").SerializeToString())


if __name__ == "__main__":
    main()
