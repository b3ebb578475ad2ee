"""Checks the quantization parameters in a QDQ file written by `kiln quantize` against
the float model and the calibration inputs, computed here with numpy from the rules of
docs/quantization.md (tests/quant/ptq.sh runs it when Debian's Python has onnx):
weights int8 per output channel with scale max|W[c]|/127 and q = round(W/s), biases
int32 at (float32) x_scale * w_scale, and the input's scale and zero point from the
min/max of the calibration inputs.
usage: check_ptq_params.py FLOAT.onnx QDQ.onnx CALIB.npy INPUT_NAME"""
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def main():
    f, q = onnx.load(sys.argv[1]), onnx.load(sys.argv[2])
    calib, xname = np.load(sys.argv[3]), sys.argv[4]
    fw = {t.name: numpy_helper.to_array(t) for t in f.graph.initializer}
    qw = {t.name: numpy_helper.to_array(t) for t in q.graph.initializer}
    bad = 0
    checked = 0
    for n in q.graph.node:
        if n.op_type != "DequantizeLinear" or n.input[0] not in qw:
            continue
        name = n.input[0][: -len("/quantized")]
        if name not in fw:
            continue
        w, wq, s = fw[name].astype(np.float32), qw[n.input[0]], qw[n.input[1]]
        if wq.dtype == np.int8:  # weights: channels on the DequantizeLinear's axis
            axis = [a.i for a in n.attribute if a.name == "axis"][0]
            wm = np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)
            want = (np.abs(wm).max(axis=1) / 127).astype(np.float32)
            want[want == 0] = 1
            qm = np.moveaxis(wq, axis, 0).reshape(w.shape[axis], -1)
            ok = np.array_equal(s, want) and np.array_equal(
                qm, np.clip(np.rint(wm / want[:, None]), -127, 127).astype(np.int8))
        else:  # biases: the scale is x_scale * w_scale, checked against the layer's
            layer = [m for m in q.graph.node if n.output[0] in m.input][0]
            xs = qw[[m for m in q.graph.node if m.output[0] == layer.input[0]][0].input[1]]
            ws = qw[[m for m in q.graph.node if m.output[0] == layer.input[1]][0].input[1]]
            ok = np.array_equal(s, (np.float32(xs) * ws).astype(np.float32)) and np.array_equal(
                wq, np.rint(w / s).astype(np.int32))
        checked += 1
        if not ok:
            bad += 1
            print("FAIL: %s" % name)
    qx = [n for n in q.graph.node if n.op_type == "QuantizeLinear" and n.input[0] == xname][0]
    lo, hi = min(float(calib.min()), 0.0), max(float(calib.max()), 0.0)
    s = np.float32((hi - lo) / 255)
    if qw[qx.input[1]] != s or qw[qx.input[2]] != np.uint8(np.clip(np.rint(-lo / s), 0, 255)):
        bad += 1
        print("FAIL: input scale %r zero point %r, want %r" % (qw[qx.input[1]], qw[qx.input[2]], s))
    print("%d weight and bias tensors checked, %d bad" % (checked, bad))
    sys.exit(1 if bad or checked == 0 else 0)


if __name__ == "__main__":
    main()
