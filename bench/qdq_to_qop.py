#!/usr/bin/python3
"""Rewrites a QDQ model (bench/make_qdq.py's form) into ONNX Runtime's QOperator form, as
its quantizer writes it with QuantFormat.QOperator: DequantizeLinear -> Conv -> [Relu] ->
QuantizeLinear becomes QLinearConv, ... -> Add -> ... com.microsoft QLinearAdd,
GlobalAveragePool com.microsoft QLinearGlobalAveragePool, Gemm com.microsoft QGemm (a Relu
is dropped only where the output is u8 with zero point 0, where saturation is the Relu).
The rest (MaxPool, Flatten) stays in QDQ form. For kiln's contrib import against ONNX
Runtime on a whole model (docs/quantization.md).

    /usr/bin/python3 bench/qdq_to_qop.py IN.onnx OUT.onnx
"""
import sys

import onnx
from onnx import helper, numpy_helper

MS = "com.microsoft"


def main():
    m = onnx.load(sys.argv[1])
    g = m.graph
    inits = {t.name: t for t in g.initializer}
    prod = {o: n for n in g.node for o in n.output}
    drop, new = set(), {}

    def dq(v):
        n = prod.get(v)
        return n if n is not None and n.op_type == "DequantizeLinear" else None

    def zp_is_u8_zero(z):
        t = inits.get(z)
        return t is not None and t.data_type == onnx.TensorProto.UINT8 and \
            int(numpy_helper.to_array(t).reshape(-1)[0]) == 0

    def qin(d):  # (q, scale, zero point) of a DequantizeLinear
        return [d.input[0], d.input[1], d.input[2] if len(d.input) > 2 else ""]

    for q in g.node:
        if q.op_type != "QuantizeLinear":
            continue
        p = prod.get(q.input[0])
        relu = None
        if p is not None and p.op_type == "Relu":
            relu, p = p, prod.get(p.input[0])
        if p is None or (relu is not None and not zp_is_u8_zero(q.input[2])):
            continue
        ys = [q.input[1], q.input[2]]
        ds = [dq(v) for v in p.input]
        if p.op_type == "Conv" and all(ds[:2]) and (len(ds) < 3 or ds[2]):
            ins = qin(ds[0]) + qin(ds[1]) + ys + ([ds[2].input[0]] if len(ds) > 2 else [])
            n = helper.make_node("QLinearConv", ins, [q.output[0]], name=p.name)
            n.attribute.extend(p.attribute)
        elif p.op_type == "Add" and all(ds):
            n = helper.make_node("QLinearAdd", qin(ds[0]) + qin(ds[1]) + ys, [q.output[0]],
                                 name=p.name, domain=MS)
        elif p.op_type == "GlobalAveragePool" and ds[0] and relu is None:
            n = helper.make_node("QLinearGlobalAveragePool", qin(ds[0]) + ys, [q.output[0]],
                                 name=p.name, domain=MS, channels_last=0)
        elif p.op_type == "Gemm" and all(ds[:2]) and (len(ds) < 3 or ds[2]):
            ins = qin(ds[0]) + qin(ds[1]) + ([ds[2].input[0]] if len(ds) > 2 else [""]) + ys
            n = helper.make_node("QGemm", ins, [q.output[0]], name=p.name, domain=MS)
            n.attribute.extend(a for a in p.attribute if a.name != "beta")
        else:
            continue
        new[id(q)] = n
        drop.update({id(p), id(q)} | ({id(relu)} if relu is not None else set()))
    nodes = [new.get(id(n), n) for n in g.node if id(n) not in drop or id(n) in new]
    while True:  # dead DequantizeLinear nodes
        used = {i for n in nodes for i in n.input} | {o.name for o in g.output}
        keep = [n for n in nodes if any(o in used for o in n.output)]
        if len(keep) == len(nodes):
            break
        nodes = keep
    del g.node[:]
    g.node.extend(nodes)
    used = {i for n in nodes for i in n.input}
    keep = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(keep)
    del g.value_info[:]
    m.opset_import.append(helper.make_opsetid(MS, 1))
    onnx.save(m, sys.argv[2])
    ops = {}
    for n in nodes:
        ops[n.op_type] = ops.get(n.op_type, 0) + 1
    print(" ".join("%s %d" % kv for kv in sorted(ops.items())))


if __name__ == "__main__":
    main()
