#!/usr/bin/python3
"""Writes the reduced-precision weight tests (#12 item 6, docs/quantization.md):

  models/cnn/model.onnx         a float32 CNN (Conv+Relu, depthwise Conv, strided Conv,
                                 Gemm, MatMul), 12 K weights
  f16/, bf16/                   check-onnx folders: that model with the expected output
                                 computed (torch, float64) with every float32 constant of
                                 16 elements or more rounded to float16 / bfloat16, as
                                 `--weights` defines it; input_0.pb, output_0.pb
  f32_out.npy, x.npy            the float32 model's output on the input, and the input
  ref_f16.npy, ref_bf16.npy     the f16/ and bf16/ expected outputs as .npy
  bound_f16.npy, bound_bf16.npy per output element, a bound on |y(rounded weights) -
                                 y(float32 weights)| derived from the rounding (below)
  f16_compute/                  the CNN computing in float16 (float16 weights, Cast at the
                                 input and output, as a half-precision export), its output
                                 with every node rounded to float16
  f16w_cast/                    a model storing its weights as float16 and Casting them to
                                 float32 (the compute is float32), with its output
                                 (torch, float64, from the float16 values)

The bound: rounding to nearest changes each weight w by at most u|w| (u = 2^-11 for
float16, 2^-8 for bfloat16), so to first order |dy_i| <= u sum |dy_i/dw| |w| over the
rounded weights (gradients by torch autograd, float64); times 1.5 (second-order terms,
float32 accumulation), plus 1e-6.

usage: /usr/bin/python3 tests/lowp/make_lowp_models.py  (deterministic; nothing here runs at
test time)"""
import os

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(12)


def w(*shape, fan):
    return (rng.standard_normal(shape) / np.sqrt(fan)).astype(np.float32)


W = {
    "c1.w": w(16, 3, 3, 3, fan=27), "c1.b": w(16, fan=10),
    "dw.w": w(16, 1, 3, 3, fan=9), "dw.b": w(16, fan=10),
    "c2.w": w(32, 16, 3, 3, fan=144), "c2.b": w(32, fan=10),
    "fc.w": w(10, 32 * 4 * 4, fan=512), "fc.b": w(10, fan=10),
    "mm.w": w(10, 16, fan=10),
}


def rounded(a, fmt):
    if a.size < 16:
        return a
    t = torch.from_numpy(a)
    return (t.half() if fmt == "f16" else t.bfloat16()).float().numpy()


ROUNDED = [k for k, v in W.items() if v.size >= 16]


def forward(x, P):
    """The model in float64."""
    Pt = {k: torch.from_numpy(v).double() for k, v in P.items()}
    return forward_t(torch.from_numpy(x).double(), Pt).detach().numpy()


def forward_t(x, P):
    f = lambda a: a
    y = torch.nn.functional.conv2d(x, f(P["c1.w"]), f(P["c1.b"]), padding=1)
    y = torch.relu(y)
    y = torch.nn.functional.conv2d(y, f(P["dw.w"]), f(P["dw.b"]), padding=1, groups=16)
    y = torch.relu(y)
    y = torch.nn.functional.conv2d(y, f(P["c2.w"]), f(P["c2.b"]), stride=2, padding=1)
    y = torch.relu(y).reshape(1, -1)
    y = y @ f(P["fc.w"]).T + f(P["fc.b"])
    return y @ f(P["mm.w"])


def forward16(x, P):
    """The model computing in float16: every node's output rounded to float16."""
    r = lambda a: a.half().double()
    f = {k: torch.from_numpy(v).double() for k, v in P.items()}
    conv = torch.nn.functional.conv2d
    y = r(torch.from_numpy(x).double())
    y = torch.relu(r(conv(y, f["c1.w"], f["c1.b"], padding=1)))
    y = torch.relu(r(conv(y, f["dw.w"], f["dw.b"], padding=1, groups=16)))
    y = torch.relu(r(conv(y, f["c2.w"], f["c2.b"], stride=2, padding=1))).reshape(1, -1)
    y = r(r(y @ f["fc.w"].T + f["fc.b"]) @ f["mm.w"])
    return y.float().numpy()


def bound(x, u):
    """First-order bound on |y(rounded) - y(exact)|: rounding moves each weight w by at
    most u|w|, so |dy_i| <= sum over weights of |dy_i/dw| u |w| (+ O(u^2), covered by
    the factor below). The gradients come from torch autograd in float64."""
    P = {k: torch.from_numpy(v.astype(np.float64)).requires_grad_(k in ROUNDED) for k, v in W.items()}
    xt = torch.from_numpy(x).double()
    y = forward_t(xt, P)
    out = np.zeros(y.shape[1])
    for i in range(y.shape[1]):
        g = torch.autograd.grad(y[0, i], [P[k] for k in ROUNDED], retain_graph=True)
        out[i] = sum(float((gk.abs() * P[k].detach().abs()).sum()) for gk, k in zip(g, ROUNDED)) * u
    return (out.reshape(y.shape) * 1.5 + 1e-6).astype(np.float32)


