#!/usr/bin/python3
"""Writes tests/graphopt/model.onnx and test_data_set_0: a torch model with the
patterns the graph passes of the optimization layer rewrite, exported without
constant folding (BatchNormalization stays in the graph) and its outputs computed by
torch in eval mode from the same weights:

  y1  SE block: Conv+BN+SiLU, depthwise Conv+BN+ReLU6, GlobalAveragePool -> 1x1 Conv
      -> SiLU -> 1x1 Conv -> Sigmoid -> Mul with the feature map -> 1x1 Conv  (bnfold,
      act, se)
  y2  ConvTranspose (2 groups) + BN + Relu                                     (bnfold)
  y3  BN of x + r (no producer to fold into: per-channel Mul+Add)               (bnfold)
  y4  Linear + BatchNorm1d + GELU (Erf form)                                (bnfold, act)
  y5  Linear + GELU (Tanh form)                                                    (act)
  y6  HardSwish written out: y5 * clamp(y5 + 3, 0, 6) / 6                           (act)
  y7  LayerNorm written out: ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add   (norm)
  y8  Softmax written out: Exp(x - ReduceMax) / ReduceSum                           (norm)
  y9  an elementwise chain: tanh(exp(-|x|) * 0.5 - r) * 2 + sqrt(x*x + 1)         (chain)

usage: /usr/bin/python3 tests/graphopt/make_graphopt.py"""
import os

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import numpy_helper

torch.manual_seed(3)
here = os.path.dirname(os.path.abspath(__file__))


def bn(c, d=2):
    m = nn.BatchNorm2d(c) if d == 2 else nn.BatchNorm1d(c)
    with torch.no_grad():  # statistics far from the defaults, so folding shows
        m.running_mean.uniform_(-1, 1)
        m.running_var.uniform_(0.5, 2)
        m.weight.uniform_(0.5, 1.5)
        m.bias.uniform_(-0.5, 0.5)
    return m


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1, self.bn1 = nn.Conv2d(4, 6, 3, padding=1), bn(6)
        self.dw, self.bn2 = nn.Conv2d(6, 6, 3, padding=1, groups=6, bias=False), bn(6)
        self.se1, self.se2 = nn.Conv2d(6, 3, 1), nn.Conv2d(3, 6, 1)
        self.proj = nn.Conv2d(6, 5, 1)
        self.ct, self.bn3 = nn.ConvTranspose2d(6, 4, 2, stride=2, groups=2), bn(4)
        self.bn4 = bn(4)
        self.fc, self.bn5 = nn.Linear(4 * 8 * 8, 16), bn(16, 1)
        self.fc2 = nn.Linear(16, 16)
        self.lnw = nn.Parameter(torch.rand(16) + 0.5)
        self.lnb = nn.Parameter(torch.rand(16) - 0.5)

    def forward(self, x, r):
        a = F.silu(self.bn1(self.c1(x)))
        b = F.relu6(self.bn2(self.dw(a)))
        z = torch.sigmoid(self.se2(F.silu(self.se1(F.adaptive_avg_pool2d(b, 1)))))
        y1 = self.proj(b * z)
        y2 = F.relu(self.bn3(self.ct(b)))
        y3 = self.bn4(x + r)
        y4 = F.gelu(self.bn5(self.fc(x.flatten(1))))
        y5 = F.gelu(self.fc2(y4), approximate="tanh")
        y6 = y5 * torch.clamp(y5 + 3, 0, 6) / 6
        mu = y5.mean(-1, keepdim=True)
        d = y5 - mu
        var = d.pow(2).mean(-1, keepdim=True)
        y7 = d / torch.sqrt(var + 1e-5) * self.lnw + self.lnb
        e = torch.exp(y4 - y4.max(-1, keepdim=True).values)
        y8 = e / e.sum(-1, keepdim=True)
        y9 = torch.tanh(torch.exp(-x.abs()) * 0.5 - r) * 2 + torch.sqrt(x * x + 1)
        return y1, y2, y3, y4, y5, y6, y7, y8, y9


m = Model().eval()
x = torch.rand(2, 4, 8, 8) * 2 - 1
r = torch.rand(1, 4, 1, 1) * 2 - 1
names = [f"y{i}" for i in range(1, 10)]
path = os.path.join(here, "model.onnx")
torch.onnx.export(m, (x, r), path, input_names=["x", "r"], output_names=names, opset_version=13,
                  do_constant_folding=False, training=torch.onnx.TrainingMode.PRESERVE)
onnx.checker.check_model(onnx.load(path))
with torch.no_grad():
    ys = m(x, r)
d = os.path.join(here, "test_data_set_0")
os.makedirs(d, exist_ok=True)
for i, a in enumerate([x, r]):
    onnx.save_tensor(numpy_helper.from_array(a.numpy()), os.path.join(d, f"input_{i}.pb"))
for i, a in enumerate(ys):
    onnx.save_tensor(numpy_helper.from_array(a.numpy()), os.path.join(d, f"output_{i}.pb"))
