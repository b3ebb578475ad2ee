"""Exports a small transformer encoder (2 layers, d_model 32, 4 heads) from Debian's
torch to examples/transformer/ as an ONNX backend-test folder: model.onnx plus
test_data_set_0/{input_0,output_0}.pb, the output computed by torch (an independent
reference for every kiln backend). Deterministic (fixed seeds).
Run with Debian's Python: /usr/bin/python3 tools/make_transformer_example.py"""
import os

import numpy as np
import onnx
import torch
from onnx import numpy_helper

torch.manual_seed(0)
torch.set_num_threads(1)
out = os.path.join(os.path.dirname(__file__), "..", "examples", "transformer")
os.makedirs(os.path.join(out, "test_data_set_0"), exist_ok=True)

layer = torch.nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, dropout=0.0)
model = torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False).eval()
x = torch.from_numpy(np.random.RandomState(0).randn(10, 2, 32).astype(np.float32))  # (seq, batch, d)
with torch.no_grad():
    y = model(x)
path = os.path.join(out, "model.onnx")
torch.onnx.export(model, x, path, opset_version=13, input_names=["x"], output_names=["y"],
                  do_constant_folding=True)
onnx.checker.check_model(onnx.load(path))
for name, t in (("input_0", x), ("output_0", y)):
    with open(os.path.join(out, "test_data_set_0", name + ".pb"), "wb") as f:
        f.write(numpy_helper.from_array(t.numpy(), "x" if name == "input_0" else "y").SerializeToString())
ops = sorted({n.op_type for n in onnx.load(path).graph.node})
print("ops:", ", ".join(ops))
