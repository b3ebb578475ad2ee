#!/usr/bin/python3
"""Writes the int8 version of the example model: kws.onnx (make_model.py) quantized into
QDQ form (QuantizeLinear/DequantizeLinear around float convolutions, as post-training
quantization tools write it), which kiln's qdq pass rewrites into QLinearConv (integer
tiles, SMLAD on Cortex-M). Writes, next to this file unless OUT_DIR is given:

  kws_int8.onnx        input "input" float [1,1,49,10], output "output" int8 [1,12]
  kws_int8_output.npy  the int8 output for kws_input.npy, computed here from the integer
                       operators' definitions (numpy and Python integers; qconv_ref())
  kws_int8_ref.h       that output as C

The quantization (what TFLite-style int8 deployments use):
- activations int8 per tensor, asymmetric: scale and zero point from the min and max seen
  on calibration inputs (the reference input and 31 more random ones); after a Relu the
  range is [0, max], so the zero point is -128;
- weights int8 per output channel, symmetric (zero point 0, scale max|w| / 127); biases
  int32 with scale float32(x_scale * w_scale[c]), as the qdq pass requires;
- the average pool over the 25x5 feature map becomes a depthwise 25x5 convolution with
  weights 1 and scale 1/125 (the mean, rounded once), and the classifier a 1x1
  convolution with an int32 bias, so the whole network is integer from the quantized
  input to the int8 logits (the exporter's Pad of zeros before the pool is dropped).

usage: /usr/bin/python3 examples/firmware/make_qdq.py [OUT_DIR]
Needs Debian's python3-torch, python3-onnx and python3-numpy."""
import math
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def float_model(path):
    """The float DS-CNN as a list of layers: ("conv", W, B, attrs, relu) and ("pool", k),
    ("fc", W, B), read from the ONNX graph make_model.py writes."""
    m = onnx.load(path)
    init = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    layers = []
    nodes = list(m.graph.node)
    for i, n in enumerate(nodes):
        a = {x.name: helper.get_attribute_value(x) for x in n.attribute}
        if n.op_type == "Conv":
            relu = i + 1 < len(nodes) and nodes[i + 1].op_type == "Relu"
            layers.append(("conv", init[n.input[1]], init[n.input[2]], a, relu))
        elif n.op_type == "Pad":
            pass  # zero pads (checked by the AveragePool's shape below)
        elif n.op_type == "AveragePool":
            assert a["kernel_shape"] == a["strides"], a
            layers.append(("pool", tuple(a["kernel_shape"])))
        elif n.op_type == "Gemm":
            assert a.get("transB") == 1
            layers.append(("fc", init[n.input[1]], init[n.input[2]]))
        else:
            assert n.op_type in ("Relu", "Constant", "Flatten"), n.op_type
    return layers


def conv_pads(a):
    p = a["pads"]
    assert p[0] == p[2] and p[1] == p[3], p
    return p[0], p[1]


def run_float(layers, x):
    """The float network in torch, returning every layer's output (for calibration)."""
    outs = []
    t = torch.from_numpy(x)
    for l in layers:
        if l[0] == "conv":
            _, w, b, a, relu = l
            t = F.conv2d(t, torch.from_numpy(w.copy()), torch.from_numpy(b.copy()), stride=a["strides"],
                         padding=conv_pads(a), groups=a["group"])
            if relu:
                t = F.relu(t)
        elif l[0] == "pool":
            t = F.avg_pool2d(t, l[1])
        else:
            t = F.linear(torch.flatten(t, 1), torch.from_numpy(l[1].copy()), torch.from_numpy(l[2].copy()))
        outs.append(t.numpy())
    return outs


