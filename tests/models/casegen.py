"""Helpers for the scripts that write ONNX backend-style test folders (model.onnx and
test_data_set_N/{input,output}_K.pb) at authoring time: reference outputs come from
ONNX Runtime (npm's onnxruntime-node, through ort_run.js) or from numpy, never from
kiln. Run with Debian's /usr/bin/python3 (onnx, numpy, torch). The tests read only
the written files.

ORT_NODE names the onnxruntime-node package folder (default:
/tmp/ort/node_modules/onnxruntime-node; install it with
`npm install --prefix /tmp/ort onnxruntime-node`)."""
import json
import os
import shutil
import subprocess
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ORT = os.environ.get("ORT_NODE", "/tmp/ort/node_modules/onnxruntime-node")

_ORT_TYPES = {np.float32: "float32", np.float64: "float64", np.int64: "int64",
              np.int32: "int32", np.int8: "int8", np.uint8: "uint8", np.bool_: "bool",
              np.float16: "float16", np.int16: "int16"}
_NP_TYPES = {v: k for k, v in _ORT_TYPES.items()}


def ort_run(model, feeds, opt="disabled"):
    """Outputs of ONNX Runtime for model (a ModelProto) on feeds {name: array}, in the
    order of the graph's outputs."""
    d = tempfile.mkdtemp()
    try:
        mp = os.path.join(d, "m.onnx")
        onnx.save(model, mp)
        ins = []
        for i, (name, a) in enumerate(feeds.items()):
            a = np.ascontiguousarray(a)
            f = os.path.join(d, "in%d.bin" % i)
            a.view(np.uint16 if a.dtype == np.float16 else a.dtype).tofile(f)
            ins.append({"name": name, "type": _ORT_TYPES[a.dtype.type],
                        "dims": list(a.shape), "file": f})
        man = os.path.join(d, "m.json")
        json.dump({"model": mp, "inputs": ins, "out_dir": d, "opt": opt}, open(man, "w"))
        subprocess.run(["node", os.path.join(HERE, "ort_run.js"), man], check=True,
                       env=dict(os.environ, ORT_NODE=ORT))
        outs = json.load(open(os.path.join(d, "outputs.json")))
        res = []
        for o in outs:
            t = _NP_TYPES[o["type"]]
            raw = np.fromfile(o["file"], dtype=np.uint16 if t == np.float16 else t)
            if t == np.float16:
                raw = raw.view(np.float16)
            res.append(raw.reshape(o["dims"]))
        return res
    finally:
        shutil.rmtree(d)


def write_case(folder, model, datasets):
    """Writes folder/model.onnx and one test_data_set_N per (inputs, outputs) pair:
    inputs a list of arrays in graph-input order, outputs a list in output order."""
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    g = model.graph
    inits = {i.name for i in g.initializer}
    names = [i.name for i in g.input if i.name not in inits]
    for k, (ins, outs) in enumerate(datasets):
        ds = os.path.join(folder, "test_data_set_%d" % k)
        os.makedirs(ds)
        for j, a in enumerate(ins):
            t = numpy_helper.from_array(np.asarray(a), names[j])
            open(os.path.join(ds, "input_%d.pb" % j), "wb").write(t.SerializeToString())
        for j, a in enumerate(outs):
            t = numpy_helper.from_array(np.asarray(a), g.output[j].name)
            open(os.path.join(ds, "output_%d.pb" % j), "wb").write(t.SerializeToString())


def torch_case(name, nodes, inits, xshape, yshape, ref, rng, opset=13):
    """Writes tests/models/NAME (write_case): a graph of nodes over one float input x of
    xshape to one output y of yshape, with the initializers inits; x drawn from rng and
    the expected y = ref(x, W) computed with torch (W: the initializers by name as
    tensors), independently of the graph."""
    import torch
    from onnx import TensorProto, helper

    ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, xshape)]
    outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, yshape)]
    g = helper.make_graph(nodes, name, ins, outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(m)
    x = rng.standard_normal(xshape).astype(np.float32)
    W = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy()) for t in inits}
    with torch.no_grad():
        y = ref(torch.from_numpy(x), W).numpy()
    write_case(os.path.join(HERE, name), m, [([x], [y])])


