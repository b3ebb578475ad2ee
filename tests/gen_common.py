"""What the test-model generators (tests/*/make_*.py) share: seeded random float32
arrays, initializers and float value infos, the model with its opset, and the ONNX
backend-test folder that `kiln check-onnx` reads (model.onnx and test_data_set_0 with
input_N.pb and output_N.pb, in graph order). A generator in tests/NAME/ imports it as

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import gen_common as gc

and runs under Debian's /usr/bin/python3 (numpy and onnx; torch where the references
come from torch). Nothing here draws random numbers but the generator `uniform` returns,
so a generator's draws, and the files it writes, do not depend on this module."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def uniform(seed):
    """rnd(*shape): float32 arrays uniform in [-1, 1), drawn in call order from one
    numpy generator seeded with seed."""
    rng = np.random.default_rng(seed)

    def rnd(*shape):
        return rng.uniform(-1, 1, shape).astype(np.float32)

    return rnd


def initializers(pairs):
    """Initializers from (array, name) pairs."""
    return [numpy_helper.from_array(a, n) for a, n in pairs]


def vi(name, shape, elem=TensorProto.FLOAT):
    """A value info of elem type (float by default) and the given shape."""
    return helper.make_tensor_value_info(name, elem, list(shape))


def float_graph(nodes, name, inputs, outputs, inits):
    """A graph whose float inputs are the (name, array) pairs `inputs` and whose float
    outputs y1, y2, ... have the shapes of the arrays (or tensors) `outputs`."""
    return helper.make_graph(nodes, name, [vi(n, a.shape) for n, a in inputs],
                             [vi(f"y{i + 1}", y.shape) for i, y in enumerate(outputs)], inits)


def model(graph, opset=14, check=True, ir_version=None):
    """graph as a model of the default domain at opset, checked by onnx.checker unless
    check is false (graphs with kiln's own attributes, such as kn.epilogue, fail it)."""
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    if ir_version is not None:
        m.ir_version = ir_version
    if check:
        onnx.checker.check_model(m)
    return m


def _array(a):
    """a as a numpy array (torch tensors through .numpy())."""
    return a.numpy() if hasattr(a, "numpy") else a


def write_case(d, m, inputs, outputs):
    """d/model.onnx = m and d/test_data_set_0/input_N.pb, output_N.pb: each item of
    inputs and outputs an array or torch tensor (a tensor without a name) or a
    (name, array) pair (a tensor of that name)."""
    data = os.path.join(d, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    onnx.save(m, os.path.join(d, "model.onnx"))
    for kind, items in (("input", inputs), ("output", outputs)):
        for i, a in enumerate(items):
            t = (numpy_helper.from_array(_array(a[1]), a[0]) if isinstance(a, tuple) else
                 numpy_helper.from_array(_array(a)))
            onnx.save_tensor(t, os.path.join(data, f"{kind}_{i}.pb"))
