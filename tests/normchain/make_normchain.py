#!/usr/bin/python3
"""Writes the tests/normchain cases (one ONNX backend-test folder each: model.onnx and
test_data_set_0 with torch/numpy reference outputs) for the norm and chain passes and
the vector row lowerings of Softmax and LayerNormalization (ir/lower/rows.c):

  ln_decomposed    torch LayerNorm exported at opset 14 (ReduceMean/Sub/Pow/ReduceMean/
                   Add/Sqrt/Div/Mul/Add) on rows of 37 and 64, one input offset by 50
                   (the one-pass variance must not cancel), one without affine
  softmax_decomp   Softmax written out by hand with and without the max subtraction,
                   rows of 40 and 16, and one over a middle axis (left alone)
  native_rows      LayerNormalization (with Mean and InvStdDev outputs) and Softmax at
                   opset 17 on rows of 5, 16, 37 and 128 (numpy references)
  conv_chain       Conv -> Mul (per channel) -> Add -> Sigmoid -> Mul (scalar), and
                   a depthwise Conv -> Sub -> Div -> Relu chain
  gemm_chain       Linear -> GELU (erf, written out) -> * 2 + 1; MatMul -> / sqrt(d) ->
                   Softmax (attention scores); Linear -> 1 - sigmoid -> pow 3
  unary_chain      log(|x| + 1) * -1, 2 / (1 + exp(x)), 1 / sqrt(x * x + 1) - r

usage: /usr/bin/python3 tests/normchain/make_normchain.py"""
import os

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(7)
rng = np.random.default_rng(7)


