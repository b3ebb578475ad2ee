"""A small CNN with Relu6 (Clip 0..6) after a convolution, as MobileNetV2 has, for the
post-training quantization test (tests/quant/ptq.sh): Conv 3->8 -> Clip(0, 6) ->
Conv 8->8 -> Relu -> GlobalAveragePool -> Flatten -> Gemm 8->4, random weights (seed
0), and 16 calibration inputs (input [1,3,8,8], stacked on axis 0), the first two
also as test_data_set_0/1/input_0.pb.

    /usr/bin/python3 tests/quant/make_ptq_clip.py
writes tests/quant/ptq_clip/{model.onnx, calib.npy, test_data_set_*/input_0.pb}."""
import os
import sys

import numpy as np
from onnx import helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qref as qr  # noqa: E402

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
    calib = (rng.randn(16, 1, 3, 8, 8) * 2).astype(f)
    qr.write_ptq(OUT, "ptq_clip", nodes, inits, [1, 3, 8, 8], [1, 4], calib, ndata=2)


if __name__ == "__main__":
    main()
