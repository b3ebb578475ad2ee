#!/usr/bin/python3
"""Writes tests/bench_models/*/: reduced versions (narrow, shallow, small images) of
the eight benchmark architectures of bench/make_models.py, built by the same builders,
each as model.onnx + test_data_set_0/{input_0,output_0}.pb with the output torch
computes, cross-checked against ONNX Runtime (npm's onnxruntime-node, see
tests/models/casegen.py for ORT_NODE) when it is installed.
CTest runs them through every backend with `kiln check-onnx` (bench_models_*); the
benchmarks themselves are not tests.

BatchNorm running statistics and affine parameters are random (not torch's 0/1
initial values), so folding them into the convolutions is checked.

usage: /usr/bin/python3 tests/bench_models/make_bench_models.py [NAME...]
Deterministic (seeded). Needs python3-torch, python3-torchvision, python3-onnx."""
import os
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import make_bert  # noqa: E402
import make_models as mm  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "..", "models"))
import casegen  # noqa: E402

MB2 = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 2, 2], [6, 64, 1, 2], [6, 96, 2, 1],
       [6, 160, 1, 2], [6, 320, 1, 1]]  # MobileNetV2's table with fewer repeats

# name -> (model, input shape, input name, output name, opset)
REDUCED = {
    "lenet5": (lambda: mm.lenet5(3, 8, 32, 16), (1, 1, 28, 28), "input", "logits", 13),
    "mlp": (lambda: mm.mlp((784, 32, 16, 10)), (1, 784), "input", "logits", 13),
    "squeezenet": (lambda: mm.squeezenet(div=8, classes=10), (1, 3, 64, 64), "input",
                   "logits", 13),
    "mobilenetv2": (lambda: mm.mobilenetv2(width=0.25, setting=MB2, last=64, classes=10),
                    (1, 3, 64, 64), "input", "logits", 13),
    "efficientnet": (lambda: mm.efficientnet(width=0.125, depth=0.5, classes=10),
                     (1, 3, 64, 64), "input", "logits", 13),
    "bert": (lambda: make_bert.encoder(layers=2, hidden=64, heads=4, ff=128), (1, 16, 64), "x",
             "y", 17),
    "resnet18": (lambda: mm.resnet18(w=4, classes=10), (1, 3, 64, 64), "input", "logits", 13),
    "resnet50": (lambda: mm.resnet50(w=4, classes=10), (1, 3, 64, 64), "input", "logits", 13),
}


def randomize_bn(model, g):
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            n = m.num_features
            m.running_mean.copy_(torch.randn(n, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(n, generator=g) + 0.5)
            m.weight.data.copy_(torch.rand(n, generator=g) + 0.5)
            m.bias.data.copy_(torch.randn(n, generator=g) * 0.1)


def reference_check(path, x, y):
    """ONNX Runtime's output for x (tests/models/casegen.py: npm's onnxruntime-node),
    compared with torch's y: a wrong export would otherwise become the reference."""
    if not os.path.isdir(casegen.ORT):
        return "not cross-checked (no onnxruntime-node at ORT_NODE)"
    m = onnx.load(path)
    got = casegen.ort_run(m, {m.graph.input[0].name: x})[0]
    err = np.max(np.abs(got - y)) / max(1e-6, np.max(np.abs(y)))
    if err > 1e-4:
        sys.exit(f"{path}: ONNX Runtime differs from torch by {err:g} (normalized)")
    return f"ONNX Runtime agrees, normalized error {err:.1e}"


def write(name):
    build, shape, in_name, out_name, opset = REDUCED[name]
    torch.manual_seed(16)
    g = torch.Generator().manual_seed(16)
    model = build().eval()
    with torch.no_grad():
        randomize_bn(model, g)
    x = torch.randn(*shape, generator=g)
    d = os.path.join(HERE, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    path = os.path.join(d, "model.onnx")
    mm.export(model, x, path, in_name, out_name, opset)
    with torch.no_grad():
        y = model(x).numpy()
    xn = x.numpy()
    for kind, arr, nm in (("input", xn, in_name), ("output", y, out_name)):
        with open(os.path.join(d, "test_data_set_0", kind + "_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(arr, nm).SerializeToString())
    note = reference_check(path, xn, y)
    size = os.path.getsize(path)
    print(f"wrote {d}: {size // 1024} KB, output {list(y.shape)}, |y| max "
          f"{np.max(np.abs(y)):.3g}; {note}")


def main():
    names = sys.argv[1:] or list(REDUCED)
    for n in names:
        if n not in REDUCED:
            sys.exit(f"make_bench_models.py: unknown model '{n}' (models: {' '.join(REDUCED)})")
    for n in names:
        write(n)


if __name__ == "__main__":
    main()
