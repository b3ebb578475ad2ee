#!/usr/bin/python3
"""Writes the microcontroller benchmark models of issue #13 to OUT_DIR/<name>.onnx (opset 13,
input "input", output "output", random weights and batch-norm statistics) with one random
input each (OUT_DIR/<name>_in.npy):

  kws_dscnn     DS-CNN keyword spotting, 1x1x49x10 (MLPerf Tiny; examples/firmware's model)
  vww_mbv1_025  MobileNetV1 x0.25, 1x3x96x96, 2 classes (MLPerf Tiny visual wake words)
  ic_resnet8    ResNet-8, 1x3x32x32, 10 classes (MLPerf Tiny image classification)
  ad_fcae       FC autoencoder 640-128-128-128-128-8-128-128-128-128-640 (MLPerf Tiny AD)
  mbv2_035_96   torchvision MobileNetV2 x0.35, 1x3x96x96, 2 classes (10.7 M multiply-adds)

usage: /usr/bin/python3 bench/make_tiny_models.py OUT_DIR [name ...]
Needs Debian's python3-torch and python3-torchvision. /work/shared/fw-compare-style harnesses
read OUT_DIR (MODEL_DIR/fw)."""
import os
import sys

import numpy as np
import torch
import torchvision
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples",
                                "firmware"))
from make_model import DSCNN, randomize_bn  # noqa: E402


def conv_bn(cin, cout, k=3, s=1, groups=1):
    return [nn.Conv2d(cin, cout, k, s, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout),
            nn.ReLU()]


class MobileNetV1(nn.Module):
    def __init__(self, alpha=0.25, classes=2):
        super().__init__()
        c = lambda n: int(n * alpha)  # noqa: E731
        cfg = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2)] + [(512, 1)] * 5 + \
            [(1024, 2), (1024, 1)]
        layers, cin = conv_bn(3, c(32), 3, 2), c(32)
        for cout, s in cfg:
            layers += conv_bn(cin, cin, 3, s, groups=cin) + conv_bn(cin, c(cout), 1)
            cin = c(cout)
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(self.features(x), 1), 1))


class Block(nn.Module):
    def __init__(self, cin, cout, s):
        super().__init__()
        self.body = nn.Sequential(*conv_bn(cin, cout, 3, s), nn.Conv2d(cout, cout, 3, 1, 1,
                                  bias=False), nn.BatchNorm2d(cout))
        self.short = nn.Conv2d(cin, cout, 1, s) if s != 1 or cin != cout else nn.Identity()

    def forward(self, x):
        return torch.relu(self.body(x) + self.short(x))


class ResNet8(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(*conv_bn(3, 16))
        self.blocks = nn.Sequential(Block(16, 16, 1), Block(16, 32, 2), Block(32, 64, 2))
        self.fc = nn.Linear(64, classes)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


class FCAE(nn.Module):
    def __init__(self):
        super().__init__()
        dims = [640, 128, 128, 128, 128, 8, 128, 128, 128, 128]
        layers = []
        for a, b in zip(dims, dims[1:]):
            layers += [nn.Linear(a, b), nn.BatchNorm1d(b), nn.ReLU()]
        self.body = nn.Sequential(*layers, nn.Linear(128, 640))

    def forward(self, x):
        return self.body(x)


MODELS = {
    "kws_dscnn": (DSCNN, (1, 1, 49, 10)),
    "vww_mbv1_025": (MobileNetV1, (1, 3, 96, 96)),
    "ic_resnet8": (ResNet8, (1, 3, 32, 32)),
    "ad_fcae": (FCAE, (1, 640)),
    "mbv2_035_96": (lambda: torchvision.models.mobilenet_v2(weights=None, width_mult=0.35,
                                                        num_classes=2),
                    (1, 3, 96, 96)),
}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name in sys.argv[2:] or MODELS:
        make, shape = MODELS[name]
        gen = torch.Generator().manual_seed(13)
        torch.manual_seed(13)
        model = make().eval()
        with torch.no_grad():
            randomize_bn(model, gen)
            for m in model.modules():
                if isinstance(m, nn.BatchNorm1d):
                    m.running_var.copy_(torch.rand(m.num_features, generator=gen) * 0.5 + 0.75)
        x = torch.randn(*shape, generator=gen)
        path = os.path.join(out, name + ".onnx")
        with torch.no_grad():
            torch.onnx.export(model, x, path + ".tmp", opset_version=13, input_names=["input"],
                              output_names=["output"], do_constant_folding=True)
        os.replace(path + ".tmp", path)
        np.save(os.path.join(out, name + "_in.npy"), x.numpy().astype(np.float32))
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
