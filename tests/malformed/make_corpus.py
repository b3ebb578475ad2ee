#!/usr/bin/python3
"""Writes the malformed-model corpus: for each case NAME, NAME.onnx (and NAME.npy
for run-time input cases) and NAME.expect, checked by tests/malformed/run.sh.

NAME.expect is one line, `CODE SUBSTRING`: the exit code kiln must return and a
substring of the one-line message it must print on stderr. An optional second line
gives the command instead of the default `compile`, with the model path and the
output folder added by the driver: `run --input x=@/NAME.npy` (@ is this folder).

Run from anywhere with Debian's python3 (it has the onnx package):
    /usr/bin/python3 tests/malformed/make_corpus.py [DIR]
The output is deterministic; regenerate and review the diff after changing a case.
"""
import os
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
CASES = []


def model(nodes, inputs, outputs, inits=(), opset=13, extra_opsets=(), check=False):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    ops = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    m = helper.make_model(g, opset_imports=ops, producer_name="kiln-malformed")
    m.ir_version = 8
    if check:
        onnx.checker.check_model(m)
    return m


def vi(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def relu_model(**kw):
    return model([helper.make_node("Relu", ["x"], ["y"], name="n0")], [vi("x", [2, 3])],
                 [vi("y", [2, 3])], **kw)


def case(name, data, code, expect, cmd=None):
    """data: a ModelProto or raw bytes."""
    if not isinstance(data, (bytes, bytearray)):
        data = data.SerializeToString()
    CASES.append(name)
    with open(os.path.join(OUT, name + ".onnx"), "wb") as f:
        f.write(data)
    with open(os.path.join(OUT, name + ".expect"), "w") as f:
        f.write("%d %s\n" % (code, expect))
        if cmd:
            f.write(cmd + "\n")


def tensor(name, dims, raw=None, floats=None):
    """A float TensorProto built field by field: helper.make_tensor checks sizes."""
    t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=list(dims))
    if raw is not None:
        t.raw_data = raw
    if floats is not None:
        t.float_data.extend(floats)
    return t


def npy(name, arr):
    with open(os.path.join(OUT, name + ".npy"), "wb") as f:
        np.save(f, arr)


def conv_model(kernel_attr, w_shape=(4, 3, 3, 3)):
    w = helper.make_tensor("W", TensorProto.FLOAT, w_shape,
                           np.zeros(w_shape, np.float32).tobytes(), raw=True)
    node = helper.make_node("Conv", ["x", "W"], ["y"], name="n0")
    if kernel_attr is not None:
        node.attribute.append(kernel_attr)
    return model([node], [vi("x", [1, 3, 8, 8])], [vi("y", None)], inits=[w])


