#!/usr/bin/python3
"""Writes the eight benchmark models of bench/run.sh (issue #16) to a folder, as ONNX
with random weights (weights=None: nothing is downloaded; latency does not depend on
the weight values), batch 1:

  lenet5        LeNet-5 (ReLU, max pooling), 1x1x28x28            opset 13
  mlp           MLP 784-512-256-10 (ReLU), 1x784                   opset 13
  squeezenet    torchvision SqueezeNet 1.1, 1x3x224x224            opset 13
  mobilenetv2   torchvision MobileNetV2, 1x3x224x224               opset 13
  efficientnet  torchvision EfficientNet-B0, 1x3x224x224           opset 13
  bert          BERT-style encoder, 4 layers, hidden 256, seq 128  opset 17 (bench/make_bert.py)
  resnet18      torchvision ResNet-18, 1x3x224x224                 opset 13
  resnet50      torchvision ResNet-50, 1x3x224x224                 opset 13

The builders take width and depth parameters: tests/bench_models/make_bench_models.py
builds reduced versions of the same architectures from them for the correctness tests.

usage: /usr/bin/python3 bench/make_models.py OUT_DIR [NAME...]   (default: all eight)
Needs Debian's python3-torch and python3-torchvision (/usr/bin/python3). Existing
files are kept (delete one to rebuild it)."""
import os
import sys

import torch
import torchvision
from torch import nn
from torchvision.models import efficientnet as tv_effnet
from torchvision.models import resnet as tv_resnet
from torchvision.models import squeezenet as tv_squeeze

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_bert  # noqa: E402

NAMES = ["lenet5", "mlp", "squeezenet", "mobilenetv2", "efficientnet", "bert", "resnet18",
         "resnet50"]


