"""A small residual CNN for the fixed-point adds of post-training quantization
(tests/quant/ptq.sh, ir/requant.h kn_qadd): Conv 3->8 -> Relu -> Conv 8->8 -> Relu ->
Conv 8->8, plus the first Relu's output (the residual Add) -> Relu -> Conv 8->8 (16
channels' worth of a ResNet block at 8x8), then an Add of two convolutions' outputs
without an activation, GlobalAveragePool -> Flatten -> Gemm 8->4; random weights (seed 0)
and 16 calibration inputs ([16,1,3,8,8]), the first also as test_data_set_0/input_0.pb
(tests/quant/cortex_m4.sh runs it on the M4 against the host's interpreter).

    /usr/bin/python3 tests/quant/make_ptq_add.py
writes tests/quant/ptq_add/{model.onnx, calib.npy, test_data_set_0/input_0.pb}, and
tests/quant/ptq_add_tail (see tail()) and tests/quant/ptq_dw (dw()) the same way."""
import os
import sys

import numpy as np
from onnx import helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qref as qr  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ptq_add")


def main():
    rng = np.random.RandomState(0)
    f = np.float32
    inits = [numpy_helper.from_array((rng.randn(8, 3, 3, 3) * 0.5).astype(f), "w1"),
             numpy_helper.from_array((rng.randn(8) * 0.1).astype(f), "b1")]
    for k in (2, 3, 4, 5):
        inits += [numpy_helper.from_array((rng.randn(8, 8, 3, 3) * 0.2).astype(f), "w%d" % k),
                  numpy_helper.from_array((rng.randn(8) * 0.1).astype(f), "b%d" % k)]
    inits += [numpy_helper.from_array((rng.randn(4, 8) * 0.5).astype(f), "w6"),
              numpy_helper.from_array((rng.randn(4) * 0.1).astype(f), "b6")]
    pad = dict(pads=[1, 1, 1, 1])
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], "conv1", **pad),
        helper.make_node("Relu", ["c1"], ["r1"], "relu1"),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], "conv2", **pad),
        helper.make_node("Relu", ["c2"], ["r2"], "relu2"),
        helper.make_node("Conv", ["r2", "w3", "b3"], ["c3"], "conv3", **pad),
        helper.make_node("Add", ["c3", "r1"], ["s1"], "add1"),
        helper.make_node("Relu", ["s1"], ["r3"], "relu3"),
        helper.make_node("Conv", ["r3", "w4", "b4"], ["c4"], "conv4", **pad),
        helper.make_node("Conv", ["r3", "w5", "b5"], ["c5"], "conv5", **pad),
        helper.make_node("Add", ["c4", "c5"], ["s2"], "add2"),
        helper.make_node("Conv", ["s2", "w2", "b2"], ["c6"], "conv6", **pad),
        helper.make_node("GlobalAveragePool", ["c6"], ["p"], "pool"),
        helper.make_node("Flatten", ["p"], ["fl"], "flatten"),
        helper.make_node("Gemm", ["fl", "w6", "b6"], ["y"], "fc", transB=1),
    ]
    calib = (rng.randn(16, 1, 3, 8, 8) * 2).astype(f)
    qr.write_ptq(OUT, "ptq_add", nodes, inits, [1, 3, 8, 8], [1, 4], calib)