def tensor(name, a):
    return numpy_helper.from_array(np.ascontiguousarray(a), name)


def cnn_model(half=False, compute16=False):
    """The CNN; half: weights stored as float16 initializers, each Cast to float32;
    compute16: every node computes in float16 (float16 weights), Cast at the edges."""
    nodes, inits = [], []
    if compute16:
        nodes.append(helper.make_node("Cast", ["x"], ["x16"], to=TensorProto.FLOAT16))
    def p(name):
        if compute16:
            inits.append(tensor(name, W[name].astype(np.float16)))
            return name
        if not half:
            inits.append(tensor(name, W[name]))
            return name
        inits.append(tensor(name + ".h", W[name].astype(np.float16)))
        nodes.append(helper.make_node("Cast", [name + ".h"], [name], to=TensorProto.FLOAT))
        return name
    nodes += [
        helper.make_node("Conv", ["x16" if compute16 else "x", p("c1.w"), p("c1.b")], ["y1"], pads=[1, 1, 1, 1], name="c1"),
        helper.make_node("Relu", ["y1"], ["r1"]),
        helper.make_node("Conv", ["r1", p("dw.w"), p("dw.b")], ["y2"], pads=[1, 1, 1, 1], group=16, name="dw"),
        helper.make_node("Relu", ["y2"], ["r2"]),
        helper.make_node("Conv", ["r2", p("c2.w"), p("c2.b")], ["y3"], pads=[1, 1, 1, 1], strides=[2, 2],
                         name="c2"),
        helper.make_node("Relu", ["y3"], ["r3"]),
        helper.make_node("Flatten", ["r3"], ["f"]),
        helper.make_node("Gemm", ["f", p("fc.w"), p("fc.b")], ["g"], transB=1, name="fc"),
        helper.make_node("MatMul", ["g", p("mm.w")], ["y16" if compute16 else "y"], name="mm"),
    ]
    if compute16:
        nodes.append(helper.make_node("Cast", ["y16"], ["y"], to=TensorProto.FLOAT))
    g = helper.make_graph(nodes, "lowp_cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.checker.check_model(m)
    return m


def write_case(d, m, x, y):
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(m, os.path.join(d, "model.onnx"))
    for k, (n, a) in enumerate([("input_0", x), ("output_0", y)]):
        with open(os.path.join(d, "test_data_set_0", n + ".pb"), "wb") as f:
            f.write(tensor("x" if k == 0 else "y", a).SerializeToString())


def main():
    x = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    m = cnn_model()
    y32 = forward(x, W).astype(np.float32)
    os.makedirs(os.path.join(HERE, "models", "cnn"), exist_ok=True)
    onnx.save(m, os.path.join(HERE, "models", "cnn", "model.onnx"))
    np.save(os.path.join(HERE, "x.npy"), x)
    np.save(os.path.join(HERE, "f32_out.npy"), y32)
    for fmt, u in (("f16", 2.0 ** -11), ("bf16", 2.0 ** -8)):
        P = {k: rounded(v, fmt) for k, v in W.items()}
        y = forward(x, P).astype(np.float32)
        b = bound(x, u)
        err = np.abs(y.astype(np.float64) - y32)
        assert (err <= b).all(), (fmt, err.max(), b.min())
        print(f"{fmt}: max |y - y32| {err.max():.3g}, bound {b.min():.3g}..{b.max():.3g}, "
              f"max err/bound {(err / b).max():.3f}")
        write_case(os.path.join(HERE, fmt), m, x, y)
        np.save(os.path.join(HERE, f"bound_{fmt}.npy"), b)
        np.save(os.path.join(HERE, f"ref_{fmt}.npy"), y)
    # float16 weights Cast to float32: the float32 model of the float16 values
    P = {k: v.astype(np.float16).astype(np.float32) for k, v in W.items()}
    write_case(os.path.join(HERE, "f16w_cast"), cnn_model(half=True), x, forward(x, P).astype(np.float32))
    # computing in float16: each node's value rounded to float16 (as ONNX's reference
    # computes a float16 node: exactly, then rounded once)
    write_case(os.path.join(HERE, "f16_compute"), cnn_model(compute16=True), x, forward16(x, P))


if __name__ == "__main__":
    main()
