#!/usr/bin/python3
"""Writes the real-model corpus tests/models/*/ (model.onnx + test_data_set_N): small
models in the shapes that exporters and publishers actually produce, with reference
outputs from ONNX Runtime (npm's onnxruntime-node) cross-checked against torch or
numpy where they can be. CTest runs each through the interpreter, C, LLVM and OpenCL
with `kiln check-onnx` (tests/CMakeLists.txt); nothing here runs at test time.

usage: /usr/bin/python3 tests/models/make_models.py [NAME...]   (default: all)
Needs ORT_NODE (see casegen.py). Deterministic: seeded."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from casegen import HERE, check_close, ort_run, write_case  # noqa: E402

rng = np.random.default_rng(15)


def init(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def const(name, a):
    return helper.make_node("Constant", [], [name], name=name, value=init(name, a))


def i64(*v):
    return np.array(v, dtype=np.int64)


def conv_w(co, ci, k):
    return (rng.standard_normal((co, ci) + k) / np.sqrt(ci * np.prod(k))).astype(np.float32)


def model(nodes, inputs, outputs, inits=(), opset=17, ir=8, functions=(), extra_opsets=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    ops = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    m = helper.make_model(g, opset_imports=ops, producer_name="kiln-tests")
    m.ir_version = ir
    m.functions.extend(functions)
    return m


def vi(name, t, shape):
    return helper.make_tensor_value_info(name, t, shape)


# ---- an If on a run-time flag (voice-activity detectors pick a branch by sample rate)

def if_branch(name, frame, k):
    """x: f32[1, N] framed into [1, N/frame, frame] -> Conv1d (4 channels, kernel k,
    stride k) over the frames -> mean over time -> [1, 4]."""
    w = conv_w(4, 1, (k,))
    nodes = [
        const(name + "_shape", i64(1, -1, frame)),
        helper.make_node("Reshape", ["x", name + "_shape"], [name + "_frames"], name=name + "/Reshape"),
        const(name + "_axes", i64(1)),
        # an 8 kHz frame of 256 samples is one row: [1, 1, 256] -> [1, 256]; for 16 kHz
        # inputs of 512 samples this Squeeze cannot run (the axis has extent 2)
        helper.make_node("Squeeze", [name + "_frames", name + "_axes"], [name + "_sq"],
                         name=name + "/Squeeze") if frame == 256 else
        helper.make_node("ReduceMean", [name + "_frames"], [name + "_sq"], axes=[1], keepdims=0,
                         name=name + "/ReduceMean"),
        const(name + "_ax0", i64(1)),
        helper.make_node("Unsqueeze", [name + "_sq", name + "_ax0"], [name + "_c"],
                         name=name + "/Unsqueeze"),
        helper.make_node("Conv", [name + "_c", name + "_w"], [name + "_conv"], strides=[k],
                         name=name + "/Conv"),
        helper.make_node("Relu", [name + "_conv"], [name + "_relu"], name=name + "/Relu"),
        helper.make_node("ReduceMean", [name + "_relu"], [name + "_out"], axes=[2], keepdims=0,
                         name=name + "/Mean"),
    ]
    return helper.make_graph(nodes, name, [], [vi(name + "_out", TensorProto.FLOAT, None)],
                             [init(name + "_w", w)])


def make_if_flag():
    """sr == 16000 ? branch over 512-sample frames : branch over 256-sample frames. With x
    fixed at [1, 512] the else branch cannot run (its Squeeze), so kiln compiles it to a
    run-time error and warns; the test runs the 16 kHz branch. Then the output is
    unsqueezed (the rank must survive the If)."""
    nodes = [
        const("sr16k", i64(16000)),
        helper.make_node("Equal", ["sr", "sr16k"], ["is16k"], name="Equal_0"),
        helper.make_node("If", ["is16k"], ["p"], name="If_25",
                         then_branch=if_branch("then", 512, 8),
                         else_branch=if_branch("else", 256, 4)),
        const("ax", i64(1)),
        helper.make_node("Unsqueeze", ["p", "ax"], ["pu"], name="/Unsqueeze"),
        helper.make_node("Sigmoid", ["pu"], ["prob"], name="/Sigmoid"),
    ]
    m = model(nodes, [vi("x", TensorProto.FLOAT, [1, "N"]), vi("sr", TensorProto.INT64, [])],
              [vi("prob", TensorProto.FLOAT, [1, 1, 4])])
    x = rng.standard_normal((1, 512)).astype(np.float32)
    sr = np.array(16000, dtype=np.int64)
    return m, [([x, sr], ort_run(m, {"x": x, "sr": sr}))]


def make_if_flag_both():
    """The same If where both branches can run for x: f32[1, 256]: both are compiled and
    the flag picks one at run time (one test data set per flag value)."""
    nodes = [
        const("sr16k", i64(16000)),
        helper.make_node("Equal", ["sr", "sr16k"], ["is16k"], name="Equal_0"),
        helper.make_node("If", ["is16k"], ["p"], name="If_25",
                         then_branch=if_branch("then", 128, 8),
                         else_branch=if_branch("else", 256, 4)),
        const("ax", i64(1)),
        helper.make_node("Unsqueeze", ["p", "ax"], ["pu"], name="/Unsqueeze"),
        helper.make_node("Sigmoid", ["pu"], ["prob"], name="/Sigmoid"),
    ]
    m = model(nodes, [vi("x", TensorProto.FLOAT, [1, "N"]), vi("sr", TensorProto.INT64, [])],
              [vi("prob", TensorProto.FLOAT, [1, 1, 4])])
    sets = []
    for s in (16000, 8000):
        x = rng.standard_normal((1, 256)).astype(np.float32)
        sr = np.array(s, dtype=np.int64)
        sets.append(([x, sr], ort_run(m, {"x": x, "sr": sr})))
    return m, sets


def shape_if(p, x, inner):
    """A torch-exported RNN's rank test (silero VAD): If(Size(Shape(x)) == 2), constant
    once x's shape is fixed, its then branch = `inner` (nodes, output), its else branch
    an Unsqueeze to the same rank."""
    return [
        helper.make_node("Shape", [x], [p + "_shape"], name=p + "/Shape"),
        helper.make_node("Size", [p + "_shape"], [p + "_size"], name=p + "/Size"),
        const(p + "_two", i64(2)),
        helper.make_node("Equal", [p + "_size", p + "_two"], [p + "_eq"], name=p + "/Equal"),
        helper.make_node("If", [p + "_eq"], [p + "_out"], name=p + "/If",
                         then_branch=helper.make_graph(
                             inner[0], p + "_then", [],
                             [vi(inner[1], TensorProto.FLOAT, None)]),
                         else_branch=helper.make_graph(
                             [const(p + "_eax", i64(0)),
                              helper.make_node("Unsqueeze", [x, p + "_eax"], [p + "_e"],
                                               name=p + "/else/Unsqueeze")],
                             p + "_else", [], [vi(p + "_e", TensorProto.FLOAT, None)])),
    ]


def nested(p, x, scale):
    """shape_if(shape_if(Unsqueeze(x)) * scale): the inner If's output is read by a node
    of the outer If's branch (silero VAD's decoder/rnn/If -> Unsqueeze_3)."""
    inner = shape_if(p + "/in", x, ([const(p + "/in_ax", i64(0)),
                                     helper.make_node("Unsqueeze", [x, p + "/in_ax"],
                                                      [p + "/in_u"], name=p + "/in/Unsqueeze")],
                                    p + "/in_u"))
    inner += [const(p + "_k", np.array(scale, dtype=np.float32)),
              helper.make_node("Mul", [p + "/in_out", p + "_k"], [p + "_m"], name=p + "/Mul")]
    return shape_if(p, x, (inner, p + "_m"))


def make_if_nested():
    """Nested Ifs on conditions that fold once the input shape is fixed (silero VAD v5,
    v6, 16k_op15, half from npm): at the top level, and inside both branches of an If
    on the run-time sr flag. kiln takes each constant If's branch; a nested one's output
    must be renamed in the nodes of the branch taken before it (issue 15)."""
    top = nested("/top", "x", 2.0)
    br = lambda p, k: helper.make_graph(  # noqa: E731
        nested(p, "x", k), p, [], [vi(p + "_out", TensorProto.FLOAT, None)])
    nodes = top + [
        helper.make_node("Relu", ["/top_out"], ["a"], name="/top/Relu"),
        const("sr16k", i64(16000)),
        helper.make_node("Equal", ["sr", "sr16k"], ["is16k"], name="Equal_0"),
        helper.make_node("If", ["is16k"], ["b0"], name="If_0",
                         then_branch=br("/then", 3.0), else_branch=br("/else", -1.0)),
        helper.make_node("Sigmoid", ["b0"], ["b"], name="/Sigmoid"),
    ]
    m = model(nodes, [vi("x", TensorProto.FLOAT, [1, "N"]), vi("sr", TensorProto.INT64, [])],
              [vi("a", TensorProto.FLOAT, None), vi("b", TensorProto.FLOAT, None)], opset=16)
    sets = []
    for s in (16000, 8000):
        x = rng.standard_normal((1, 8)).astype(np.float32)
        sr = np.array(s, dtype=np.int64)
        sets.append(([x, sr], ort_run(m, {"x": x, "sr": sr})))
    return m, sets


# ---- a PaddlePaddle-style export (paddle2onnx names nodes and values p2o.OP.N and
# computes shapes in the graph: Shape -> Slice/Gather -> Cast -> arithmetic -> Concat)

def make_paddle_style():
    c = 8
    w1, w2 = conv_w(c, 3, (3, 3)), conv_w(c, c, (3, 3))
    b = (rng.standard_normal((c, 1, 1)) * 0.1).astype(np.float32)
    P = "p2o."
    nodes = [
        helper.make_node("Conv", ["x", P + "w1"], [P + "Conv.0"], pads=[1, 1, 1, 1], name=P + "Conv.0"),
        helper.make_node("Relu", [P + "Conv.0"], [P + "Relu.0"], name=P + "Relu.0"),
        # upsample x2 with sizes computed from the feature map's shape
        helper.make_node("Shape", [P + "Relu.0"], [P + "Shape.6"], name=P + "Shape.6"),
        const(P + "Constant.0", i64(2)), const(P + "Constant.1", i64(4)), const(P + "Constant.2", i64(0)),
        helper.make_node("Slice", [P + "Shape.6", P + "Constant.0", P + "Constant.1", P + "Constant.2"],
                         [P + "Slice.2"], name=P + "Slice.2"),
        helper.make_node("Cast", [P + "Slice.2"], [P + "Cast.0"], to=TensorProto.FLOAT, name=P + "Cast.0"),
        const(P + "Constant.3", np.array([2.0], dtype=np.float32)),
        helper.make_node("Mul", [P + "Cast.0", P + "Constant.3"], [P + "Mul.0"], name=P + "Mul.0"),
        helper.make_node("Cast", [P + "Mul.0"], [P + "Cast.1"], to=TensorProto.INT64, name=P + "Cast.1"),
        helper.make_node("Slice", [P + "Shape.6", P + "Constant.2", P + "Constant.0", P + "Constant.2"],
                         [P + "Slice.3"], name=P + "Slice.3"),
        helper.make_node("Concat", [P + "Slice.3", P + "Cast.1"], [P + "Concat.0"], axis=0, name=P + "Concat.0"),
        const(P + "Constant.13", np.zeros(0, dtype=np.float32)),
        helper.make_node("Resize", [P + "Relu.0", P + "Constant.13", P + "Constant.13", P + "Concat.0"],
                         [P + "Resize.0"],
                         mode="nearest", coordinate_transformation_mode="asymmetric",
                         nearest_mode="floor", name=P + "Resize.0"),
        helper.make_node("Conv", [P + "Resize.0", P + "w2"], [P + "Conv.1"], pads=[1, 1, 1, 1],
                         strides=[2, 2], name=P + "Conv.1"),
        # a bias expanded to the feature map's shape, chosen by a shape comparison
        helper.make_node("Shape", [P + "Conv.1"], [P + "Shape.7"], name=P + "Shape.7"),
        helper.make_node("Expand", [P + "b", P + "Shape.7"], [P + "Expand.0"], name=P + "Expand.0"),
        const(P + "Constant.4", i64(1)),
        helper.make_node("Gather", [P + "Shape.7", P + "Constant.4"], [P + "Gather.0"], axis=0, name=P + "Gather.0"),
        const(P + "Constant.5", np.array(c, dtype=np.int64)),
        helper.make_node("Equal", [P + "Gather.0", P + "Constant.5"], [P + "Equal.0"], name=P + "Equal.0"),
        helper.make_node("Where", [P + "Equal.0", P + "Expand.0", P + "Conv.1"], [P + "Where.0"], name=P + "Where.0"),
        helper.make_node("Add", [P + "Conv.1", P + "Where.0"], [P + "Add.0"], name=P + "Add.0"),
        # positions 0..W-1 from Range over a shape element, added along the last axis
        const(P + "Constant.6", i64(3)),
        helper.make_node("Gather", [P + "Shape.7", P + "Constant.6"], [P + "Gather.1"], axis=0, name=P + "Gather.1"),
        const(P + "Constant.7", np.array(0, dtype=np.int64)),
        const(P + "Constant.8", np.array(1, dtype=np.int64)),
        helper.make_node("Range", [P + "Constant.7", P + "Gather.1", P + "Constant.8"], [P + "Range.0"], name=P + "Range.0"),
        helper.make_node("Cast", [P + "Range.0"], [P + "Cast.2"], to=TensorProto.FLOAT, name=P + "Cast.2"),
        const(P + "Constant.9", np.array([0.01], dtype=np.float32)),
        helper.make_node("Mul", [P + "Cast.2", P + "Constant.9"], [P + "Mul.1"], name=P + "Mul.1"),
        helper.make_node("Add", [P + "Add.0", P + "Mul.1"], [P + "Add.1"], name=P + "Add.1"),
        # flatten to [N, -1] with the batch taken from the shape, plus zeros of shape [N, 1]
        helper.make_node("Shape", [P + "Add.1"], [P + "Shape.8"], name=P + "Shape.8"),
        helper.make_node("Gather", [P + "Shape.8", P + "Constant.7"], [P + "Gather.2"], axis=0, name=P + "Gather.2"),
        helper.make_node("Unsqueeze", [P + "Gather.2"], [P + "Unsqueeze.0"], axes=[0], name=P + "Unsqueeze.0"),
        const(P + "Constant.11", i64(-1)),
        helper.make_node("Concat", [P + "Unsqueeze.0", P + "Constant.11"], [P + "Concat.1"], axis=0, name=P + "Concat.1"),
        helper.make_node("Reshape", [P + "Add.1", P + "Concat.1"], [P + "Reshape.0"], name=P + "Reshape.0"),
        const(P + "Constant.12", i64(1)),
        helper.make_node("Concat", [P + "Unsqueeze.0", P + "Constant.12"], [P + "Concat.2"], axis=0, name=P + "Concat.2"),
        helper.make_node("ConstantOfShape", [P + "Concat.2"], [P + "ConstantOfShape.0"],
                         value=init("v", np.array([0.5], dtype=np.float32)), name=P + "ConstantOfShape.0"),
        helper.make_node("Add", [P + "Reshape.0", P + "ConstantOfShape.0"], ["y"], name=P + "Add.2"),
    ]
    m = model(nodes, [vi("x", TensorProto.FLOAT, [-1, 3, -1, -1])], [vi("y", TensorProto.FLOAT, [-1, -1])],
              [init(P + "w1", w1), init(P + "w2", w2), init(P + "b", b)], opset=11, ir=6)
    x = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
    return m, [([x], ort_run(m, {"x": x}))]


# ---- a tf2onnx-style export of an NHWC model: Transposes around every convolution,
# Resize sizes from Shape -> Slice -> Concat, a Shape -> Equal -> Cast chain

def make_tf2onnx_style():
    c = 6
    w1, w2 = conv_w(c, 3, (3, 3)), conv_w(c, c, (1, 1))
    b1 = (rng.standard_normal(c) * 0.1).astype(np.float32)
    nodes = [
        helper.make_node("Transpose", ["input"], ["Transpose__298:0"], perm=[0, 3, 1, 2], name="Transpose__298"),
        helper.make_node("Conv", ["Transpose__298:0", "conv1/w", "conv1/b"], ["conv1/Conv2D:0"],
                         pads=[1, 1, 1, 1], name="conv1/Conv2D"),
        helper.make_node("Transpose", ["conv1/Conv2D:0"], ["conv1/out:0"], perm=[0, 2, 3, 1], name="Transpose__299"),
        helper.make_node("Relu", ["conv1/out:0"], ["relu1:0"], name="relu1"),
        helper.make_node("Transpose", ["relu1:0"], ["Transpose__300:0"], perm=[0, 3, 1, 2], name="Transpose__300"),
        helper.make_node("Conv", ["Transpose__300:0", "conv2/w"], ["conv2/Conv2D:0"], name="conv2/Conv2D"),
        helper.make_node("Transpose", ["conv2/Conv2D:0"], ["offsets"], perm=[0, 2, 3, 1], name="Transpose__301"),
        # resize to twice the size: sizes from the NHWC shape
        helper.make_node("Shape", ["offsets"], ["Shape__302:0"], name="Shape__302"),
        const("const_starts__303", i64(1)), const("const_ends__304", i64(3)), const("const_axes__305", i64(0)),
        helper.make_node("Slice", ["Shape__302:0", "const_starts__303", "const_ends__304", "const_axes__305"],
                         ["Slice__306:0"], name="Slice__306"),
        const("two", i64(2, 2)),
        helper.make_node("Mul", ["Slice__306:0", "two"], ["mul_hw:0"], name="Mul__307"),
        helper.make_node("Shape", ["Transpose__300:0"], ["Shape__308:0"], name="Shape__308"),
        const("const_starts__309", i64(0)), const("const_ends__310", i64(2)),
        helper.make_node("Slice", ["Shape__308:0", "const_starts__309", "const_ends__310", "const_axes__305"],
                         ["Slice__311:0"], name="Slice__311"),
        helper.make_node("Concat", ["Slice__311:0", "mul_hw:0"], ["Concat__312:0"], axis=0, name="Concat__312"),
        helper.make_node("Transpose", ["offsets"], ["Transpose__313:0"], perm=[0, 3, 1, 2], name="Transpose__313"),
        helper.make_node("Resize", ["Transpose__313:0", "", "", "Concat__312:0"], ["Resize__314:0"],
                         mode="linear", coordinate_transformation_mode="half_pixel", name="Resize__314"),
        helper.make_node("Transpose", ["Resize__314:0"], ["resized:0"], perm=[0, 2, 3, 1], name="Transpose__315"),
        # a flag from the shape: is the channel count 6? scales the output by 1.0 if so
        helper.make_node("Shape", ["resized:0"], ["Shape__316:0"], name="Shape__316"),
        const("const_idx__317", i64(3)),
        helper.make_node("Gather", ["Shape__316:0", "const_idx__317"], ["Gather__318:0"], name="Gather__318"),
        const("six", i64(c)),
        helper.make_node("Equal", ["Gather__318:0", "six"], ["Equal__319:0"], name="Equal__319"),
        helper.make_node("Cast", ["Equal__319:0"], ["Cast__320:0"], to=TensorProto.FLOAT, name="Cast__320"),
        helper.make_node("Mul", ["resized:0", "Cast__320:0"], ["scaled:0"], name="Mul__321"),
        # and once more: sizes from the shape of the first Resize's output (a chain that
        # only folds once the first Resize's shape is known)
        helper.make_node("Shape", ["scaled:0"], ["Shape__322:0"], name="Shape__322"),
        helper.make_node("Slice", ["Shape__322:0", "const_starts__303", "const_ends__304", "const_axes__305"],
                         ["Slice__323:0"], name="Slice__323"),
        helper.make_node("Mul", ["Slice__323:0", "two"], ["mul_hw2:0"], name="Mul__324"),
        helper.make_node("Concat", ["Slice__311:0", "mul_hw2:0"], ["Concat__325:0"], axis=0, name="Concat__325"),
        helper.make_node("Transpose", ["scaled:0"], ["Transpose__326:0"], perm=[0, 3, 1, 2], name="Transpose__326"),
        helper.make_node("Resize", ["Transpose__326:0", "", "", "Concat__325:0"], ["Resize__327:0"],
                         mode="nearest", name="Resize__327"),
        helper.make_node("Transpose", ["Resize__327:0"], ["output:0"], perm=[0, 2, 3, 1], name="Transpose__328"),
    ]
    m = model(nodes, [vi("input", TensorProto.FLOAT, ["unk__1", "unk__2", "unk__3", 3])],
              [vi("output:0", TensorProto.FLOAT, ["unk__4", "unk__5", "unk__6", c])],
              [init("conv1/w", w1), init("conv1/b", b1), init("conv2/w", w2)], opset=13, ir=7)
    x = rng.standard_normal((1, 5, 7, 3)).astype(np.float32)
    return m, [([x], ort_run(m, {"input": x}))]


# ---- an opset-18 model with model-local functions (torch's export_modules_as_functions,
# moved to opset 18 and IR 9: ReduceMean's axes as an input, an attribute reference with
# a default in the function, overridden by one call)

def to_opset18_reducemean(nodes, fresh):
    """Rewrites ReduceMean's axes attribute as a Constant input (opset 18), in place."""
    out = []
    for nd in nodes:
        if nd.op_type == "ReduceMean" and any(a.name == "axes" for a in nd.attribute):
            axes = [a for a in nd.attribute if a.name == "axes"][0].ints
            keep = [a for a in nd.attribute if a.name != "axes"]
            name = fresh()
            out.append(const(name, np.array(list(axes), np.int64)))
            del nd.attribute[:]
            nd.attribute.extend(keep)
            nd.input.append(name)
        out.append(nd)
    del nodes[:]
    nodes.extend(out)


