"""What the quantized test-model generators (tests/quant/make_*.py) share: the ONNX
definitions of QLinearConv's integer sum and of the requantization, computed with
integer numpy (independent of kiln), and the writing of a test case into
tests/quant/models. A generator imports it as

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import qref as qr

Nothing here draws random numbers, so a generator's draws, and the files it writes, do
not depend on this module."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import gen_common as gc  # noqa: E402


def conv_ref(x, xz, w, wz, bias=None, strides=(1, 1), pads=(0, 0, 0, 0), dil=(1, 1), group=1):
    """int64 accumulators of QLinearConv: sum over each group's channels and the window
    of (x - xz) * (w - wz[m]), plus bias. pads = (top, left, bottom, right); the
    padding holds xz, so a padded tap adds nothing; wz is a scalar or one a channel."""
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    sh, sw = strides
    dh, dw = dil
    xp = np.zeros((n, c, h + pads[0] + pads[2], wd + pads[1] + pads[3]), np.int64)
    xp[:, :, pads[0]:pads[0] + h, pads[1]:pads[1] + wd] = x.astype(np.int64) - np.int64(xz)
    oh = (xp.shape[2] - (kh - 1) * dh - 1) // sh + 1
    ow = (xp.shape[3] - (kw - 1) * dw - 1) // sw + 1
    ws = w.astype(np.int64) - np.broadcast_to(np.asarray(wz, np.int64).reshape(-1),
                                              (m,)).reshape(m, 1, 1, 1)
    mg = m // group
    acc = np.zeros((n, m, oh, ow), np.int64)
    for g in range(group):
        xg = xp[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                win = xg[:, :, i * dh:i * dh + (oh - 1) * sh + 1:sh,
                         j * dw:j * dw + (ow - 1) * sw + 1:sw]
                acc[:, g * mg:(g + 1) * mg] += np.einsum("nchw,mc->nmhw", win,
                                                         ws[g * mg:(g + 1) * mg, :, i, j])
    if bias is not None:
        acc += bias.astype(np.int64).reshape(1, m, 1, 1)
    return acc


def dwconv(x, xz, w, wz, bias, strides, pads):
    """conv_ref of a depthwise convolution (one group a channel)."""
    return conv_ref(x, xz, w, wz, bias, strides, pads, group=x.shape[1])


def requant(acc, xs, ws, ys, yz, dtype, axis_shape=None):
    """y = saturate(round_half_even(acc * xs * ws / ys) + yz) in double: ws a scalar or
    one a channel, reshaped to axis_shape (by default one a channel on axis 1 of a
    4-D acc)."""
    mult = np.float64(xs) * np.asarray(ws, np.float64).reshape(-1) / np.float64(ys)
    if axis_shape is None:
        axis_shape = (1, -1, 1, 1)
        mult = np.broadcast_to(mult, (acc.shape[1],))
    mult = mult.reshape(axis_shape)
    v = np.rint(acc.astype(np.float64) * mult) + np.float64(yz)
    info = np.iinfo(dtype)
    return np.clip(v, info.min, info.max).astype(dtype)


def dq(q, scale, zp, axis_shape=None):
    """DequantizeLinear as ONNX defines it: (q - zp) * scale in float32, scale and zp
    reshaped to axis_shape for one a channel."""
    s = np.asarray(scale, np.float32)
    z = np.asarray(zp, np.int64)
    if axis_shape is not None:
        s = s.reshape(axis_shape)
        z = np.broadcast_to(z.reshape(-1), s.size).reshape(axis_shape)
    return ((q.astype(np.int64) - z).astype(np.float32) * s).astype(np.float32)


def q(v, s, z, t, r=None):
    """QuantizeLinear in float32: saturate(round_half_even(v / s) + z) of type t; with
    r, the division replaced by a multiplication by r (to show which cases a multiplier
    can take)."""
    info = np.iinfo(t)
    v = np.asarray(v).astype(np.float32)
    r = np.rint(v / np.float32(s) if r is None else v * np.float32(r)).astype(np.float64) + float(z)
    return np.clip(r, info.min, info.max).astype(t)


def init(name, a):
    """An initializer named name holding a."""
    return numpy_helper.from_array(np.asarray(a), name)


def save(name, graph, inputs, outputs, opset=13):
    """graph (IR 7) with its input and output arrays, in graph order, as the
    test case tests/quant/models/name."""
    gc.write_case(os.path.join(HERE, "models", name), gc.model(graph, opset=opset, ir_version=7),
                  [(graph.input[k].name, a) for k, a in enumerate(inputs)],
                  [(graph.output[k].name, a) for k, a in enumerate(outputs)])


def save_node(name, node, x, y, inits, xt, yt):
    """The one-node graph x -> node -> y (ONNX element types xt, yt) as save does."""
    g = helper.make_graph([node], name, [helper.make_tensor_value_info("x", xt, list(x.shape))],
                          [helper.make_tensor_value_info("y", yt, list(y.shape))], inits)
    save(name, g, [x], [y])


def write_ptq(out, name, nodes, inits, xshape, yshape, calib, ndata=1):
    """A float model for --quantize (tests/quant/ptq.sh): the graph `name` of nodes from
    float input x of xshape to float output y of yshape (opset 13, IR 7) as out/model.onnx,
    the calibration samples calib (stacked on axis 0) as out/calib.npy, and the first
    ndata of them as out/test_data_set_K/input_0.pb."""
    g = helper.make_graph(nodes, name,
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(xshape))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(yshape))],
                          inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="kiln-tests")
    m.ir_version = 7
    onnx.checker.check_model(m)
    os.makedirs(out, exist_ok=True)
    onnx.save(m, os.path.join(out, "model.onnx"))
    np.save(os.path.join(out, "calib.npy"), calib)
    for k in range(ndata):
        d = os.path.join(out, "test_data_set_%d" % k)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "input_0.pb"), "wb") as fp:
            fp.write(numpy_helper.from_array(calib[k], "x").SerializeToString())