def tail():
    """tests/quant/ptq_add_tail: Conv 3->5 -> Relu -> Conv 5->5, plus the Relu's output
    (a residual Add of 5 x 7 x 7 = 245 elements: Helium's 4-lane adds and a scalar tail of
    one, ir/lower/quant.c qadd_fixed_vec) -> Relu -> Conv 5->5 -> GlobalAveragePool ->
    Flatten -> Gemm 5->3; random weights (seed 1), 16 calibration inputs ([16,1,3,7,7]), the first also as
    test_data_set_0/input_0.pb."""
    rng = np.random.RandomState(1)
    f = np.float32
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ptq_add_tail")
    inits = [numpy_helper.from_array((rng.randn(5, 3, 3, 3) * 0.5).astype(f), "w1"),
             numpy_helper.from_array((rng.randn(5) * 0.1).astype(f), "b1"),
             numpy_helper.from_array((rng.randn(5, 5, 3, 3) * 0.3).astype(f), "w2"),
             numpy_helper.from_array((rng.randn(5) * 0.1).astype(f), "b2"),
             numpy_helper.from_array((rng.randn(3, 5) * 0.5).astype(f), "w3"),
             numpy_helper.from_array((rng.randn(3) * 0.1).astype(f), "b3"),
             numpy_helper.from_array((rng.randn(5, 5, 3, 3) * 0.3).astype(f), "w4"),
             numpy_helper.from_array((rng.randn(5) * 0.1).astype(f), "b4")]
    pad = dict(pads=[1, 1, 1, 1])
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], "conv1", **pad),
        helper.make_node("Relu", ["c1"], ["r1"], "relu1"),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], "conv2", **pad),
        helper.make_node("Add", ["c2", "r1"], ["s1"], "add1"),
        helper.make_node("Relu", ["s1"], ["r2"], "relu2"),
        helper.make_node("Conv", ["r2", "w4", "b4"], ["c3"], "conv3", **pad),
        helper.make_node("GlobalAveragePool", ["c3"], ["p"], "pool"),
        helper.make_node("Flatten", ["p"], ["fl"], "flatten"),
        helper.make_node("Gemm", ["fl", "w3", "b3"], ["y"], "fc", transB=1),
    ]
    calib = (rng.randn(16, 1, 3, 7, 7) * 2).astype(f)
    qr.write_ptq(out, "ptq_add_tail", nodes, inits, [1, 3, 7, 7], [1, 3], calib)


def dw():
    """tests/quant/ptq_dw: Conv 3->8 -> Relu -> two depthwise 3x3 convolutions of 8
    channels at 12x12 (no activation: their outputs clamped to the whole u8 range, on the
    M55 in Helium's vector tiles over the padded plane, passes/depthwise.c) ->
    GlobalAveragePool -> Flatten -> Gemm 8->4; random weights (seed 2), 16 calibration
    inputs ([16,1,3,12,12]); test_data_set_0/input_0.pb is 3 times the first, so that
    both ends of the clamps are reached."""
    rng = np.random.RandomState(2)
    f = np.float32
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ptq_dw")
    inits = [numpy_helper.from_array((rng.randn(8, 3, 3, 3) * 0.5).astype(f), "w1"),
             numpy_helper.from_array((rng.randn(8) * 0.1).astype(f), "b1"),
             numpy_helper.from_array((rng.randn(8, 1, 3, 3) * 0.5).astype(f), "w2"),
             numpy_helper.from_array((rng.randn(8) * 0.1).astype(f), "b2"),
             numpy_helper.from_array((rng.randn(8, 1, 3, 3) * 0.5).astype(f), "w3"),
             numpy_helper.from_array((rng.randn(8) * 0.1).astype(f), "b3"),
             numpy_helper.from_array((rng.randn(4, 8) * 0.5).astype(f), "w4"),
             numpy_helper.from_array((rng.randn(4) * 0.1).astype(f), "b4")]
    pad = dict(pads=[1, 1, 1, 1])
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], "conv1", **pad),
        helper.make_node("Relu", ["c1"], ["r1"], "relu1"),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], "dw1", group=8, **pad),
        helper.make_node("Conv", ["c2", "w3", "b3"], ["c3"], "dw2", group=8, **pad),
        helper.make_node("GlobalAveragePool", ["c3"], ["p"], "pool"),
        helper.make_node("Flatten", ["p"], ["fl"], "flatten"),
        helper.make_node("Gemm", ["fl", "w4", "b4"], ["y"], "fc", transB=1),
    ]
    calib = (rng.randn(16, 1, 3, 12, 12) * 2).astype(f)
    qr.write_ptq(out, "ptq_dw", nodes, inits, [1, 3, 12, 12], [1, 4], calib)
    with open(os.path.join(out, "test_data_set_0", "input_0.pb"), "wb") as fp:
        fp.write(numpy_helper.from_array(calib[0] * 3, "x").SerializeToString())


if __name__ == "__main__":
    main()
    tail()
    dw()
