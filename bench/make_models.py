#!/usr/bin/python3
"""Writes the benchmark models to a folder: torchvision's ResNet-18 and ResNet-50
with random weights (weights=None: nothing is downloaded), exported to ONNX at
opset 13 for one 3x224x224 image. Latency does not depend on the weight values.

usage: /usr/bin/python3 bench/make_models.py OUT_DIR [resnet18 resnet50 ...]
Needs Debian's python3-torch and python3-torchvision (/usr/bin/python3)."""
import os
import sys

import torch
import torchvision


def export(name, out_dir):
    path = os.path.join(out_dir, name + ".onnx")
    if os.path.exists(path):
        return
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    x = torch.randn(1, 3, 224, 224)
    tmp = path + ".tmp"
    with torch.no_grad():
        torch.onnx.export(model, x, tmp, opset_version=13, input_names=["input"],
                          output_names=["logits"], do_constant_folding=True)
    os.replace(tmp, path)
    print(f"wrote {path}")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for name in sys.argv[2:] or ["resnet18", "resnet50"]:
        export(name, out_dir)


if __name__ == "__main__":
    main()