def act_qparams(lo, hi):
    """int8 scale and zero point for values in [lo, hi] (the range includes 0)."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    s = np.float32((hi - lo) / 255.0)
    z = int(np.clip(np.rint(-128 - lo / s), -128, 127))
    return s, np.int8(z)


def weight_qparams(w):
    """Per output channel symmetric int8 weights: (q, scales)."""
    m = np.abs(w.reshape(w.shape[0], -1)).max(axis=1)
    s = np.where(m > 0, m / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.rint(w / s.reshape(-1, *[1] * (w.ndim - 1))), -127, 127).astype(np.int8)
    return q, s


def qmul(m):
    """kiln's fixed-point multiplier of real multiplier m (ir/requant.h kn_qmul_make):
    m's mantissa rounded to 31 bits half away from zero, as (mult, shift)."""
    if not m > 0:
        return 0, 31
    f, e = math.frexp(m)
    mt = math.floor(math.ldexp(f, 31) + 0.5)  # exact: f * 2^31 has no rounding
    if mt == 1 << 31:
        mt >>= 1
        e += 1
    if e > 30:
        return 1 << 30, 1
    if 31 - e > 62:
        return 0, 31
    return mt, 31 - e


def qmul_apply(acc, mult, shift):
    """round_half_even(sat32(acc) * mult / 2^shift), exact (Python integers)."""
    acc = max(-(1 << 31), min((1 << 31) - 1, acc))
    p = acc * mult
    fl = p >> shift  # floor
    r, half = p - (fl << shift), 1 << (shift - 1)
    return fl + (r > half or (r == half and fl & 1))


