#!/usr/bin/python3
"""Writes a float conv net and the same net quantized (QDQ form, per-channel int8
weights, u8 activations) for comparing kiln's int8 and fp32 latency:

    /usr/bin/python3 bench/make_quant_bench.py DIR
    kiln bench DIR/conv_f32.onnx --threads 1; kiln bench DIR/conv_qdq.onnx --threads 1

Layers: 1x32x56x56 input, 3x3 convs 32->64, 64->64, 64->64 (pad 1, ReLU), 1x1 64->128.
The weights are random; only the speed is of interest."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(3)
LAYERS = [(32, 64, 3), (64, 64, 3), (64, 64, 3), (64, 128, 1)]


def init(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def save(path, nodes, inits, outshape):
    g = helper.make_graph(nodes, "convnet", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, 56, 56])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, outshape)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.checker.check_model(m)
    onnx.save(m, path)


def main(d):
    os.makedirs(d, exist_ok=True)
    N = helper.make_node
    fn, fi, qn, qi = [], [], [], []
    qn.append(N("QuantizeLinear", ["x", "s0", "z0"], ["q0"]))
    qi += [init("s0", np.float32(0.02)), init("z0", np.uint8(128))]
    cur_f, cur_q = "x", "q0"
    for i, (c, m, k) in enumerate(LAYERS):
        w = rng.integers(-127, 128, (m, c, k, k), dtype=np.int8)
        ws = (rng.random(m) * 0.002 + 0.001).astype(np.float32)
        pads = [k // 2] * 4
        relu = i < len(LAYERS) - 1
        fi.append(init(f"w{i}", (w.astype(np.float32) * ws.reshape(m, 1, 1, 1))))
        fn.append(N("Conv", [cur_f, f"w{i}"], [f"c{i}"], pads=pads))
        cur_f = f"c{i}"
        if relu:
            fn.append(N("Relu", [cur_f], [f"r{i}"]))
            cur_f = f"r{i}"
        si = "s0" if i == 0 else f"s{i}"
        zi = "z0" if i == 0 else f"z{i}"
        qn.append(N("DequantizeLinear", [cur_q, si, zi], [f"d{i}"]))
        qn.append(N("DequantizeLinear", [f"wq{i}", f"ws{i}", f"wz{i}"], [f"wd{i}"], axis=0))
        qn.append(N("Conv", [f"d{i}", f"wd{i}"], [f"qc{i}"], pads=pads))
        out = f"qc{i}"
        if relu:
            qn.append(N("Relu", [out], [f"qr{i}"]))
            out = f"qr{i}"
        qn.append(N("QuantizeLinear", [out, f"s{i + 1}", f"z{i + 1}"], [f"q{i + 1}"]))
        qi += [init(f"wq{i}", w), init(f"ws{i}", ws), init(f"wz{i}", np.zeros(m, np.int8)),
               init(f"s{i + 1}", np.float32(0.05)), init(f"z{i + 1}", np.uint8(0 if relu else 128))]
        cur_q = f"q{i + 1}"
    fn.append(N("Identity", [cur_f], ["y"]))
    n = len(LAYERS)
    qn.append(N("DequantizeLinear", [cur_q, f"s{n}", f"z{n}"], ["y"]))
    save(os.path.join(d, "conv_f32.onnx"), fn, fi, [1, 128, 56, 56])
    save(os.path.join(d, "conv_qdq.onnx"), qn, qi, [1, 128, 56, 56])


if __name__ == "__main__":
    main(sys.argv[1])
