#!/usr/bin/python3
"""Writes the example model of examples/firmware: the DS-CNN keyword-spotting network of
MLPerf Tiny (49x10 MFCC input, a 10x4 stride-2 convolution, four depthwise-separable blocks
of 64 channels, average pool, 12 classes; 2.66 M multiply-adds) with random weights and
batch-norm statistics, exported to ONNX (opset 13, input "input", output "output" = the 12
logits). Also writes a reference input and the output torch computes for it:

  kws.onnx  kws_input.npy  kws_output.npy  kws_ref.h (the same two arrays as C)

usage: /usr/bin/python3 examples/firmware/make_model.py [OUT_DIR]   (default: next to this file)
Needs Debian's python3-torch, python3-onnx and python3-numpy."""
import os
import sys

import numpy as np
import torch
from torch import nn


def bn_relu(c):
    return [nn.BatchNorm2d(c), nn.ReLU()]


class DSCNN(nn.Module):
    def __init__(self, c=64, classes=12):
        super().__init__()
        layers = [nn.Conv2d(1, c, (10, 4), stride=2, padding=(5, 1), bias=False), *bn_relu(c)]
        for _ in range(4):
            layers += [nn.Conv2d(c, c, 3, padding=1, groups=c, bias=False), *bn_relu(c),
                       nn.Conv2d(c, c, 1, bias=False), *bn_relu(c)]
        self.features = nn.Sequential(*layers)
        self.pool = nn.AvgPool2d((25, 5))
        self.fc = nn.Linear(c, classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.features(x)), 1))


def randomize_bn(model, gen):
    """Batch-norm layers that do something: statistics and affine terms away from identity."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            n = m.num_features
            m.running_mean.copy_(torch.randn(n, generator=gen) * 0.1)
            m.running_var.copy_(torch.rand(n, generator=gen) * 0.5 + 0.75)
            m.weight.data.copy_(torch.rand(n, generator=gen) * 0.5 + 0.75)
            m.bias.data.copy_(torch.randn(n, generator=gen) * 0.1)


def export(model, x, path):
    tmp = path + ".tmp"
    with torch.no_grad():
        torch.onnx.export(model, x, tmp, opset_version=13, input_names=["input"],
                          output_names=["output"], do_constant_folding=True)
    os.replace(tmp, path)


def c_array(name, a):
    vals = ",\n".join("    " + ", ".join(f"{v:.9g}f" for v in a[i:i + 6])
                      for i in range(0, a.size, 6))
    return f"static const float {name}[{a.size}] = {{\n{vals}\n}};\n"


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    os.makedirs(out, exist_ok=True)
    gen = torch.Generator().manual_seed(13)
    torch.manual_seed(13)
    model = DSCNN().eval()
    with torch.no_grad():
        randomize_bn(model, gen)
    x = torch.randn(1, 1, 49, 10, generator=gen)
    export(model, x, os.path.join(out, "kws.onnx"))
    with torch.no_grad():
        y = model(x).numpy()
        y64 = model.double()(x.double()).numpy()  # the reference, in double precision
    xin = x.numpy().astype(np.float32)
    ref = y64.astype(np.float32)
    np.save(os.path.join(out, "kws_input.npy"), xin)
    np.save(os.path.join(out, "kws_output.npy"), ref)
    with open(os.path.join(out, "kws_ref.h"), "w") as f:
        f.write("/* Written by make_model.py: a reference input of kws.onnx and the output torch\n"
                " * computes for it (in double precision, rounded to float). */\n"
                "#ifndef KWS_REF_H\n#define KWS_REF_H\n\n/* clang-format off */\n")
        f.write(c_array("kws_ref_input", xin.ravel()))
        f.write("\n" + c_array("kws_ref_output", ref.ravel()))
        f.write("/* clang-format on */\n\n#endif\n")
    print(f"wrote {out}/kws.onnx; float32 torch vs double: "
          f"{np.abs(y - y64).max():.3g} (max |ref| {np.abs(y64).max():.3g})")


if __name__ == "__main__":
    main()