def make_functions_opset18():
    import io

    import torch

    class Block(torch.nn.Module):
        def __init__(self, c):
            super().__init__()
            self.conv = torch.nn.Conv1d(c, c, 3, padding=1)
            self.act = torch.nn.LeakyReLU(0.1)

        def forward(self, x):
            y = self.act(self.conv(x))
            return x + y - y.mean(dim=-1, keepdim=True)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.b1, self.b2 = Block(4), Block(4)
            self.head = torch.nn.Linear(8, 3)

        def forward(self, x):
            return self.head(self.b2(self.b1(x)))

    torch.manual_seed(0)
    net = Net().eval()
    x = torch.randn(1, 4, 8)
    f = io.BytesIO()
    torch.onnx.export(net, x, f, opset_version=17, export_modules_as_functions={Block},
                      input_names=["x"], output_names=["y"])
    m = onnx.load_from_string(f.getvalue())
    count = [0]

    def fresh():
        count[0] += 1
        return "axes_%d" % count[0]

    to_opset18_reducemean(m.graph.node, fresh)
    for fn in m.functions:
        to_opset18_reducemean(fn.node, fresh)
        for o in fn.opset_import:
            if o.domain == "":
                o.version = 18
        # LeakyRelu's alpha becomes the function's attribute "alpha", default 0.1
        # (FunctionProto.attribute_proto, IR 9: field 11, absent from onnx 1.12's python)
        for nd in fn.node:
            if nd.op_type == "LeakyRelu":
                del nd.attribute[:]
                nd.attribute.append(onnx.AttributeProto(name="alpha", ref_attr_name="alpha",
                                                        type=onnx.AttributeProto.FLOAT))
        fn.attribute.append("alpha")
        default = helper.make_attribute("alpha", 0.1).SerializeToString()
        extra = bytes([11 << 3 | 2]) + bytes([len(default)]) + default
        fn.ParseFromString(fn.SerializeToString() + extra)
    for o in m.opset_import:
        if o.domain == "":
            o.version = 18
    m.ir_version = 9
    xv = x.numpy()
    with torch.no_grad():
        want = net(x).numpy()
    # both calls on the default: ONNX Runtime must agree with torch
    check_close(ort_run(m, {"x": xv})[0], want, "functions_opset18 (default alpha)")
    # the second call overrides alpha: ONNX Runtime's output is the reference
    calls = [nd for nd in m.graph.node if nd.op_type == "Block"]
    calls[1].attribute.append(helper.make_attribute("alpha", 0.3))
    x2 = rng.standard_normal((1, 4, 8)).astype(np.float32)
    return m, [([xv], ort_run(m, {"x": xv})), ([x2], ort_run(m, {"x": x2}))]