def save(name, model_path_or_proto, inputs, outputs):
    d = os.path.join(here, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    path = os.path.join(d, "model.onnx")
    if not isinstance(model_path_or_proto, str):
        onnx.save(model_path_or_proto, path)
    onnx.checker.check_model(onnx.load(path))
    for i, a in enumerate(inputs):
        onnx.save_tensor(numpy_helper.from_array(np.asarray(a, dtype=np.float32)),
                         os.path.join(d, "test_data_set_0", f"input_{i}.pb"))
    for i, a in enumerate(outputs):
        onnx.save_tensor(numpy_helper.from_array(np.asarray(a, dtype=np.float32)),
                         os.path.join(d, "test_data_set_0", f"output_{i}.pb"))


def export(name, m, args, opset, nout):
    d = os.path.join(here, name)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    m = m.eval()
    torch.onnx.export(m, args, path, input_names=[f"x{i}" for i in range(len(args))],
                      output_names=[f"y{i}" for i in range(nout)], opset_version=opset,
                      do_constant_folding=False)
    with torch.no_grad():
        ys = m(*args)
    save(name, path, [a.numpy() for a in args], [y.numpy() for y in ys])


def affine_ln(n):
    m = nn.LayerNorm(n)
    with torch.no_grad():
        m.weight.uniform_(0.5, 1.5)
        m.bias.uniform_(-0.5, 0.5)
    return m


class LnDecomposed(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = affine_ln(37), affine_ln(64)
        self.c = nn.LayerNorm(64, elementwise_affine=False)

    def forward(self, x, z):
        return self.a(x), self.b(z + 50), self.c(z)


class SoftmaxDecomposed(nn.Module):
    def forward(self, x, z):
        e = torch.exp(x - x.max(-1, keepdim=True).values)
        y0 = e / e.sum(-1, keepdim=True)
        f = torch.exp(z)
        y1 = f / f.sum(-1, keepdim=True)
        g = torch.exp(x)
        y2 = g / g.sum(1, keepdim=True)  # middle axis: not the pattern
        return y0, y1, y2


class ConvChain(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(3, 8, 3, padding=1)
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.s = nn.Parameter(torch.rand(1, 8, 1, 1) + 0.5)
        self.t = nn.Parameter(torch.rand(1, 8, 1, 1) - 0.5)

    def forward(self, x):
        a = torch.sigmoid(self.c(x) * self.s + self.t) * 1.5
        b = torch.relu((self.dw(a) - self.t) / self.s)
        return a, b


class GemmChain(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1, self.l2 = nn.Linear(24, 40), nn.Linear(40, 40)
        self.q, self.k = nn.Linear(40, 32), nn.Linear(40, 32)

    def forward(self, x):
        h = self.l1(x)
        g = h * 0.5 * (1 + torch.erf(h / 1.4142135623730951)) * 2 + 1
        q, k = self.q(g), self.k(g)
        s = torch.matmul(q, k.transpose(-1, -2)) / np.sqrt(32.0)
        p = torch.softmax(s, -1)
        u = torch.pow(1 - torch.sigmoid(self.l2(g)), 3)
        return g, p, u


class UnaryChain(nn.Module):
    def forward(self, x, r):
        y0 = -torch.log(torch.abs(x) + 1)
        y1 = 2 / (1 + torch.exp(x))
        y2 = 1 / torch.sqrt(x * x + 1) - r
        return y0, y1, y2


export("ln_decomposed", LnDecomposed(), (torch.randn(2, 5, 37), torch.randn(3, 64)), 14, 3)
export("softmax_decomp", SoftmaxDecomposed(), (torch.randn(2, 6, 40) * 3, torch.randn(4, 16)), 14, 3)
export("conv_chain", ConvChain(), (torch.randn(2, 3, 9, 11),), 13, 2)
export("gemm_chain", GemmChain(), (torch.randn(2, 10, 24),), 13, 3)
export("unary_chain", UnaryChain(), (torch.randn(2, 3, 17), torch.randn(1, 3, 1)), 13, 3)


# native LayerNormalization / Softmax at opset 17, references from numpy (float64)
def ln_ref(x, w, b, eps):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    r = 1 / np.sqrt(v + eps)
    return (x - m) * r * w + b, m, r


def sm_ref(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


nodes, inits, ins, outs, feeds, refs = [], [], [], [], [], []
for i, (shape, eps) in enumerate([((3, 5), 1e-5), ((2, 4, 16), 1e-3), ((5, 37), 1e-5),
                                  ((2, 128), 1e-6)]):
    x = (rng.standard_normal(shape) * 2 + 3).astype(np.float32).astype(np.float64)
    w = rng.uniform(0.5, 1.5, shape[-1]).astype(np.float32).astype(np.float64)
    b = rng.uniform(-0.5, 0.5, shape[-1]).astype(np.float32).astype(np.float64)
    y, m, r = ln_ref(x, w, b, eps)
    inits += [numpy_helper.from_array(w.astype(np.float32), f"w{i}"),
              numpy_helper.from_array(b.astype(np.float32), f"b{i}")]
    ins.append(helper.make_tensor_value_info(f"x{i}", TensorProto.FLOAT, shape))
    names = [f"ln{i}", f"mean{i}", f"istd{i}"]
    nodes.append(helper.make_node("LayerNormalization", [f"x{i}", f"w{i}", f"b{i}"], names,
                                  axis=-1, epsilon=eps))
    kept = list(shape[:-1]) + [1]
    outs += [helper.make_tensor_value_info(names[0], TensorProto.FLOAT, shape),
             helper.make_tensor_value_info(names[1], TensorProto.FLOAT, kept),
             helper.make_tensor_value_info(names[2], TensorProto.FLOAT, kept)]
    feeds.append(x)
    refs += [y, m, r]
for i, shape in enumerate([(3, 5), (2, 4, 16), (5, 37), (2, 128)]):
    x = (rng.standard_normal(shape) * 4).astype(np.float32).astype(np.float64)
    ins.append(helper.make_tensor_value_info(f"s{i}", TensorProto.FLOAT, shape))
    nodes.append(helper.make_node("Softmax", [f"s{i}"], [f"sm{i}"], axis=-1))
    outs.append(helper.make_tensor_value_info(f"sm{i}", TensorProto.FLOAT, shape))
    feeds.append(x)
    refs.append(sm_ref(x))
g = helper.make_graph(nodes, "native_rows", ins, outs, inits)
model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
save("native_rows", model, [f.astype(np.float32) for f in feeds], refs)


# every chain step kind in one graph built by hand (numpy references in float64):
#   z0 = 3 / (x * x + 1)                      Mul head: Add, RDiv
#   z1 = 1 - erf(x * 0.7)                     Mul head: Erf, RSub (constant)
#   z2 = r - |x| ^ 1.5                        Abs head: Pow 1.5, RSub (broadcast input)
#   z3 = (x - 0.25) ^ 2 / r                   Sub head: Pow 2, Div (broadcast input)
x = rng.standard_normal((2, 3, 20)).astype(np.float32)
r = (rng.uniform(0.5, 1.5, (3, 1))).astype(np.float32)
xd, rd = x.astype(np.float64), r.astype(np.float64)
c = {k: numpy_helper.from_array(np.array(v, dtype=np.float32), k)
     for k, v in [("one", 1.0), ("three", 3.0), ("k07", 0.7), ("p15", 1.5), ("two", 2.0),
                  ("q", 0.25)]}
N = helper.make_node
nodes = [N("Mul", ["x", "x"], ["xx"]), N("Add", ["xx", "one"], ["xx1"]),
         N("Div", ["three", "xx1"], ["z0"]),
         N("Mul", ["x", "k07"], ["xs"]), N("Erf", ["xs"], ["e"]), N("Sub", ["one", "e"], ["z1"]),
         N("Abs", ["x"], ["a"]), N("Pow", ["a", "p15"], ["ap"]), N("Sub", ["r", "ap"], ["z2"]),
         N("Sub", ["x", "q"], ["xq"]), N("Pow", ["xq", "two"], ["x2"]), N("Div", ["x2", "r"], ["z3"])]
outs = [helper.make_tensor_value_info(f"z{i}", TensorProto.FLOAT, (2, 3, 20)) for i in range(4)]
g = helper.make_graph(nodes, "steps_chain",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, (2, 3, 20)),
                       helper.make_tensor_value_info("r", TensorProto.FLOAT, (3, 1))],
                      outs, list(c.values()))
model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 7
from math import erf  # noqa: E402
verf = np.vectorize(erf)
save("steps_chain", model, [x, r],
     [3 / (xd * xd + 1), 1 - verf(xd * 0.7), rd - np.abs(xd) ** 1.5, (xd - 0.25) ** 2 / rd])