def check_close(a, b, what, rtol=1e-4, atol=1e-5):
    """Authoring-time cross-check of two independent references."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or not np.allclose(a, b, rtol=rtol, atol=atol):
        raise SystemExit("%s: references disagree (max abs diff %g)" %
                         (what, float(np.max(np.abs(a - b))) if a.shape == b.shape else -1))


def mbconv_se_case(name, c_in, c_exp, c_se, c_out, k, stride, hw, rng, squeeze_out=False):
    """Writes tests/models/NAME: an EfficientNet-B0 MBConv block, x [1, c_in, hw, hw] ->
    1x1 Conv (c_in -> c_exp) + SiLU -> k x k depthwise Conv (stride, pad k // 2) + SiLU ->
    squeeze and excite (GlobalAveragePool -> 1x1 Conv c_exp -> c_se + SiLU -> 1x1 Conv
    c_se -> c_exp + Sigmoid, times the depthwise output) -> 1x1 Conv (c_exp -> c_out) ->
    y; with squeeze_out, the squeeze's means are a second output g [1, c_exp, 1, 1]. The
    weights (standard normal / 4) and x are drawn from rng in that order; the expected
    outputs are computed with torch, independently of the graph."""
    import torch
    import torch.nn.functional as F
    from onnx import TensorProto, helper

    def w(n, *shape):
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) / 4, n)

    inits = [w("we", c_exp, c_in, 1, 1), w("be", c_exp), w("wd", c_exp, 1, k, k),
             w("bd", c_exp), w("ws1", c_se, c_exp, 1, 1), w("bs1", c_se),
             w("ws2", c_exp, c_se, 1, 1), w("bs2", c_exp), w("wp", c_out, c_exp, 1, 1),
             w("bp", c_out)]
    p = k // 2
    dw = dict(kernel_shape=[k, k], pads=[p, p, p, p])
    if stride != 1:
        dw["strides"] = [stride, stride]
    nodes = [helper.make_node("Conv", ["x", "we", "be"], ["e0"], name="expand"),
             helper.make_node("Sigmoid", ["e0"], ["e1"]),
             helper.make_node("Mul", ["e0", "e1"], ["e"]),
             helper.make_node("Conv", ["e", "wd", "bd"], ["d0"], name="dw", group=c_exp, **dw),
             helper.make_node("Sigmoid", ["d0"], ["d1"]),
             helper.make_node("Mul", ["d0", "d1"], ["d"]),
             helper.make_node("GlobalAveragePool", ["d"], ["g"], name="squeeze"),
             helper.make_node("Conv", ["g", "ws1", "bs1"], ["s0"], name="fc1"),
             helper.make_node("Sigmoid", ["s0"], ["s1"]),
             helper.make_node("Mul", ["s0", "s1"], ["s2"]),
             helper.make_node("Conv", ["s2", "ws2", "bs2"], ["s3"], name="fc2"),
             helper.make_node("Sigmoid", ["s3"], ["s4"]),
             helper.make_node("Mul", ["d", "s4"], ["ds"], name="scale"),
             helper.make_node("Conv", ["ds", "wp", "bp"], ["y"], name="project")]
    ho = (hw + 2 * p - k) // stride + 1
    xshape = [1, c_in, hw, hw]
    outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, c_out, ho, ho])]
    if squeeze_out:
        outs.append(helper.make_tensor_value_info("g", TensorProto.FLOAT, [1, c_exp, 1, 1]))
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, xshape)], outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    x = rng.standard_normal(xshape).astype(np.float32)
    W = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy()) for t in inits}
    with torch.no_grad():
        e = F.silu(F.conv2d(torch.from_numpy(x), W["we"], W["be"]))
        dd = F.silu(F.conv2d(e, W["wd"], W["bd"], stride=stride, padding=p, groups=c_exp))
        gg = dd.mean(dim=(2, 3), keepdim=True)
        s = torch.sigmoid(F.conv2d(F.silu(F.conv2d(gg, W["ws1"], W["bs1"])), W["ws2"], W["bs2"]))
        y = F.conv2d(dd * s, W["wp"], W["bp"]).numpy()
    write_case(os.path.join(HERE, name), m, [([x], [y, gg.numpy()] if squeeze_out else [y])])