# ---- an fp16 segmentation-style model whose publisher appended the input and output
# Casts after converting it: the graph computes in float16 end to end (Conv, Relu,
# Resize, Concat), and the edge Casts come last in the node list (out of order)

def make_fp16_edges():
    import io

    import torch

    class Seg(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = torch.nn.Conv2d(3, 8, 3, stride=2, padding=1)
            self.c2 = torch.nn.Conv2d(8, 8, 3, padding=1)
            self.c3 = torch.nn.Conv2d(11, 2, 1)

        def forward(self, x):
            y = torch.relu(self.c1(x))
            y = torch.relu(self.c2(y))
            y = torch.nn.functional.interpolate(y, scale_factor=2.0, mode="nearest")
            return self.c3(torch.cat([y, x], 1))

    torch.manual_seed(1)
    net = Seg().eval()
    x = torch.randn(1, 3, 16, 16)
    f = io.BytesIO()
    torch.onnx.export(net, x, f, opset_version=13, input_names=["input"], output_names=["output"])
    m = onnx.load_from_string(f.getvalue())
    g = m.graph
    keep32 = set()  # Resize's roi and scales stay float32
    for nd in g.node:
        if nd.op_type == "Resize":
            keep32.update(nd.input[1:3])
    for t in g.initializer:
        if t.data_type == TensorProto.FLOAT and t.name not in keep32:
            a = numpy_helper.to_array(t).astype(np.float16)
            t.CopyFrom(numpy_helper.from_array(a, t.name))
    for nd in g.node:
        if nd.op_type == "Constant" and nd.output[0] not in keep32:
            for at in nd.attribute:
                if at.t.data_type == TensorProto.FLOAT:
                    at.t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(at.t).astype(np.float16)))
    for nd in g.node:  # the graph now reads the cast input and writes the cast output
        for i, n in enumerate(nd.input):
            if n == "input":
                nd.input[i] = "graph_input_cast_0"
        for i, n in enumerate(nd.output):
            if n == "output":
                nd.output[i] = "graph_output_cast_0"
    del g.value_info[:]
    g.node.append(helper.make_node("Cast", ["graph_output_cast_0"], ["output"],
                                   to=TensorProto.FLOAT, name="graph_output_cast0"))
    g.node.append(helper.make_node("Cast", ["input"], ["graph_input_cast_0"],
                                   to=TensorProto.FLOAT16, name="graph_input_cast0"))
    # The reference: the ONNX semantics of this float16 graph, each node computed exactly
    # (float64 here) from its float16 inputs and rounded to float16 once; ONNX Runtime
    # (which may accumulate in float16) agrees to a few float16 ulps
    def r16(t):
        return t.half().double()

    def conv(c, t):
        return torch.nn.functional.conv2d(t, r16(c.weight.detach()), r16(c.bias.detach()),
                                          c.stride, c.padding)

    with torch.no_grad():
        xi = r16(x.double())
        y = r16(torch.relu(r16(conv(net.c1, xi))))
        y = r16(torch.relu(r16(conv(net.c2, y))))
        y = torch.nn.functional.interpolate(y, scale_factor=2.0, mode="nearest")
        want = r16(conv(net.c3, torch.cat([y, xi], 1))).float().numpy()
    xv = x.numpy()
    check_close(ort_run(m, {"input": xv})[0], want, "fp16_edges (ONNX Runtime)", rtol=4e-3,
                atol=1e-3)
    return m, [([xv], [want])]


