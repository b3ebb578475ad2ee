#!/usr/bin/python3
"""Writes a QDQ (QuantizeLinear/DequantizeLinear) int8 version of a float CNN for
benchmarks: kiln's int8 against its fp32 and against ONNX Runtime on the same file.

    /usr/bin/python3 bench/make_qdq.py KILN MODEL.onnx OUT.onnx

This is a benchmark tool, not the post-training quantizer (`kiln compile --quantize`):
calibration is one random input (N(0, 1)), min/max per tensor, so the accuracy means
nothing; the graph has the form quantizers write (ONNX Runtime's quantize_static):
- weights of Conv symmetric int8 per output channel, biases int32 at x_scale * w_scale;
- activations u8 asymmetric per tensor: every tensor a Conv, Add or pooling reads gets
  QuantizeLinear -> DequantizeLinear, and all its readers read the DequantizeLinear;
- Clip(0, 6) after a Conv is dropped where its output is quantized with zero point 0
  and a range inside [0, 6] (QuantizeLinear saturates the same way), as ORT does;
- the classifier Gemm (constant B, transB) quantized as `kiln quantize` and ORT's
  quantize_static do it: B symmetric int8 per output channel, its bias int32 at
  x_scale * w_scale, its input and its output u8 per tensor (the graph output keeps its
  name, on the last DequantizeLinear); kiln's qdq pass makes it a QLinearMatMul;
- the rest (pooling, Add) stays float between DequantizeLinear and QuantizeLinear.
  kiln's qdq pass turns each DQ -> Conv -> [Relu] -> Q into QLinearConv, each
  DQ, DQ -> Add -> [Relu] -> Q into QLinearAdd.
Activation ranges come from running the float model with kiln (`kiln run`, every
calibrated tensor made a graph output)."""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def gemm_ok(n, inits):
    """A Gemm the quantizers make integer: constant 2-D B used transposed (a classifier),
    no transA, alpha and beta 1, a constant bias or none."""
    if n.op_type != "Gemm" or n.input[1] not in inits:
        return False
    a = {x.name: helper.get_attribute_value(x) for x in n.attribute}
    if a.get("transA", 0) != 0 or a.get("transB", 0) != 1 or a.get("alpha", 1.0) != 1.0 or \
            a.get("beta", 1.0) != 1.0:
        return False
    return len(n.input) < 3 or not n.input[2] or n.input[2] in inits


def quantize_gemm(n, inits, qp, new_inits, out_nodes):
    """B [M, K] symmetric int8 per output channel (axis 0), the bias int32 at x_scale *
    w_scale (axis 0), as for Conv; the DequantizeLinear nodes go before n."""
    N = helper.make_node
    w = numpy_helper.to_array(inits[n.input[1]]).astype(np.float32)
    ws = (np.abs(w).max(axis=1) / 127).astype(np.float32)
    ws[ws == 0] = 1
    wq = np.clip(np.rint(w / ws.reshape(-1, 1)), -127, 127).astype(np.int8)
    base = n.name or n.output[0]
    new_inits += [numpy_helper.from_array(wq, base + "_wq"), numpy_helper.from_array(ws, base + "_ws"),
                  numpy_helper.from_array(np.zeros(w.shape[0], np.int8), base + "_wz")]
    out_nodes.append(N("DequantizeLinear", [base + "_wq", base + "_ws", base + "_wz"], [base + "_wf"],
                       axis=0))
    n.input[1] = base + "_wf"
    if len(n.input) > 2 and n.input[2]:
        b = numpy_helper.to_array(inits[n.input[2]]).astype(np.float32)
        bs = (qp[n.input[0]][0] * ws).astype(np.float32)
        new_inits += [numpy_helper.from_array(np.rint(b / bs).astype(np.int32), base + "_bq"),
                      numpy_helper.from_array(bs, base + "_bs")]
        out_nodes.append(N("DequantizeLinear", [base + "_bq", base + "_bs"], [base + "_bf"], axis=0))
        n.input[2] = base + "_bf"


