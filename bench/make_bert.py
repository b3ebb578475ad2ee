#!/usr/bin/python3
"""Writes the BERT-style encoder benchmark model: torch's nn.TransformerEncoder with
4 layers, hidden 256, 4 heads, feed-forward 1024, GELU, batch 1, sequence 128, random
weights, exported at opset 17 (LayerNormalization, Softmax, Erf-form GELU, batched
MatMuls for attention) with one input 'x' [1, 128, 256].

usage: /usr/bin/python3 bench/make_bert.py OUT_DIR [OPSET]
With OPSET (below 17: LayerNorm written out as ReduceMean/Sub/Pow/.../Div/Mul/Add, as
older exporters do, for the norm pass) the file is bert_opsetN.onnx.
Needs Debian's python3-torch (/usr/bin/python3)."""
import os
import sys

import torch


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    opset = int(sys.argv[2]) if len(sys.argv) == 3 else 17
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "bert.onnx" if opset == 17 else f"bert_opset{opset}.onnx")
    if os.path.exists(path):
        return
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(256, 4, dim_feedforward=1024, dropout=0.0,
                                             activation="gelu", batch_first=True)
    model = torch.nn.TransformerEncoder(layer, 4, enable_nested_tensor=False).eval()
    x = torch.randn(1, 128, 256)
    tmp = path + ".tmp"
    # with gradients enabled torch takes the composite path (its fused fast path has
    # no ONNX export)
    torch.onnx.export(model, x, tmp, opset_version=opset, input_names=["x"], output_names=["y"],
                      do_constant_folding=True)
    os.replace(tmp, path)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