def lenet5(c1=6, c2=16, f1=120, f2=84, classes=10):
    """LeNet-5 on 28x28 (conv 5x5 padded to keep 28, pool, conv 5x5, pool, 3 Gemms)."""
    return nn.Sequential(
        nn.Conv2d(1, c1, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(c1, c2, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
        nn.Linear(c2 * 5 * 5, f1), nn.ReLU(), nn.Linear(f1, f2), nn.ReLU(),
        nn.Linear(f2, classes))


def mlp(widths=(784, 512, 256, 10)):
    layers = []
    for i in range(len(widths) - 1):
        layers.append(nn.Linear(widths[i], widths[i + 1]))
        if i + 2 < len(widths):
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class SqueezeNet11(nn.Module):
    """torchvision's SqueezeNet 1.1 with every channel count divided by `div`."""

    def __init__(self, div=1, classes=1000):
        super().__init__()

        def c(n):
            return max(1, n // div)

        def fire(i, s, e):
            return tv_squeeze.Fire(c(i), c(s), c(e), c(e))

        self.features = nn.Sequential(
            nn.Conv2d(3, c(64), 3, stride=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(3, 2, ceil_mode=True),
            fire(64, 16, 64), fire(128, 16, 64),
            nn.MaxPool2d(3, 2, ceil_mode=True),
            fire(128, 32, 128), fire(256, 32, 128),
            nn.MaxPool2d(3, 2, ceil_mode=True),
            fire(256, 48, 192), fire(384, 48, 192), fire(384, 64, 256), fire(512, 64, 256))
        self.classifier = nn.Sequential(nn.Dropout(0.5), nn.Conv2d(c(512), classes, 1),
                                        nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d(1))

    def forward(self, x):
        return torch.flatten(self.classifier(self.features(x)), 1)


def squeezenet(div=1, classes=1000):
    if div == 1 and classes == 1000:
        return torchvision.models.squeezenet1_1(weights=None)
    return SqueezeNet11(div, classes)


def mobilenetv2(width=1.0, setting=None, last=None, classes=1000):
    """torchvision's MobileNetV2; `setting` its inverted-residual table (t, c, n, s),
    `last` replaces the final 1x1 convolution's 1280 channels."""
    m = torchvision.models.MobileNetV2(num_classes=classes, width_mult=width,
                                       inverted_residual_setting=setting)
    if last is not None:
        cin = m.features[-1][0].in_channels
        m.features[-1] = torchvision.ops.Conv2dNormActivation(cin, last, kernel_size=1,
                                                              activation_layer=nn.ReLU6)
        m.classifier[-1] = nn.Linear(last, classes)
    return m


def efficientnet(width=1.0, depth=1.0, classes=1000):
    """torchvision's EfficientNet-B0 (width and depth multipliers 1.0), or the same
    architecture with other multipliers."""
    if width == 1.0 and depth == 1.0 and classes == 1000:
        return torchvision.models.efficientnet_b0(weights=None)
    setting, last = tv_effnet._efficientnet_conf("efficientnet_b0", width_mult=width,
                                                 depth_mult=depth)
    return tv_effnet.EfficientNet(setting, 0.2, num_classes=classes, last_channel=last)


class ResNet(tv_resnet.ResNet):
    """torchvision's ResNet with the stem's width `w` instead of 64 (stages w, 2w, 4w,
    8w): the same blocks (BasicBlock, Bottleneck) and forward."""

    def __init__(self, block, layers, w=64, classes=1000):
        nn.Module.__init__(self)
        self._norm_layer = nn.BatchNorm2d
        self.inplanes, self.dilation, self.groups, self.base_width = w, 1, 1, 64
        self.conv1 = nn.Conv2d(3, w, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(w)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, w, layers[0])
        self.layer2 = self._make_layer(block, 2 * w, layers[1], stride=2)
        self.layer3 = self._make_layer(block, 4 * w, layers[2], stride=2)
        self.layer4 = self._make_layer(block, 8 * w, layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(8 * w * block.expansion, classes)


def resnet18(w=64, classes=1000):
    if w == 64 and classes == 1000:
        return torchvision.models.resnet18(weights=None)
    return ResNet(tv_resnet.BasicBlock, [2, 2, 2, 2], w, classes)


def resnet50(w=64, classes=1000):
    if w == 64 and classes == 1000:
        return torchvision.models.resnet50(weights=None)
    return ResNet(tv_resnet.Bottleneck, [3, 4, 6, 3], w, classes)


def image(size=224):
    return torch.randn(1, 3, size, size)


# name -> (model builder, example input, input name, output name, opset)
FULL = {
    "lenet5": (lambda: lenet5(), lambda: torch.randn(1, 1, 28, 28), "input", "logits", 13),
    "mlp": (lambda: mlp(), lambda: torch.randn(1, 784), "input", "logits", 13),
    "squeezenet": (lambda: squeezenet(), image, "input", "logits", 13),
    "mobilenetv2": (lambda: mobilenetv2(), image, "input", "logits", 13),
    "efficientnet": (lambda: efficientnet(), image, "input", "logits", 13),
    "bert": (lambda: make_bert.encoder(), lambda: torch.randn(1, 128, 256), "x", "y", 17),
    "resnet18": (lambda: resnet18(), image, "input", "logits", 13),
    "resnet50": (lambda: resnet50(), image, "input", "logits", 13),
}


def export(model, x, path, in_name, out_name, opset):
    """Exports model (in eval mode) for input x to path, through a temporary file so an
    interrupted export leaves nothing behind."""
    model.eval()
    tmp = path + ".tmp"
    # BERT: with gradients enabled torch takes the composite attention path (its fused
    # fast path has no ONNX export); the others do not care
    torch.onnx.export(model, x, tmp, opset_version=opset, input_names=[in_name],
                      output_names=[out_name], do_constant_folding=True)
    os.replace(tmp, path)


def main():
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    names = sys.argv[2:] or NAMES
    for n in names:
        if n not in FULL:
            sys.exit(f"make_models.py: unknown model '{n}' (models: {' '.join(NAMES)})")
    os.makedirs(out_dir, exist_ok=True)
    for n in names:
        path = os.path.join(out_dir, n + ".onnx")
        if os.path.exists(path):
            continue
        build, inp, in_name, out_name, opset = FULL[n]
        torch.manual_seed(0)
        export(build(), inp(), path, in_name, out_name, opset)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
