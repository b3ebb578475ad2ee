#!/usr/bin/python3
"""Shows which float16 roundings ONNX Runtime's CPU provider performs (docs/decisions.md,
"float16 roundings"; run by hand, not a test): a float16 graph
Cast(x: f32 -> f16) -> Conv -> Relu -> Conv -> Relu -> Add -> Cast(-> f32) on seeded
random input, run on ONNX Runtime (npm's onnxruntime-node through tests/models/ort_run.js,
graph optimizations disabled), compared with float64 arithmetic on the float16 weights
(torch) under three roundings: the graph's (the input and every node's result rounded to
float16, what kiln computes), none but the final value's, and none at all.

usage: ORT_NODE=/work/ort/node_modules/onnxruntime-node /usr/bin/python3 bench/ort_fp16_casts.py
"""
import json
import os
import subprocess
import tempfile

import numpy as np
import onnx
import torch
from onnx import TensorProto as T
from onnx import helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(3)
x = rng.standard_normal((1, 8, 16, 16)).astype(np.float32)
w = (rng.standard_normal((8, 8, 3, 3)) * 0.2).astype(np.float16)
b = (rng.standard_normal(8) * 0.1).astype(np.float16)
nodes = [helper.make_node("Cast", ["x"], ["xh"], to=T.FLOAT16),
         helper.make_node("Conv", ["xh", "w", "b"], ["c1"], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c1"], ["r1"]),
         helper.make_node("Conv", ["r1", "w", "b"], ["c2"], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c2"], ["r2"]),
         helper.make_node("Add", ["r1", "r2"], ["a"]),
         helper.make_node("Cast", ["a"], ["y"], to=T.FLOAT)]
g = helper.make_graph(nodes, "f16", [helper.make_tensor_value_info("x", T.FLOAT, x.shape)],
                      [helper.make_tensor_value_info("y", T.FLOAT, x.shape)],
                      [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 7

with tempfile.TemporaryDirectory() as d:
    onnx.save(m, os.path.join(d, "f16.onnx"))
    x.tofile(os.path.join(d, "x.bin"))
    man = {"model": os.path.join(d, "f16.onnx"), "opt": "disabled", "out_dir": d,
           "inputs": [{"name": "x", "type": "float32", "dims": list(x.shape),
                       "file": os.path.join(d, "x.bin")}]}
    json.dump(man, open(os.path.join(d, "m.json"), "w"))
    subprocess.run(["node", os.path.join(HERE, "..", "tests", "models", "ort_run.js"),
                    os.path.join(d, "m.json")], check=True)
    ort = np.fromfile(os.path.join(d, "out_0.bin"), np.float32).reshape(x.shape).astype(np.float64)


def conv(a):
    return torch.nn.functional.conv2d(torch.from_numpy(a), torch.from_numpy(w.astype(np.float64)),
                                      torch.from_numpy(b.astype(np.float64)), padding=1).numpy()


def h(a):
    return a.astype(np.float16).astype(np.float64)


x64 = x.astype(np.float64)
r1 = np.maximum(h(conv(h(x64))), 0)
graph = h(r1 + np.maximum(h(conv(r1)), 0))
q1 = np.maximum(conv(x64), 0)
none = q1 + np.maximum(conv(q1), 0)
print("ONNX Runtime's output is float16 values:", bool(np.all(h(ort) == ort)))
for name, ref in (("the graph's roundings (kiln)", graph), ("only the output rounded", h(none)),
                  ("no rounding at all", none)):
    d = np.abs(ort - ref)
    print("%-30s max |ORT - it| %.2e, elements that differ by more than 1e-5: %d of %d"
          % (name, d.max(), int((d > 1e-5).sum()), d.size))