# ---- not a valid protobuf
good = relu_model(check=True).SerializeToString()
case("truncated", good[: len(good) * 2 // 3], 1, "not an ONNX model")
case("not_protobuf", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xff\xff\xff", 1, "not an ONNX model")
case("empty", b"", 1, "the file is empty, not an ONNX model")
# field 7 (graph) sent as a varint instead of a length-delimited message
case("wrong_wire_type", bytes([0x08, 0x08, 0x38, 0x05]), 1, "not an ONNX model")
# field 1 (ir_version) sent as a length-delimited string
case("wrong_wire_type_int", bytes([0x0A, 0x03]) + b"abc" + good, 1, "not an ONNX model")

# ---- shapes and tensor data
neg = relu_model()
neg.graph.input[0].type.tensor_type.shape.dim[0].dim_value = -3
case("negative_dim_input", neg, 1, "graph input 'x' has negative dimension -3")
w = tensor("W", [-1, 2])
case("negative_dim_initializer",
     model([helper.make_node("Add", ["x", "W"], ["y"], name="n0")], [vi("x", [2])], [vi("y", [2])],
           inits=[w]), 1, "tensor 'W' has negative dimension -1")
case("zero_dim_kernel", conv_model(None, w_shape=(4, 3, 0, 3)), 1,
     "node 'n0' (Conv): the kernel is empty: weight dimension 2 is 0")
big = tensor("W", [1 << 32, 1 << 32, 16])
case("dims_overflow",
     model([helper.make_node("Add", ["x", "W"], ["y"], name="n0")], [vi("x", [1])], [vi("y", None)],
           inits=[big]), 1, "tensor 'W': product of dimensions overflows")
ovf = relu_model()
for d, v in zip(ovf.graph.input[0].type.tensor_type.shape.dim, [1 << 40, 1 << 40]):
    d.dim_value = v
case("dims_overflow_input", ovf, 1, "graph input 'x': product of dimensions overflows")
w = tensor("W", [2, 2], raw=b"\0" * 12)
case("data_size_mismatch",
     model([helper.make_node("Add", ["x", "W"], ["y"], name="n0")], [vi("x", [2, 2])],
           [vi("y", [2, 2])], inits=[w]), 1, "tensor 'W' has 12 bytes of raw data, its shape")
w = tensor("W", [2, 2], floats=[1.0, 2.0, 3.0])
case("data_count_mismatch",
     model([helper.make_node("Add", ["x", "W"], ["y"], name="n0")], [vi("x", [2, 2])],
           [vi("y", [2, 2])], inits=[w]), 1, "tensor 'W' has 3 elements of data, its shape")
deep = relu_model()
deep.graph.input[0].type.tensor_type.shape.ClearField("dim")
for _ in range(9):
    deep.graph.input[0].type.tensor_type.shape.dim.add().dim_value = 1
case("rank_too_high", deep, 1, "graph input 'x' has rank 9")

# ---- graph structure
case("missing_initializer",
     model([helper.make_node("Conv", ["x", "W"], ["y"], name="n0")], [vi("x", [1, 3, 8, 8])],
           [vi("y", None)]), 1, "node 'n0' (Conv): input 'W' is never defined")
w = helper.make_tensor("W", TensorProto.FLOAT, [2], [1.0, 2.0])
case("duplicate_initializer",
     model([helper.make_node("Add", ["x", "W"], ["y"], name="n0")], [vi("x", [2])], [vi("y", [2])],
           inits=[w, w]), 1, "initializer 'W' is defined twice")
case("cycle",
     model([helper.make_node("Add", ["x", "b"], ["a"], name="n0"),
            helper.make_node("Relu", ["a"], ["b"], name="n1")], [vi("x", [2])], [vi("b", [2])]), 1,
     "the graph has a cycle: node 'n0' (Add) -> node 'n1' (Relu) -> node 'n0' (Add)")
case("dangling_input",
     model([helper.make_node("Relu", ["x"], ["a"], name="n0"),
            helper.make_node("Add", ["a", "ghost"], ["y"], name="n1")], [vi("x", [2])],
           [vi("y", [2])]), 1, "node 'n1' (Add): input 'ghost' is never defined")
case("dangling_output",
     model([helper.make_node("Relu", ["x"], ["y"], name="n0")], [vi("x", [2])], [vi("z", [2])]), 1,
     "graph output 'z' is never computed")
case("duplicate_output",
     model([helper.make_node("Relu", ["x"], ["y"], name="n0"),
            helper.make_node("Relu", ["x"], ["y"], name="n1")], [vi("x", [2])], [vi("y", [2])]), 1,
     "node 'n1' (Relu): output 'y' is already defined")
case("too_many_inputs",
     model([helper.make_node("Relu", ["x", "x"], ["y"], name="n0")], [vi("x", [2])],
           [vi("y", [2])]), 1, "node 'n0' (Relu): has 2 inputs, expected 1 to 1")

# ---- operators, domains, opsets
case("unknown_op",
     model([helper.make_node("Frobnicate", ["x"], ["y"], name="n0")], [vi("x", [2])],
           [vi("y", [2])]), 1, "node 'n0' (Frobnicate): operator 'Frobnicate' is not supported")
case("unknown_domain",
     model([helper.make_node("Relu", ["x"], ["y"], name="n0", domain="com.example")],
           [vi("x", [2])], [vi("y", [2])], extra_opsets=[("com.example", 1)]), 1,
     "node 'n0' (Relu): domain 'com.example' is not supported")
adam = helper.make_node("Adam", ["r", "t", "x", "g", "v", "h"], ["x2", "v2", "h2"], name="n0",
                        domain="ai.onnx.preview.training")
case("domain_not_imported",
     model([adam], [vi(v, [2]) for v in "rtxgvh"], [vi("x2", [2])]), 1,
     "node 'n0' (Adam): the model imports no opset for domain 'ai.onnx.preview.training'")
case("ml_op_unsupported",
     model([helper.make_node("LinearRegressor", ["x"], ["y"], name="n0", domain="ai.onnx.ml")],
           [vi("x", [1, 2])], [vi("y", None)], extra_opsets=[("ai.onnx.ml", 3)]), 1,
     "node 'n0' (LinearRegressor): operator 'LinearRegressor' (domain 'ai.onnx.ml') is not "
     "supported")
# com.microsoft: only the quantized contrib operators (frontend/onnx_contrib.c)
MS = [("com.microsoft", 1)]
case("ms_op_unsupported",
     model([helper.make_node("FusedGemm", ["x", "x"], ["y"], name="n0", domain="com.microsoft")],
           [vi("x", [2, 2])], [vi("y", [2, 2])], extra_opsets=MS), 1,
     "node 'n0' (FusedGemm): operator 'FusedGemm' (domain 'com.microsoft') is not supported; "
     "kiln imports only DequantizeLinear, QGemm, QLinearAdd")
case("ms_not_imported",
     model([helper.make_node("QLinearSigmoid", ["x", "s", "z", "s", "z"], ["y"], name="n0",
                             domain="com.microsoft")],
           [vi("x", [2], TensorProto.UINT8), vi("s", []), vi("z", [], TensorProto.UINT8)],
           [vi("y", [2], TensorProto.UINT8)]), 1,
     "node 'n0' (QLinearSigmoid): the model imports no opset for domain 'com.microsoft'")
case("ms_arity",
     model([helper.make_node("QLinearAdd", ["x", "s", "z", "x", "s"], ["y"], name="n0",
                             domain="com.microsoft")],
           [vi("x", [2], TensorProto.UINT8), vi("s", []), vi("z", [], TensorProto.UINT8)],
           [vi("y", [2], TensorProto.UINT8)], extra_opsets=MS), 1,
     "node 'n0' (QLinearAdd): has 5 inputs, expected 7 to 8")
case("ms_concat_triples",
     model([helper.make_node("QLinearConcat", ["s", "z", "x", "s", "z", "x"], ["y"], name="n0",
                             axis=0, domain="com.microsoft")],
           [vi("x", [2], TensorProto.UINT8), vi("s", []), vi("z", [], TensorProto.UINT8)],
           [vi("y", [4], TensorProto.UINT8)], extra_opsets=MS), 1,
     "node 'n0' (QLinearConcat): has 6 inputs; expected Y_scale, Y_zero_point and then")
case("ms_scale_omitted",
     model([helper.make_node("QLinearMul", ["x", "", "z", "x", "s", "z", "s", "z"], ["y"],
                             name="n0", domain="com.microsoft")],
           [vi("x", [2], TensorProto.UINT8), vi("s", []), vi("z", [], TensorProto.UINT8)],
           [vi("y", [2], TensorProto.UINT8)], extra_opsets=MS), 1,
     "node 'n0' (QLinearMul): input 1 is required (it is omitted)")
case("ms_softmax_opset",
     model([helper.make_node("QLinearSoftmax", ["x", "s", "z", "s", "z"], ["y"], name="n0",
                             domain="com.microsoft")],
           [vi("x", [2], TensorProto.UINT8), vi("s", []), vi("z", [], TensorProto.UINT8)],
           [vi("y", [2], TensorProto.UINT8)], extra_opsets=MS), 1,
     "node 'n0' (QLinearSoftmax): attribute 'opset' (the Softmax opset whose axis semantics")
case("ms_attr_type",
     model([helper.make_node("QLinearLeakyRelu", ["x", "s", "z", "s", "z"], ["y"], name="n0",
                             alpha=1, domain="com.microsoft")],
           [vi("x", [2], TensorProto.UINT8), vi("s", []), vi("z", [], TensorProto.UINT8)],
           [vi("y", [2], TensorProto.UINT8)], extra_opsets=MS), 1,
     "node 'n0' (QLinearLeakyRelu): attribute 'alpha' has type")
case("opset_future", relu_model(opset=99), 1, "opset 99 is newer than the newest supported")
case("opset_huge", relu_model(opset=1 << 40), 1, "opset 1099511627776 is newer than")
case("opset_zero", relu_model(opset=0), 1, "opset import for domain '' has invalid version 0")
case("opset_training_future",
     model([adam], [vi(v, [2]) for v in "rtxgvh"], [vi("x2", [2])],
           extra_opsets=[("ai.onnx.preview.training", 99)]), 1,
     "domain 'ai.onnx.preview.training' opset 99 is newer than the newest supported (1)")
case("opset_ml_future",
     model([helper.make_node("Relu", ["x"], ["y"], name="n0")], [vi("x", [2])], [vi("y", [2])],
           extra_opsets=[("ai.onnx.ml", 99)]), 1, "domain 'ai.onnx.ml' opset 99 is newer than")

# ---- attributes
bad = helper.make_attribute("kernel_shape", "3x3")
case("attr_wrong_type", conv_model(bad), 1, "node 'n0' (Conv): attribute 'kernel_shape'")
bad = helper.make_attribute("kernel_shape", [3, 3])
bad.type = onnx.AttributeProto.FLOAT  # the ints are set, the declared type disagrees
case("attr_type_mismatch", conv_model(bad), 1, "node 'n0' (Conv): attribute 'kernel_shape'")
dup = helper.make_node("Conv", ["x", "W"], ["y"], name="n0", kernel_shape=[3, 3])
dup.attribute.append(helper.make_attribute("kernel_shape", [3, 3]))
w = helper.make_tensor("W", TensorProto.FLOAT, (4, 3, 3, 3), np.zeros(108, np.float32).tobytes(),
                       raw=True)
case("attr_duplicate", model([dup], [vi("x", [1, 3, 8, 8])], [vi("y", None)], inits=[w]), 1,
     "node 'n0' (Conv): attribute 'kernel_shape' appears twice")
many = helper.make_node("Relu", ["x"], ["y"], name="n0")
for i in range(1025):  # a real node has a few dozen at most; 100,000 once took 150 s
    many.attribute.append(helper.make_attribute("a%d" % i, i))
case("attr_count_huge",
     model([many], [vi("x", [2])], [vi("y", [2])]), 1, "node 'n0' (Relu): has 1025 attributes, more than 1024")

# ---- subgraphs nested 100 deep (kiln allows 64)
def nested_if(depth):
    out = "y"
    branch = helper.make_graph([helper.make_node("Identity", ["x"], [out + "_0"], name="leaf")], "leaf",
                               [], [vi(out + "_0", [2])])
    leaf = branch
    for level in range(1, depth + 1):  # the then branch nests, the else branch is a leaf
        o = "%s_%d" % (out, level)
        node = helper.make_node("If", ["c"], [o], name="if%d" % level, then_branch=branch,
                                else_branch=leaf)
        branch = helper.make_graph([node], "g%d" % level, [], [vi(o, [2])])
    return branch.node[0]


top = nested_if(100)
top.output[0] = "y"
case("nested_if_100",
     model([top], [vi("x", [2]), vi("c", [], TensorProto.BOOL)], [vi("y", [2])]), 1,
     "node 'if36' (If): attribute 'else_branch': subgraphs nested deeper than 64")

# ---- external data
def external(location, length=8):
    w = tensor("W", [2])
    w.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", "0"), ("length", str(length))):
        e = w.external_data.add()
        e.key, e.value = k, v
    return model([helper.make_node("Add", ["x", "W"], ["y"], name="n0")], [vi("x", [2])],
                 [vi("y", [2])], inits=[w])


case("external_absolute", external("/etc/passwd"), 1,
     "external data path '/etc/passwd' leaves the model's folder")
case("external_dotdot", external("../../../etc/passwd"), 1,
     "external data path '../../../etc/passwd' leaves the model's folder")
case("external_missing", external("no_such_weights.bin"), 1,
     "cannot open external data 'no_such_weights.bin'")
case("external_wrong_length", external("x.bin", length=4), 1,
     "external data length 4 does not match its shape (8 bytes)")

# ---- run-time inputs that contradict the model
case("input_wrong_shape", relu_model(check=True), 1, "input_wrong_shape.npy",
     cmd="run --input x=@/input_wrong_shape.npy")
npy("input_wrong_shape", np.zeros((3, 2), np.float32))
case("input_wrong_dtype", relu_model(check=True), 1, "input_wrong_dtype.npy",
     cmd="run --input x=@/input_wrong_dtype.npy")
npy("input_wrong_dtype", np.zeros((2, 3), np.int64))
case("input_unknown_name", relu_model(check=True), 1, "the model has no input 'q'",
     cmd="run --input q=@/input_unknown_name.npy")
npy("input_unknown_name", np.zeros((2, 3), np.float32))

# ---- AffineGrid (20) and DeformConv (19) with inputs that do not fit
def affine(theta_shape, size):
    sz = helper.make_tensor("size", TensorProto.INT64, (len(size),), size)
    return model([helper.make_node("AffineGrid", ["theta", "size"], ["y"], name="ag")],
                 [vi("theta", theta_shape)], [vi("y", None)], inits=[sz], opset=20)


case("affinegrid_theta_shape", affine([1, 2, 3], [1, 1, 4, 4, 4]), 1,
     "node 'ag' (AffineGrid): theta is [1, 2, 3], expected [1, 3, 4] for size of 5 values")
case("affinegrid_size_count", affine([1, 2, 3], [1, 1, 4]), 1,
     "node 'ag' (AffineGrid): size has 3 values, expected 4 (2-D) or 5 (3-D)")


def deform(x_shape, w_shape, off_shape):
    w = helper.make_tensor("w", TensorProto.FLOAT, w_shape, np.ones(int(np.prod(w_shape)), np.float32))
    return model([helper.make_node("DeformConv", ["x", "w", "off"], ["y"], name="dc")],
                 [vi("x", x_shape), vi("off", off_shape)], [vi("y", None)], inits=[w], opset=19)


case("deformconv_offset_shape", deform([1, 2, 5, 5], [3, 2, 3, 3], [1, 8, 3, 3]), 1,
     "node 'dc' (DeformConv): offset has shape f32[1,8,3,3], expected [1, 18, 3, 3]")
case("deformconv_4d", deform([1, 2, 5, 5, 5, 5], [3, 2, 3, 3, 3, 3], [1, 324, 3, 3, 3, 3]), 1,
     "node 'dc' (DeformConv): input and weights have ranks 6 and 6: DeformConv takes 1 to 3 "
     "spatial axes")
case("deformconv_3d_offset_shape", deform([1, 2, 4, 4, 4], [3, 2, 2, 2, 2], [1, 16, 3, 3, 3]),
     1, "node 'dc' (DeformConv): offset has shape f32[1,16,3,3,3], expected [1, 24, 3, 3, 3]")

case("stringconcat_shapes",
     model([helper.make_node("StringConcat", ["a", "b"], ["y"], name="sc")],
           [vi("a", [2], TensorProto.STRING), vi("b", [3], TensorProto.STRING)],
           [vi("y", None, TensorProto.STRING)], opset=20), 1,
     "node 'sc' (StringConcat): input shapes cannot be broadcast: dim 0 is 2 and 3")

def strings_model(op, outs, **attrs):
    return model([helper.make_node(op, ["x"], outs, name="s0", **attrs)],
                 [vi("x", [2], TensorProto.STRING)],
                 [vi(o, None, {"sub": TensorProto.STRING, "len": TensorProto.INT64}.get(o, TensorProto.BOOL))
                  for o in outs], opset=20)


case("regex_unicode_class", strings_model("RegexFullMatch", ["y"], pattern=r"\p{L}+"), 1,
     "node 's0' (RegexFullMatch): pattern '\\p{L}+': Unicode classes (\\p) are not supported")
case("regex_no_pattern", strings_model("RegexFullMatch", ["y"]), 1,
     "node 's0' (RegexFullMatch): attribute 'pattern' is required")
case("regex_firmware", strings_model("RegexFullMatch", ["y"], pattern="a+"), 1,
     "node 's0' (RegexFullMatch): RegexFullMatch calls the C library's <regex.h>",
     cmd="compile --target cortex-m4")
case("stringsplit_data_width", strings_model("StringSplit", ["sub", "len"]), 1,
     "node 's0' (StringSplit): value 'sub' has shape string[2,?], not known at compile time: "
     "this StringSplit's output shape depends on the data of its inputs")

# ---- resource limits on a valid model: two 3x3 convolutions, 8 channels between them
# (an arena of 8x6x6 floats, 1152 bytes; weights of 8x3x3x3 + 2x8x3x3 floats, 1440 bytes;
# with the stem pass's phase-split input copy and packing 1920 and 2032 bytes, 33ed0f0)
w1 = helper.make_tensor("W1", TensorProto.FLOAT, (8, 3, 3, 3), np.ones(216, np.float32))
w2 = helper.make_tensor("W2", TensorProto.FLOAT, (2, 8, 3, 3), np.ones(144, np.float32))
convs = model([helper.make_node("Conv", ["x", "W1"], ["a"], name="c1"),
               helper.make_node("Conv", ["a", "W2"], ["y"], name="c2")], [vi("x", [1, 3, 8, 8])],
              [vi("y", [1, 2, 4, 4])], inits=[w1, w2], check=True)
case("limit_arena", convs, 1, "arena needs 1920 bytes, more than --max-arena 1024",
     cmd="compile --target generic --max-arena 1K")
case("limit_weights", convs, 1, "weights need 2032 bytes, more than --max-weights 1024",
     cmd="compile --target generic --max-weights 1k")

# ---- sizes past what a memory plan or a window's arithmetic can hold (int64 dimensions
# that are valid but huge; the sums and products used to wrap silently or overflow)
def constants(n, count, dtype=TensorProto.INT64):
    """count live ConstantOfShape outputs of n elements each, added and reduced to y."""
    nodes = [helper.make_node("Constant", [], ["shape"], name="shape",
                              value=helper.make_tensor("s", TensorProto.INT64, [1], [n]))]
    for i in range(count):
        nodes.append(helper.make_node("ConstantOfShape", ["shape"], ["big%d" % i], name="fill%d" % i,
                                      value=helper.make_tensor("v", dtype, [1], [i + 1])))
    acc = "big0"
    for i in range(1, count):
        nodes.append(helper.make_node("Add", [acc, "big%d" % i], ["sum%d" % i], name="add%d" % i))
        acc = "sum%d" % i
    nodes.append(helper.make_node("ReduceMax", [acc], ["r"], name="max", keepdims=0))
    nodes.append(helper.make_node("Cast", ["r"], ["rf"], name="cast", to=TensorProto.FLOAT))
    nodes.append(helper.make_node("Add", ["x", "rf"], ["y"], name="out"))
    return model(nodes, [vi("x", [1])], [vi("y", [1])], opset=17)


# 2^61 int64 elements are 2^64 bytes: planned as 0 (an arena of 128 bytes) on every target
case("plan_buffer_wraps", constants(1 << 61, 1), 1,
     "node 'fill0' (ConstantOfShape): the memory plan would pass 1152921504606846975 bytes, the "
     "most it may hold, at buffer 't3' (value 'big0'): 2305843009213693952 elements of 8 bytes, "
     "after 0 bytes", cmd="compile --target x86-64-avx512")
# two buffers of 2^59 bytes: each fits, together they pass 2^60 - 1
case("plan_sum_past_bound", constants(1 << 56, 2), 1,
     "node 'fill1' (ConstantOfShape): the memory plan would pass 1152921504606846975 bytes, the "
     "most it may hold, at buffer 't4' (value 'big1'): 72057594037927936 elements of 8 bytes, "
     "after 576460752303423488 bytes", cmd="compile --target aarch64")
# 8 GiB on a 32-bit microcontroller, under the plan's bound
case("plan_arena_4gib", constants(1 << 30, 1), 1,
     "node 'fill0' (ConstantOfShape): the memory plan needs an arena of 8589934656 bytes, more "
     "than the 4 GiB target cortex-m4 addresses (its largest buffer: 't3' (value 'big0'), "
     "8589934592 bytes)", cmd="compile --target cortex-m4")


def conv_attrs(**attrs):
    w = helper.make_tensor("W", TensorProto.FLOAT, (1, 1, 3, 1), np.ones(3, np.float32))
    return model([helper.make_node("Conv", ["x", "W"], ["y"], name="conv0", **attrs)],
                 [vi("x", [1, 1, 4, 4])], [vi("y", None)], inits=[w])


case("conv_dilation_overflow", conv_attrs(dilations=[1 << 62, 1]), 1,
     "node 'conv0' (Conv): kernel extent (3 - 1) x dilation 4611686018427387904 + 1 on axis 2 "
     "is past int64", cmd="compile --target generic")
case("conv_pads_overflow", conv_attrs(pads=[1 << 62, 0, 1 << 62, 0]), 1,
     "node 'conv0' (Conv): padded extent 4 + 4611686018427387904 + 4611686018427387904 on axis 2 "
     "is past int64", cmd="compile --target generic")

# each output dimension fits, their product (4.6e18 x 4) does not (fuzz_codegen, from the last)
case("conv_output_numel_overflow", conv_attrs(pads=[1 << 62, 0, 0, 0]), 1,
     "node 'conv0' (Conv): output 0 of shape f32[1,1,4611686018427387906,4]: product of "
     "dimensions overflows", cmd="compile --target generic")


def qconv_attrs(**attrs):
    u8 = TensorProto.UINT8
    inits = [helper.make_tensor("W", u8, (1, 1, 3, 1), [1, 1, 1]),
             helper.make_tensor("xs", TensorProto.FLOAT, (), [0.5]),
             helper.make_tensor("xz", u8, (), [0]),
             helper.make_tensor("ws", TensorProto.FLOAT, (), [0.5]),
             helper.make_tensor("wz", u8, (), [0]),
             helper.make_tensor("ys", TensorProto.FLOAT, (), [0.5]),
             helper.make_tensor("yz", u8, (), [0])]
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "W", "ws", "wz", "ys", "yz"], ["y"],
                            name="qconv0", **attrs)
    return model([node], [vi("x", [1, 1, 4, 4], u8)], [vi("y", None, u8)], inits=inits)


case("qlinearconv_dilation_overflow", qconv_attrs(dilations=[1 << 62, 1]), 1,
     "node 'qconv0' (QLinearConv): kernel extent (3 - 1) x dilation 4611686018427387904 + 1 on "
     "axis 2 is past int64", cmd="compile --target generic")
case("qlinearconv_pads_overflow", qconv_attrs(pads=[(1 << 63) - 1, 0, 1, 0]), 1,
     "node 'qconv0' (QLinearConv): padded extent 4 + 9223372036854775807 + 1 on axis 2 is past "
     "int64", cmd="compile --target generic")

with open(os.path.join(OUT, "cases.txt"), "w") as f:
    f.write("\n".join(CASES) + "\n")
print("wrote %d cases to %s" % (len(CASES), OUT))
