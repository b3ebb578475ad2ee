#!/usr/bin/python3
"""Dynamically quantizes a float ONNX model the way ONNX Runtime's quantize_dynamic writes
it (default settings: int8 weights, symmetric, per tensor; uint8 activations), for the
benchmark of the dynq pass (docs/quantization.md, "Dynamic quantization"):

  every MatMul whose B is a constant 2-D tensor becomes
    DynamicQuantizeLinear(A) -> (Aq, As, Az)        (one per activation, shared)
    MatMulInteger(Aq, Bq, Az, Bz) -> Cast(to float) -> Mul(Cast, Mul(As, Bs))
  with Bs = max|B| / 127, Bq = round(B / Bs), Bz = 0.

Constants are followed through Identity, Transpose and Constant nodes (a torch export's
transposed weights). A Gemm (alpha = beta = 1, constant B) is first written as MatMul +
Add (ORT's dynamic quantizer leaves Gemm in float; the MLP of bench/make_models.py is
all Gemm), so its bias Add follows the quantized tail as a Linear's does.

    /usr/bin/python3 bench/make_dynq.py IN.onnx OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main(src, dst):
    m = onnx.load(src)
    g = m.graph
    const = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    for n in g.node:  # constants through Constant, Identity, Transpose
        if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value":
            const[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
        elif n.op_type == "Identity" and n.input[0] in const:
            const[n.output[0]] = const[n.input[0]]
        elif n.op_type == "Transpose" and n.input[0] in const:
            perm = [a.ints for a in n.attribute if a.name == "perm"]
            const[n.output[0]] = np.transpose(const[n.input[0]], perm[0] if perm else None)
    nodes, inits, dq = [], [], {}
    k = 0

    def quantize(a, b, out, name):
        nonlocal k
        k += 1
        if a not in dq:
            dq[a] = (a + "_quantized", a + "_scale", a + "_zero_point")
            nodes.append(helper.make_node("DynamicQuantizeLinear", [a], list(dq[a]),
                                          name=a + "_QuantizeLinear"))
        aq, as_, az = dq[a]
        s = np.float32(np.abs(b).max() / 127.0) if np.abs(b).max() > 0 else np.float32(1)
        q = np.clip(np.rint(b / s), -127, 127).astype(np.int8)
        inits.extend([numpy_helper.from_array(q, name + "_wq"),
                      numpy_helper.from_array(np.array(s, np.float32), name + "_ws"),
                      numpy_helper.from_array(np.int8(0), name + "_wz")])
        nodes.append(helper.make_node("MatMulInteger", [aq, name + "_wq", az, name + "_wz"],
                                      [name + "_acc"], name=name + "_MatMulInteger"))
        nodes.append(helper.make_node("Cast", [name + "_acc"], [name + "_cast"],
                                      to=TensorProto.FLOAT, name=name + "_cast"))
        nodes.append(helper.make_node("Mul", [as_, name + "_ws"], [name + "_scales"],
                                      name=name + "_scales_mul"))
        nodes.append(helper.make_node("Mul", [name + "_cast", name + "_scales"], [out],
                                      name=name + "_output_scale_mul"))

    for n in g.node:
        att = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        if n.op_type == "MatMul" and n.input[1] in const and const[n.input[1]].ndim == 2:
            quantize(n.input[0], const[n.input[1]].astype(np.float32), n.output[0], "mm%d" % k)
        elif (n.op_type == "Gemm" and n.input[1] in const and att.get("alpha", 1.0) == 1.0 and
              att.get("beta", 1.0) == 1.0 and not att.get("transA", 0)):
            b = const[n.input[1]].astype(np.float32)
            if att.get("transB", 0):
                b = b.T
            name = "gemm%d" % k
            if len(n.input) > 2 and n.input[2]:
                quantize(n.input[0], b, name + "_mm", name)
                nodes.append(helper.make_node("Add", [name + "_mm", n.input[2]], [n.output[0]],
                                              name=name + "_bias"))
            else:
                quantize(n.input[0], b, n.output[0], name)
        else:
            nodes.append(n)
    del g.node[:]
    g.node.extend(nodes)
    g.initializer.extend(inits)
    onnx.checker.check_model(m)
    onnx.save(m, dst)
    print("%s: %d layers quantized" % (dst, k))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