def main(kiln, src, dst):
    m = onnx.load(src)
    g = m.graph
    inits = {i.name: i for i in g.initializer}
    # Identity of an initializer: the initializer itself
    alias = {}
    for n in g.node:
        if n.op_type == "Identity" and n.input[0] in inits:
            alias[n.output[0]] = n.input[0]
    nodes = [n for n in g.node if not (n.op_type == "Identity" and n.input[0] in inits)]
    for n in nodes:
        for k, v in enumerate(n.input):
            if v in alias:
                n.input[k] = alias[v]
    consts = {}
    for n in nodes:  # Constant nodes (Clip's bounds)
        if n.op_type == "Constant":
            consts[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
    prod = {o: n for n in nodes for o in n.output}
    readers = {}
    for n in nodes:
        for v in n.input:
            readers.setdefault(v, []).append(n)
    # tensors to quantize: float activations that a Conv or an Add reads
    quant = []
    for n in nodes:
        if n.op_type in ("Conv", "Add", "MaxPool", "GlobalAveragePool") or gemm_ok(n, inits):
            for v in n.input[: 2 if n.op_type == "Add" else 1]:
                if v not in inits and v not in quant:
                    quant.append(v)
    # the classifier's output too (requantized by the integer Gemm), renamed below
    outs = {o.name for o in g.output}
    gemm_out = {}
    for n in nodes:
        if gemm_ok(n, inits) and n.output[0] in outs:
            gemm_out[n.output[0]] = n.output[0] + "_f"
            quant.append(n.output[0])
    # Clip(0, 6) producing a quantized tensor from a Conv: dropped, its range clamped
    clip_max = {}
    drop = set()
    for v in quant:
        p = prod.get(v)
        if p is not None and p.op_type == "Clip" and prod.get(p.input[0]) is not None and \
                prod[p.input[0]].op_type == "Conv" and len(readers.get(p.input[0], [])) == 1:
            lo = float(consts.get(p.input[1], inits.get(p.input[1]) and numpy_helper.to_array(inits[p.input[1]])))
            hi = float(consts.get(p.input[2], inits.get(p.input[2]) and numpy_helper.to_array(inits[p.input[2]])))
            if lo == 0:
                clip_max[v] = hi
                drop.add(id(p))
    # calibrate: run the float model with every tensor of quant as an output
    with tempfile.TemporaryDirectory() as t:
        cal = onnx.ModelProto()
        cal.CopyFrom(m)
        del cal.graph.output[:]
        for v in quant:
            cal.graph.output.append(helper.make_tensor_value_info(v, TensorProto.FLOAT, None))
        onnx.save(cal, os.path.join(t, "cal.onnx"))
        shape = [d.dim_value for d in g.input[0].type.tensor_type.shape.dim]
        x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
        np.save(os.path.join(t, "x.npy"), x)
        subprocess.run([kiln, "run", os.path.join(t, "cal.onnx"), "--backend", "llvm", "-q",
                        "--input", "%s=%s" % (g.input[0].name, os.path.join(t, "x.npy")),
                        "--output-dir", t], check=True, stdout=subprocess.DEVNULL)
        rng_of = {}
        for v in quant:
            a = np.load(os.path.join(t, v.replace("/", "_") + ".npy")) if os.path.exists(
                os.path.join(t, v.replace("/", "_") + ".npy")) else np.load(os.path.join(t, v + ".npy"))
            rng_of[v] = (min(0.0, float(a.min())), max(0.0, float(a.max())))
    qp = {}
    new_inits = []
    for v in quant:
        lo, hi = rng_of[v]
        if v in clip_max:
            lo, hi = 0.0, min(hi, clip_max[v])
        s = np.float32(max(hi - lo, 1e-6) / 255)
        z = np.uint8(np.clip(np.rint(-lo / s), 0, 255))
        qp[v] = (s, z)
        new_inits += [numpy_helper.from_array(s, v + "_s"), numpy_helper.from_array(z, v + "_z")]
    out_nodes = []
    N = helper.make_node
    for n in nodes:  # a dropped Clip: its Conv writes the Clip's output directly
        if id(n) in drop:
            prod[n.input[0]].output[0] = n.output[0]
    for n in nodes:
        if id(n) in drop:
            continue
        if gemm_ok(n, inits):
            quantize_gemm(n, inits, qp, new_inits, out_nodes)
        if n.op_type == "Conv":
            w = numpy_helper.to_array(inits[n.input[1]]).astype(np.float32)
            mo = w.shape[0]
            ws = (np.abs(w.reshape(mo, -1)).max(axis=1) / 127).astype(np.float32)
            ws[ws == 0] = 1
            wq = np.clip(np.rint(w / ws.reshape(-1, 1, 1, 1)), -127, 127).astype(np.int8)
            base = n.name or n.output[0]
            new_inits += [numpy_helper.from_array(wq, base + "_wq"),
                          numpy_helper.from_array(ws, base + "_ws"),
                          numpy_helper.from_array(np.zeros(mo, np.int8), base + "_wz")]
            out_nodes.append(N("DequantizeLinear", [base + "_wq", base + "_ws", base + "_wz"],
                               [base + "_wf"], axis=0))
            n.input[1] = base + "_wf"
            if len(n.input) > 2 and n.input[2]:
                xs = qp[n.input[0]][0] if n.input[0] in qp else None
                b = numpy_helper.to_array(inits[n.input[2]]).astype(np.float32)
                bs = (xs * ws).astype(np.float32)
                bq = np.rint(b / bs).astype(np.int32)
                new_inits += [numpy_helper.from_array(bq, base + "_bq"),
                              numpy_helper.from_array(bs, base + "_bs")]
                out_nodes.append(N("DequantizeLinear", [base + "_bq", base + "_bs"], [base + "_bf"],
                                   axis=0))
                n.input[2] = base + "_bf"
        for k, v in enumerate(n.input):
            if v in qp:
                n.input[k] = v + "_dq"
        out_nodes.append(n)
        for k, v in enumerate(n.output):
            if v in gemm_out:  # a graph output: the float Gemm writes v_f, DQ writes v
                n.output[k] = gemm_out[v]
                out_nodes.append(N("QuantizeLinear", [gemm_out[v], v + "_s", v + "_z"], [v + "_q"]))
                out_nodes.append(N("DequantizeLinear", [v + "_q", v + "_s", v + "_z"], [v]))
            elif v in qp:
                out_nodes.append(N("QuantizeLinear", [v, v + "_s", v + "_z"], [v + "_q"]))
                out_nodes.append(N("DequantizeLinear", [v + "_q", v + "_s", v + "_z"], [v + "_dq"]))
    # the graph input
    gi = g.input[0].name
    if gi in qp:
        out_nodes.insert(0, N("DequantizeLinear", [gi + "_q", gi + "_s", gi + "_z"], [gi + "_dq"]))
        out_nodes.insert(0, N("QuantizeLinear", [gi, gi + "_s", gi + "_z"], [gi + "_q"]))
    del g.node[:]
    g.node.extend(out_nodes)
    used = {v for n in out_nodes for v in n.input}
    out_nodes = [n for n in out_nodes if n.op_type != "Constant" or n.output[0] in used]
    del g.node[:]
    g.node.extend(out_nodes)
    keep = [i for i in g.initializer if i.name in used]
    del g.initializer[:]
    g.initializer.extend(keep + new_inits)
    m.opset_import[0].version = max(m.opset_import[0].version, 13)
    onnx.checker.check_model(m)
    onnx.save(m, dst)


if __name__ == "__main__":
    main(*sys.argv[1:4])
