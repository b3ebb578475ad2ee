#!/usr/bin/python3
"""Writes tests/models/tv_*/ (and nhwc_concat/, nhwc_edges/): torchvision model families, reduced to keep the tests fast
(width multipliers, fewer stages, small images, 10 classes), with random weights and
random BatchNorm statistics (seeded; weights=None: nothing is downloaded), exported by
torch.onnx and written as backend-style test folders. The reference outputs are torch's,
computed in float64 from the same weights (casegen.write_case). CTest runs every folder
of tests/models through the interpreter, C, LLVM and OpenCL (models_*).

usage: /usr/bin/python3 tests/models/make_torchvision.py [NAME...]   (default: all)
Needs Debian's python3-torch and python3-torchvision."""
import io
import os
import sys

import numpy as np
import onnx
import torch
import torchvision
from torchvision.models import shufflenetv2
from torchvision.models.vision_transformer import VisionTransformer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from casegen import HERE, write_case  # noqa: E402


def randomize_bn(model, gen):
    """BatchNorm running statistics and affine parameters drawn at random, so the folded
    batch norms are not identities; Linear layers get torch's default initialization
    (torchvision zeroes ViT's head and draws MobileNet's with std 0.01, which would make
    logits too small to compare)."""
    for m in model.modules():
        if isinstance(m, torch.nn.Linear):
            m.reset_parameters()
        if isinstance(m, torch.nn.BatchNorm2d):
            c = m.num_features
            m.running_mean.copy_(torch.randn(c, generator=gen) * 0.1)
            m.running_var.copy_(torch.rand(c, generator=gen) * 0.5 + 0.75)
            m.weight.data.copy_(torch.rand(c, generator=gen) * 0.5 + 0.75)
            m.bias.data.copy_(torch.randn(c, generator=gen) * 0.1)


class NHWCNet(torch.nn.Module):
    """The layout of a model converted from TensorFlow/TFLite: NHWC input and output,
    each convolution wrapped in permutes (Transposes), two branches concatenated along
    the channel axis in NHWC, then a residual Add and a ReLU in NHWC."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.b = torch.nn.Conv2d(3, 4, 1)
        self.c = torch.nn.Conv2d(12, 6, 3, padding=1, stride=2)
        self.d = torch.nn.Conv2d(6, 6, 1)

    @staticmethod
    def nchw(f, x):  # NHWC -> f in NCHW -> NHWC
        return f(x.permute(0, 3, 1, 2)).permute(0, 2, 3, 1)

    def forward(self, x):
        y = torch.cat([torch.relu(self.nchw(self.a, x)), self.nchw(self.b, x) * 0.5], dim=3)
        z = self.nchw(self.c, y)
        return torch.relu(self.nchw(self.d, z) + z)


class NHWCEdges(torch.nn.Module):
    """The Transposes at the edges of an NHWC model, folded by passes/layout.c into the
    convolutions next to them: the input (batch 2) read by a strided padded Conv, a
    grouped Conv and a MaxPool (which keeps its Transpose); results written channels-last
    by a 1x1 Conv with a residual Add in its epilogue, by the grouped Conv, and by a
    depthwise Conv (not folded), then flattened and concatenated."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(4, 16, 3, padding=1, stride=2)
        self.g = torch.nn.Conv2d(4, 8, 3, padding=1, groups=2)
        self.o = torch.nn.Conv2d(16, 16, 1)
        self.dw = torch.nn.Conv2d(4, 4, 3, padding=1, groups=4)

    def forward(self, x):
        t = x.permute(0, 3, 1, 2)
        a = torch.relu(self.a(t))
        o = (self.o(a) + a).permute(0, 2, 3, 1)
        g = self.g(t).permute(0, 2, 3, 1)
        d = self.dw(torch.nn.functional.max_pool2d(t, 2)).permute(0, 2, 3, 1)
        return torch.cat([o.flatten(1), g.flatten(1), d.flatten(1)], 1)


# name -> (constructor, input shape, opset): what each family exercises
FAMILIES = {
    # inverted residuals, depthwise convolutions, ReLU6 (Clip), global pooling, Gemm
    "tv_mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(
        weights=None, width_mult=0.25, num_classes=10), (1, 3, 64, 64), 13),
    # squeeze-and-excitation (adaptive pooling, Hardsigmoid, Mul), Hardswish
    "tv_mobilenet_v3_small": (lambda: torchvision.models.mobilenet_v3_small(
        weights=None, width_mult=0.25, num_classes=10), (1, 3, 64, 64), 13),
    # channel split (Split/Slice), channel shuffle (Reshape, Transpose), MaxPool
    "tv_shufflenet_v2": (lambda: shufflenetv2.ShuffleNetV2(
        [1, 1, 1], [8, 16, 32, 64, 128], num_classes=10), (1, 3, 64, 64), 13),
    # patch embedding, LayerNormalization (opset 17), multi-head attention, GELU
    "tv_vit": (lambda: VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2,
                                         hidden_dim=32, mlp_dim=64, num_classes=10),
               (1, 3, 32, 32), 17),
    # a TF/TFLite-style NHWC graph (not torchvision): passes/transpose.c cancels the
    # Transpose pairs, through the Concat too, leaving the two at the edges
    "nhwc_concat": (NHWCNet, (1, 10, 12, 3), 13),
    # passes/layout.c: the edge Transposes folded into the convolutions (channels-last)
    "nhwc_edges": (NHWCEdges, (2, 9, 11, 4), 13),
}


def make(name):
    ctor, shape, opset = FAMILIES[name]
    torch.manual_seed(15)
    gen = torch.Generator().manual_seed(15)
    model = ctor().eval()
    with torch.no_grad():
        randomize_bn(model, gen)
    x = torch.randn(*shape, generator=gen)
    buf = io.BytesIO()
    # exported with gradients enabled: torch 1.13's fused attention path, which it cannot
    # export, is taken only without them
    torch.onnx.export(model, x, buf, opset_version=opset, input_names=["input"],
                      output_names=["logits"], do_constant_folding=True)
    with torch.no_grad():
        want = model.double()(x.double()).float().numpy()
    m = onnx.load_from_string(buf.getvalue())
    m.producer_name = "pytorch (tests/models/make_torchvision.py)"
    write_case(os.path.join(HERE, name), m, [([x.numpy()], [want])])
    size = os.path.getsize(os.path.join(HERE, name, "model.onnx"))
    print("wrote %s (%d KB, logits %s)" % (name, size // 1024, np.round(want[0, :3], 4)))


def main():
    for n in sys.argv[1:] or list(FAMILIES):
        make(n)


if __name__ == "__main__":
    main()