# ---- a dynamically quantized model, as onnxruntime.quantization.quantize_dynamic writes
# it: activations quantized at run time (DynamicQuantizeLinear), uint8 weights with
# their scale and zero point, MatMulInteger/ConvInteger, then Cast and the scale product

def make_dynamic_quant():
    def qweight(w, signed=False):
        lo, hi = min(w.min(), 0), max(w.max(), 0)
        if signed:
            scale = max(abs(lo), abs(hi)) / 127
            return np.clip(np.rint(w / scale), -127, 127).astype(np.int8), np.float32(scale), np.int8(0)
        scale = (hi - lo) / 255
        zp = np.uint8(np.clip(np.rint(-lo / scale), 0, 255))
        return np.clip(np.rint(w / scale) + zp, 0, 255).astype(np.uint8), np.float32(scale), zp

    wc = conv_w(4, 2, (3, 3))
    w1 = (rng.standard_normal((64, 16)) / 8).astype(np.float32)
    b1 = (rng.standard_normal(16) * 0.1).astype(np.float32)
    wcq, wcs, wcz = qweight(wc)
    w1q, w1s, w1z = qweight(w1, signed=True)
    nodes = [
        helper.make_node("DynamicQuantizeLinear", ["x"], ["x_q", "x_scale", "x_zp"], name="x_QuantizeLinear"),
        helper.make_node("ConvInteger", ["x_q", "conv.weight_quantized", "x_zp", "conv.weight_zero_point"],
                         ["conv_int"], pads=[1, 1, 1, 1], name="conv_quant"),
        helper.make_node("Cast", ["conv_int"], ["conv_f"], to=TensorProto.FLOAT, name="conv_cast"),
        helper.make_node("Mul", ["x_scale", "conv.weight_scale"], ["conv_scale"], name="conv_scale_mul"),
        helper.make_node("Mul", ["conv_f", "conv_scale"], ["conv_out"], name="conv_output_scale_mul"),
        helper.make_node("Relu", ["conv_out"], ["relu"], name="relu"),
        helper.make_node("Reshape", ["relu", "flat_shape"], ["flat"], name="flatten"),
        helper.make_node("DynamicQuantizeLinear", ["flat"], ["f_q", "f_scale", "f_zp"], name="flat_QuantizeLinear"),
        helper.make_node("MatMulInteger", ["f_q", "fc.weight_quantized", "f_zp", "fc.weight_zero_point"],
                         ["fc_int"], name="fc_MatMul_quant"),
        helper.make_node("Cast", ["fc_int"], ["fc_f"], to=TensorProto.FLOAT, name="fc_cast"),
        helper.make_node("Mul", ["f_scale", "fc.weight_scale"], ["fc_scale"], name="fc_scale_mul"),
        helper.make_node("Mul", ["fc_f", "fc_scale"], ["fc_mm"], name="fc_output_scale_mul"),
        helper.make_node("Add", ["fc_mm", "fc.bias"], ["y"], name="fc_Add"),
    ]
    inits = [init("conv.weight_quantized", wcq), init("conv.weight_scale", np.array(wcs)),
             init("conv.weight_zero_point", np.array(wcz)),
             init("fc.weight_quantized", w1q), init("fc.weight_scale", np.array(w1s)),
             init("fc.weight_zero_point", np.array(np.int8(0))), init("fc.bias", b1),
             init("flat_shape", i64(1, 64))]
    m = model(nodes, [vi("x", TensorProto.FLOAT, [1, 2, 4, 4])], [vi("y", TensorProto.FLOAT, [1, 16])],
              inits, opset=13, ir=7)
    sets = []
    for _ in range(2):
        x = rng.standard_normal((1, 2, 4, 4)).astype(np.float32)
        sets.append(([x], ort_run(m, {"x": x})))
    return m, sets


MODELS = {
    "dynamic_quant": make_dynamic_quant,
    "fp16_edges": make_fp16_edges,
    "functions_opset18": make_functions_opset18,
    "paddle_style": make_paddle_style,
    "tf2onnx_style": make_tf2onnx_style,
    "if_flag": make_if_flag,
    "if_flag_both": make_if_flag_both,
    "if_nested": make_if_nested,
}

if __name__ == "__main__":
    names = sys.argv[1:] or list(MODELS)
    for n in names:
        m, sets = MODELS[n]()
        write_case(os.path.join(HERE, n), m, sets)
        print("wrote", n)