def qconv_ref(xq, xs, xz, wq, ws, b, ys, yz, strides, pads, group, relu):
    """QLinearConv as kiln's qdq pass defines it (docs/quantization.md, ir/requant.h): the
    exact sum of (x - xz)(w - 0) plus the int32 bias, times the multiplier
    xs * ws[c] / ys (double, in that order) in fixed point: an int32 mantissa and a
    shift, rounded once half to even; plus yz, saturated to int8; the Relu before the
    QuantizeLinear is max(., yz)."""
    xi = torch.from_numpy(xq.astype(np.float64) - float(xz))
    acc = F.conv2d(xi, torch.from_numpy(wq.astype(np.float64)), stride=strides, padding=pads,
                   groups=group).numpy()  # exact: integers below 2^53
    acc = acc.astype(np.int64) + b.astype(np.int64).reshape(1, -1, 1, 1)
    y = np.empty(acc.shape, np.int64)
    for c in range(acc.shape[1]):
        mult, shift = qmul((float(np.float64(xs)) * float(ws[c])) / float(np.float64(ys)))
        y[:, c] = np.vectorize(lambda a: qmul_apply(int(a), mult, shift))(acc[:, c])
    y = np.clip(y + int(yz), -128, 127)
    if relu:
        y = np.maximum(y, int(yz))
    return y.astype(np.int8)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else HERE
    os.makedirs(out, exist_ok=True)
    layers = float_model(os.path.join(HERE, "kws.onnx"))
    x_ref = np.load(os.path.join(HERE, "kws_input.npy"))
    rng = np.random.default_rng(13)
    calib = [x_ref] + [rng.standard_normal(x_ref.shape).astype(np.float32) for _ in range(31)]
    runs = [run_float(layers, x) for x in calib]
    rng_of = lambda i, v: min(r[i].min() for r in runs) if v == "lo" else max(r[i].max() for r in runs)
    in_lo = min(x.min() for x in calib)
    in_hi = max(x.max() for x in calib)

    N = helper.make_node
    nodes, inits = [], []

    def const(name, v):
        inits.append(numpy_helper.from_array(np.asarray(v), name))
        return name

    xs, xz = act_qparams(in_lo, in_hi)
    const("x_s", xs)
    const("x_z", xz)
    nodes.append(N("QuantizeLinear", ["input", "x_s", "x_z"], ["q0"], name="quant_input"))
    cur, cs, cz = "q0", xs, xz
    # the numpy reference runs alongside
    xq = np.clip(np.rint(x_ref / xs) + float(xz), -128, 127).astype(np.int8)
    k = 0
    for i, l in enumerate(layers):
        if l[0] == "conv":
            _, w, b, a, relu = l
            wq, ws = weight_qparams(w)
            strides, pads, group = tuple(a["strides"]), conv_pads(a), a["group"]
            attrs = dict(strides=a["strides"], pads=a["pads"], group=group,
                         kernel_shape=a["kernel_shape"])
        elif l[0] == "pool":
            c = runs[0][i - 1].shape[1]
            wq = np.ones((c, 1) + l[1], np.int8)
            ws = np.full(c, 1.0 / (l[1][0] * l[1][1]), np.float32)
            b = None
            relu, strides, pads, group = False, l[1], (0, 0), c
            attrs = dict(strides=list(l[1]), pads=[0, 0, 0, 0], group=c, kernel_shape=list(l[1]))
        else:
            w = l[1].reshape(*l[1].shape, 1, 1)  # [12, 64] -> a 1x1 convolution
            wq, ws = weight_qparams(w)
            b = l[2]
            relu, strides, pads, group = False, (1, 1), (0, 0), 1
            attrs = dict(strides=[1, 1], pads=[0, 0, 0, 0], group=1, kernel_shape=[1, 1])
        if l[0] == "pool":  # the mean keeps its input's range
            ys, yz = cs, cz
        else:
            ys, yz = act_qparams(rng_of(i, "lo"), rng_of(i, "hi"))
        bs = (np.float32(cs) * ws).astype(np.float32)
        bq = None if b is None else np.rint(b / bs).astype(np.int32)
        n = f"l{k}"
        const(n + "_w", wq)
        const(n + "_ws", ws)
        const(n + "_wz", np.zeros(len(ws), np.int8))
        nodes.append(N("DequantizeLinear", [cur, n + "_xs", n + "_xz"], [n + "_x"], name=n + "_dqx"))
        const(n + "_xs", cs)
        const(n + "_xz", cz)
        nodes.append(N("DequantizeLinear", [n + "_w", n + "_ws", n + "_wz"], [n + "_wf"], axis=0,
                       name=n + "_dqw"))
        conv_in = [n + "_x", n + "_wf"]
        if bq is not None:
            const(n + "_b", bq)
            const(n + "_bs", bs)
            nodes.append(N("DequantizeLinear", [n + "_b", n + "_bs"], [n + "_bf"], axis=0,
                           name=n + "_dqb"))
            conv_in.append(n + "_bf")
        nodes.append(N("Conv", conv_in, [n + "_y"], name=n + "_conv", **attrs))
        y = n + "_y"
        if relu:
            nodes.append(N("Relu", [y], [n + "_r"], name=n + "_relu"))
            y = n + "_r"
        const(n + "_ys", ys)
        const(n + "_yz", yz)
        nodes.append(N("QuantizeLinear", [y, n + "_ys", n + "_yz"], [n + "_q"], name=n + "_q"))
        xq = qconv_ref(xq, cs, cz, wq, ws, bq if bq is not None else np.zeros(len(ws), np.int32),
                       ys, yz, strides, pads, group, relu)
        cur, cs, cz = n + "_q", ys, yz
        k += 1
    const("out_shape", np.array([1, -1], np.int64))
    nodes.append(N("Reshape", [cur, "out_shape"], ["output"], name="flatten"))
    ref = xq.reshape(1, -1)

    g = helper.make_graph(
        nodes, "kws_int8",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, list(x_ref.shape))],
        [helper.make_tensor_value_info("output", TensorProto.INT8, list(ref.shape))], inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="kiln examples/firmware/make_qdq.py")
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "kws_int8.onnx"))
    np.save(os.path.join(out, "kws_int8_output.npy"), ref)
    with open(os.path.join(out, "kws_int8_ref.h"), "w") as f:
        f.write("/* Written by make_qdq.py: the int8 output of kws_int8.onnx for kws_ref_input,\n"
                " * computed from the integer operators' definitions (make_qdq.py: qconv_ref). */\n"
                "#ifndef KWS_INT8_REF_H\n#define KWS_INT8_REF_H\n\n#include <stdint.h>\n\n"
                "/* clang-format off */\n")
        f.write(f"static const int8_t kws_ref_output_int8[{ref.size}] = {{"
                + ", ".join(str(int(v)) for v in ref.ravel()) + "};\n")
        f.write("/* clang-format on */\n\n#endif\n")
    # how far the int8 logits are from the float model's on the reference input
    fl = runs[0][-1]
    deq = (ref.astype(np.float32) - float(cz)) * cs
    print(f"wrote {out}/kws_int8.onnx; int8 logits {ref.ravel().tolist()}; dequantized vs float: "
          f"max |diff| {np.abs(deq - fl).max():.3g} (max |float| {np.abs(fl).max():.3g}), "
          f"argmax {int(deq.argmax())} vs {int(fl.argmax())}")


if __name__ == "__main__":
    main()
