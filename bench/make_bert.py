#!/usr/bin/python3
"""Writes the BERT-style encoder benchmark model: torch's nn.TransformerEncoder with
4 layers, hidden 256, 4 heads, feed-forward 1024, GELU, batch 1, sequence 128, random
weights, exported at opset 17 (LayerNormalization, Softmax, Erf-form GELU, batched
MatMuls for attention) with one input 'x' [1, 128, 256] and one output 'y'.
encoder() builds it with other sizes (tests/bench_models/make_bench_models.py).

usage: /usr/bin/python3 bench/make_bert.py OUT_DIR [OPSET]
With OPSET (below 17: LayerNorm written out as ReduceMean/Sub/Pow/.../Div/Mul/Add, as
older exporters do, for the norm pass) the file is bert_opsetN.onnx.
Needs Debian's python3-torch (/usr/bin/python3)."""
import os
import sys

import torch


def encoder(layers=4, hidden=256, heads=4, ff=1024):
    layer = torch.nn.TransformerEncoderLayer(hidden, heads, dim_feedforward=ff, dropout=0.0,
                                             activation="gelu", batch_first=True)
    return torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False).eval()


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
    model = encoder()
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
