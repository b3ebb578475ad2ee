#!/usr/bin/python3
"""ONNX Runtime (onnxruntime-node) on tests/quant/contrib's models, against their expected
outputs (numpy, the documented formulas): per output the elements that differ and by how
much. Not a CTest test: it needs node and ORT.

    ORT=/work/ort/node_modules/onnxruntime-node /usr/bin/python3 bench/ort_contrib.py
"""
import base64
import glob
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
TYPES = {np.bool_: "bool", np.uint8: "uint8", np.int8: "int8", np.float32: "float32", np.int32: "int32"}


def load(d, kind):
    out = []
    for f in sorted(glob.glob(os.path.join(d, "test_data_set_0", kind + "_*.pb")),
                    key=lambda p: int(p.rsplit("_", 1)[1].split(".")[0])):
        t = onnx.TensorProto()
        with open(f, "rb") as fh:
            t.ParseFromString(fh.read())
        out.append((t.name, numpy_helper.to_array(t)))
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "tests", "quant",
                                                              "contrib")
    total = 0
    for d in sorted(glob.glob(os.path.join(root, "*"))):
        m = onnx.load(os.path.join(d, "model.onnx"))
        ins = load(d, "input")
        names = [i.name for i in m.graph.input]
        js = {names[k]: {"type": TYPES[a.dtype.type], "dims": list(a.shape),
                         "data": base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()}
              for k, (_, a) in enumerate(ins)}
        with tempfile.TemporaryDirectory() as t:
            fi, fo = os.path.join(t, "in.json"), os.path.join(t, "out.json")
            with open(fi, "w") as fh:
                json.dump(js, fh)
            r = subprocess.run(["node", os.path.join(HERE, "ort_contrib.js"),
                                os.path.join(d, "model.onnx"), fi, fo],
                               capture_output=True, text=True)
            if r.returncode:
                print("%-12s ORT failed: %s" % (os.path.basename(d), r.stderr.strip()[:300]))
                continue
            res = json.load(open(fo))
        for k, (_, want) in enumerate(load(d, "output")):
            name = m.graph.output[k].name
            v = res[name]
            got = np.frombuffer(base64.b64decode(v["data"]), want.dtype).reshape(v["dims"])
            if want.dtype == np.float32:
                diff = np.abs(got - want) > 1e-5 + 1e-4 * np.abs(want)
            else:
                diff = got != want
            n = int(diff.sum())
            total += n
            worst = (int(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64))))
                     if n and want.dtype != np.float32 else 0)
            print("%-12s %-6s %5d elements, %4d differ%s" % (
                os.path.basename(d), name, want.size, n,
                " (by up to %d steps)" % worst if n and want.dtype != np.float32 else ""))
    print("ORT %s: %d elements differ from the documented formulas" % (r.stdout.strip(), total))


if __name__ == "__main__":
    main()
