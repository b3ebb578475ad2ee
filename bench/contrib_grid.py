#!/usr/bin/python3
"""The full grid of 8-bit operand pairs (65,536) through com.microsoft QLinearAdd and
QLinearMul, and all 256 inputs through QLinearSigmoid, QLinearLeakyRelu and
QLinearAveragePool (2x1 windows: every pair of neighbours), with no margin around
rounding ties: references from the documented formulas in float64 (exact for these
scales), written as check-onnx folders under OUT (default /tmp/contrib_grid) for kiln
(`kiln check-onnx OUT --backend B`) and ONNX Runtime (`bench/ort_contrib.py OUT`), which
count the elements where each departs from the formula.

    /usr/bin/python3 bench/contrib_grid.py [OUT]
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
os.environ["MARGIN"] = "0"
os.environ["OUT"] = sys.argv[1] if len(sys.argv) > 1 else "/tmp/contrib_grid"
sys.path.insert(0, os.path.join(HERE, "..", "tests", "quant"))
import make_contrib as mc  # noqa: E402

N, F, MS = mc.N, mc.F, mc.MS

# (name, a scale, a zp, b scale, b zp, c scale, c zp): exact ties (power-of-two ratios)
# and random-looking scales
SCALES = [("pow2", 0.5, 128, 0.25, 100, 0.75, 128), ("tie", 0.05, 128, 0.05, 128, 0.1, 128),
          ("rand", 0.0371, 121, 0.0219, 98, 0.0523, 112)]


def main():
    a = np.repeat(np.arange(256, dtype=np.uint8), 256).reshape(256, 256)
    b = np.tile(np.arange(256, dtype=np.uint8), 256).reshape(256, 256)
    for name, as_, az, bs, bz, cs, cz in SCALES:
        add = mc.quant(mc.deq(a, as_, az) + mc.deq(b, bs, bz), cs, cz, np.uint8)
        mul = mc.quant(mc.deq(a, as_, az) * mc.deq(b, bs, bz), cs * 8, cz, np.uint8)
        nodes = [N("QLinearAdd", ["a", "a_s", "a_z", "b", "b_s", "b_z", "c_s", "c_z"], ["add"],
                   name="add", domain=MS),
                 N("QLinearMul", ["a", "a_s", "a_z", "b", "b_s", "b_z", "m_s", "c_z"], ["mul"],
                   name="mul", domain=MS)]
        inits = (mc.qp("a", as_, np.uint8(az)) + mc.qp("b", bs, np.uint8(bz)) +
                 mc.qp("c", cs, np.uint8(cz)) + [mc.init("m_s", F(cs * 8))])
        mc.save("grid_" + name, nodes, inits, [("a", a), ("b", b)], [("add", add), ("mul", mul)])
    x = np.arange(256, dtype=np.uint8).reshape(1, 1, 1, 256)
    xp = np.stack([np.repeat(np.arange(256), 256), np.tile(np.arange(256), 256)]).astype(
        np.uint8).T.reshape(1, 1, 65536, 2)
    sig = mc.quant(1 / (1 + np.exp(-mc.deq(x, 0.0625, 128))), 1 / 256, 0, np.uint8)
    fx = mc.deq(x, 0.05, 128)
    leaky = mc.quant(np.where(fx < 0, 0.25 * fx, fx), 0.05, 128, np.uint8)
    pool = mc.quant(mc.deq(xp, 0.05, 128).mean(axis=3, keepdims=True), 0.05, 128, np.uint8)
    nodes = [N("QLinearSigmoid", ["x", "x_s", "x_z", "s_s", "s_z"], ["sig"], name="sig",
               domain=MS),
             N("QLinearLeakyRelu", ["x", "l_s", "l_z", "l_s", "l_z"], ["leaky"], name="leaky",
               alpha=0.25, domain=MS),
             N("QLinearAveragePool", ["xp", "l_s", "l_z", "l_s", "l_z"], ["pool"], name="pool",
               kernel_shape=[1, 2], domain=MS)]
    inits = (mc.qp("x", 0.0625, np.uint8(128)) + mc.qp("s", 1 / 256, np.uint8(0)) +
             mc.qp("l", 0.05, np.uint8(128)))
    mc.save("grid_unary", nodes, inits, [("x", x), ("xp", xp)],
            [("sig", sig), ("leaky", leaky), ("pool", pool)])


if __name__ == "__main__":
    main()
