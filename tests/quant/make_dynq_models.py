#!/usr/bin/python3
"""Writes tests/quant/dynq/*: dynamically quantized models as ONNX Runtime's
quantize_dynamic writes them (DynamicQuantizeLinear on a float activation ->
MatMulInteger / ConvInteger with constant int8 weights -> Cast to float -> Mul by the
product of the scales (its own Mul of the run-time input scale and the weight scale) ->
Add bias [-> an activation]), for the dynq pass (passes/dynq.c), which folds that tail into
the integer contraction. Variants of the tail: Mul's and Add's operands in either order,
the scales multiplied one after the other ((float(acc) * xs) * ws), per-tensor and per
column / output channel weight scales, Relu, Clip(0, 6), no bias.

  dynq_mlp   a Linear + Relu + Linear (per-column scales, swapped operands)
  dynq_attn  an attention-like block: shared DynamicQuantizeLinear, Q/K/V projections
             (graph outputs too), float Q.K^T, Softmax, .V, an output projection with
             the two-Mul tail
  dynq_cnn   ConvInteger 3x3 + bias (Reshape, as ORT adds it) + Relu, a strided 3x3
             with per-channel scales, a 1x1 with Clip(0, 6) and no bias
  dynq_dw    a depthwise ConvInteger, whose tail the pass leaves alone

References: numpy in float32, op by op as the ONNX operator definitions say (each op
rounds to float32), written to test_data_set_0 and as ref_<output>.npy; checked bit for
bit against onnx.reference where it is available.

    /usr/bin/python3 tests/quant/make_dynq_models.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "dynq")
rng = np.random.default_rng(1212)
F = np.float32


def dyn_quant(x):
    """DynamicQuantizeLinear by its definition, in float32 as the reference computes it."""
    x = x.astype(F)
    lo, hi = F(min(0.0, x.min())), F(max(0.0, x.max()))
    s = F((hi - lo) / F(255))
    z = np.uint8(np.clip(np.rint(F(0) - lo / s), 0, 255))
    q = np.clip(np.rint(x / s) + F(z), 0, 255).astype(np.uint8)
    return q, s, z


def conv_i32(x, xz, w, wz, stride=1, pad=0, group=1):
    """ConvInteger (NCHW) in int64, as int32."""
    if group > 1:  # each group on its own channels
        cg, mg = x.shape[1] // group, w.shape[0] // group
        return np.concatenate([conv_i32(x[:, i * cg:(i + 1) * cg], xz, w[i * mg:(i + 1) * mg], wz,
                                        stride, pad) for i in range(group)], axis=1)
    xi = x.astype(np.int64) - np.int64(xz)
    wi = w.astype(np.int64) - np.int64(wz)
    n, c, h, wd = xi.shape
    m, _, kh, kw = wi.shape
    xp = np.zeros((n, c, h + 2 * pad, wd + 2 * pad), np.int64)
    xp[:, :, pad:pad + h, pad:pad + wd] = xi
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    y = np.zeros((n, m, oh, ow), np.int64)
    for i in range(oh):
        for j in range(ow):
            win = xp[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            y[:, :, i, j] = np.tensordot(win, wi, axes=([1, 2, 3], [1, 2, 3]))
    return y.astype(np.int32)


def mm_i32(xq, xz, w, wz):
    return ((xq.astype(np.int64) - np.int64(xz)) @ (w.astype(np.int64) - wz.astype(np.int64))).astype(np.int32)


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).astype(F)


class G:
    """A graph under construction: nodes, initializers, and the numpy values by name."""

    def __init__(self):
        self.nodes, self.inits, self.v = [], [], {}

    def init(self, name, a):
        self.inits.append(numpy_helper.from_array(np.asarray(a), name))
        self.v[name] = np.asarray(a)
        return name

    def node(self, op, ins, outs, vals, **kw):
        self.nodes.append(helper.make_node(op, ins, outs, name=outs[0] + "_" + op.lower(), **kw))
        for o, a in zip(outs, vals):
            self.v[o] = a
        return outs[0] if len(outs) == 1 else outs

    def dql(self, x):
        q, s, z = dyn_quant(self.v[x])
        return self.node("DynamicQuantizeLinear", [x], [x + "_q", x + "_s", x + "_z"],
                         [q, np.array(s, F), np.array(z, np.uint8)])

    def tail(self, acc, xs, ws, name, bias=None, act=None, swap=False, two_mul=False):
        """Cast -> Mul by xs * ws (or by xs, then by ws) -> [Add bias] -> [act]."""
        a = self.v[acc]
        cast = self.node("Cast", [acc], [name + "_cast"], [a.astype(F)], to=TensorProto.FLOAT)
        c = self.v[cast]
        if two_mul:
            t = self.node("Mul", [cast, xs], [name + "_mx"], [(c * self.v[xs]).astype(F)])
            y = self.node("Mul", [t, ws], [name + "_mw"], [(self.v[t] * self.v[ws]).astype(F)])
        else:
            sc = self.node("Mul", [xs, ws], [name + "_scale"], [(self.v[xs] * self.v[ws]).astype(F)])
            ins = [sc, cast] if swap else [cast, sc]
            y = self.node("Mul", ins, [name + "_mul"], [(c * self.v[sc]).astype(F)])
        if bias is not None:
            ins = [bias, y] if swap else [y, bias]
            y = self.node("Add", ins, [name + "_add"], [(self.v[y] + self.v[bias]).astype(F)])
        if act == "Relu":
            y = self.node("Relu", [y], [name + "_relu"], [np.maximum(self.v[y], F(0)).astype(F)])
        elif act == "Clip":
            lo, hi = self.init(name + "_lo", F(0)), self.init(name + "_hi", F(6))
            y = self.node("Clip", [y, lo, hi], [name + "_clip"],
                          [np.clip(self.v[y], F(0), F(6)).astype(F)])
        return y

    def save(self, model, ins, outs):
        g = helper.make_graph(
            self.nodes, model,
            [helper.make_tensor_value_info(i, TensorProto.FLOAT, self.v[i].shape) for i in ins],
            [helper.make_tensor_value_info(o, TensorProto.FLOAT, self.v[o].shape) for o in outs],
            self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 7
        onnx.checker.check_model(m, full_check=True)
        d = os.path.join(OUT, model)
        os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
        onnx.save(m, os.path.join(d, "model.onnx"))
        for k, i in enumerate(ins):
            onnx.save_tensor(numpy_helper.from_array(self.v[i], i),
                             os.path.join(d, "test_data_set_0", "input_%d.pb" % k))
        for k, o in enumerate(outs):
            onnx.save_tensor(numpy_helper.from_array(self.v[o], o),
                             os.path.join(d, "test_data_set_0", "output_%d.pb" % k))
            np.save(os.path.join(d, "ref_%s.npy" % o), self.v[o])
        try:
            from onnx.reference import ReferenceEvaluator
        except ImportError:
            return
        got = ReferenceEvaluator(m).run(None, {i: self.v[i] for i in ins})
        for o, r in zip(outs, got):
            assert r.dtype == self.v[o].dtype and r.tobytes() == self.v[o].tobytes(), (model, o)


def mlp():
    g = G()
    g.v["x"] = (rng.standard_normal((6, 64)) * 1.5).astype(F)
    xq, xs, xz = g.dql("x")
    w1 = g.init("w1", rng.integers(-127, 128, (64, 96), dtype=np.int8))
    wz1 = g.init("wz1", np.int8(0))
    ws1 = g.init("ws1", F(0.0071))
    b1 = g.init("b1", (rng.random(96) - 0.5).astype(F))
    acc = g.node("MatMulInteger", [xq, w1, xz, wz1], ["h1_acc"],
                 [mm_i32(g.v[xq], g.v[xz], g.v[w1], g.v[wz1])])
    h = g.tail(acc, xs, ws1, "h1", bias=b1, act="Relu")
    hq, hs, hz = g.dql(h)
    w2 = g.init("w2", rng.integers(-127, 128, (96, 40), dtype=np.int8))
    wz2 = g.init("wz2", np.zeros(40, np.int8))
    ws2 = g.init("ws2", (rng.random(40) * 0.01 + 0.002).astype(F))
    b2 = g.init("b2", (rng.random(40) - 0.5).astype(F))
    acc2 = g.node("MatMulInteger", [hq, w2, hz, wz2], ["y_acc"],
                  [mm_i32(g.v[hq], g.v[hz], g.v[w2], g.v[wz2])])
    y = g.tail(acc2, hs, ws2, "y", bias=b2, swap=True)
    g.save("dynq_mlp", ["x"], [y])


def attn():
    g = G()
    S, D = 8, 32
    g.v["x"] = rng.standard_normal((1, S, D)).astype(F)
    xq, xs, xz = g.dql("x")
    proj = {}
    for p in "qkv":
        w = g.init("w" + p, rng.integers(-127, 128, (D, D), dtype=np.int8))
        wz = g.init("wz" + p, np.int8(0))
        ws = g.init("ws" + p, F(0.004 + 0.001 * "qkv".index(p)))
        b = g.init("b" + p, (rng.random(D) - 0.5).astype(F))
        acc = g.node("MatMulInteger", [xq, w, xz, wz], [p + "_acc"],
                     [mm_i32(g.v[xq], g.v[xz], g.v[w], g.v[wz])])
        proj[p] = g.tail(acc, xs, ws, p, bias=b, swap=p == "k")
    kt = g.node("Transpose", [proj["k"]], ["kt"], [np.transpose(g.v[proj["k"]], (0, 2, 1))],
                perm=[0, 2, 1])
    sc = g.node("MatMul", [proj["q"], kt], ["scores"], [np.matmul(g.v[proj["q"]], g.v[kt]).astype(F)])
    d = g.init("sqrt_d", F(np.sqrt(D)))
    sd = g.node("Div", [sc, d], ["scores_d"], [(g.v[sc] / g.v[d]).astype(F)])
    p_ = g.node("Softmax", [sd], ["probs"], [softmax(g.v[sd])], axis=-1)
    ctx = g.node("MatMul", [p_, proj["v"]], ["ctx"], [np.matmul(g.v[p_], g.v[proj["v"]]).astype(F)])
    cq, cs, cz = g.dql(ctx)
    wo = g.init("wo", rng.integers(-127, 128, (D, D), dtype=np.int8))
    wzo = g.init("wzo", np.int8(0))
    wso = g.init("wso", (rng.random(D) * 0.01 + 0.002).astype(F))
    bo = g.init("bo", (rng.random(D) - 0.5).astype(F))
    acco = g.node("MatMulInteger", [cq, wo, cz, wzo], ["out_acc"],
                  [mm_i32(g.v[cq], g.v[cz], g.v[wo], g.v[wzo])])
    out = g.tail(acco, cs, wso, "out", bias=bo, two_mul=True)
    g.save("dynq_attn", ["x"], [proj["q"], proj["k"], proj["v"], out])


def cnn():
    g = G()
    g.v["x"] = (rng.standard_normal((1, 3, 16, 16)) + 0.3).astype(F)
    xq, xs, xz = g.dql("x")
    w1 = g.init("cw1", rng.integers(-127, 128, (8, 3, 3, 3), dtype=np.int8))
    wz1 = g.init("cwz1", np.int8(0))
    ws1 = g.init("cws1", F(0.0093))
    b1 = g.init("cb1", (rng.random(8) - 0.5).astype(F))
    shp = g.init("bshape", np.array([1, -1, 1, 1], np.int64))
    b1r = g.node("Reshape", [b1, shp], ["cb1_r"], [g.v[b1].reshape(1, -1, 1, 1)])
    acc = g.node("ConvInteger", [xq, w1, xz, wz1], ["c1_acc"],
                 [conv_i32(g.v[xq], g.v[xz], g.v[w1], g.v[wz1], 1, 1)], pads=[1, 1, 1, 1])
    h = g.tail(acc, xs, ws1, "c1", bias=b1r, act="Relu")
    hq, hs, hz = g.dql(h)
    w2 = g.init("cw2", rng.integers(-127, 128, (16, 8, 3, 3), dtype=np.int8))
    wz2 = g.init("cwz2", np.int8(0))
    ws2 = g.init("cws2", (rng.random((16, 1, 1)) * 0.004 + 0.001).astype(F))
    b2 = g.init("cb2", (rng.random((1, 16, 1, 1)) - 0.5).astype(F))
    acc2 = g.node("ConvInteger", [hq, w2, hz, wz2], ["c2_acc"],
                  [conv_i32(g.v[hq], g.v[hz], g.v[w2], g.v[wz2], 2, 1)],
                  pads=[1, 1, 1, 1], strides=[2, 2])
    h2 = g.tail(acc2, hs, ws2, "c2", bias=b2, swap=True)
    h2q, h2s, h2z = g.dql(h2)
    w3 = g.init("cw3", rng.integers(-127, 128, (12, 16, 1, 1), dtype=np.int8))
    wz3 = g.init("cwz3", np.int8(0))
    ws3 = g.init("cws3", F(0.0051))
    acc3 = g.node("ConvInteger", [h2q, w3, h2z, wz3], ["c3_acc"],
                  [conv_i32(g.v[h2q], g.v[h2z], g.v[w3], g.v[wz3])])
    y = g.tail(acc3, h2s, ws3, "c3", act="Clip")
    g.save("dynq_cnn", ["x"], [y])


def dw():
    """A depthwise ConvInteger (group 8): its tail is not fused (the depthwise pass's
    integer tiles take no epilogue), the outputs the same."""
    g = G()
    g.v["x"] = rng.standard_normal((1, 8, 10, 10)).astype(F)
    xq, xs, xz = g.dql("x")
    w = g.init("dw", rng.integers(-127, 128, (8, 1, 3, 3), dtype=np.int8))
    wz = g.init("dwz", np.int8(0))
    ws = g.init("dws", F(0.011))
    b = g.init("db", (rng.random((1, 8, 1, 1)) - 0.5).astype(F))
    acc = g.node("ConvInteger", [xq, w, xz, wz], ["d_acc"],
                 [conv_i32(g.v[xq], g.v[xz], g.v[w], g.v[wz], 1, 1, 8)], pads=[1, 1, 1, 1], group=8)
    y = g.tail(acc, xs, ws, "d", bias=b)
    g.save("dynq_dw", ["x"], [y])


if __name__ == "__main__":
    mlp()
    attn()
    cnn()
    dw()
