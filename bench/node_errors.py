#!/usr/bin/python3
"""Where a float32 model's results leave float32 rounding (issue 15, M-LSD; run by hand,
not a test). Runs MODEL with every float value made a graph output on ONNX Runtime
(npm's onnxruntime-node, both optimization levels) and on kiln's backends, then for
each node recomputes its output in float64 (numpy/torch, from the ONNX operator spec)
from the float32 inputs that the same runner computed, and prints, for each runner, the
node's local error against that float64 value.

A node's local error is scaled by the float32 rounding it can have: for Conv,
|got - ref| / (eps32 * (sum |x*w| + |b|)) (eps32 = 2^-24; a summation of n terms in any
order is within about n of that unit, a pairwise or blocked one within log2(n) or the
block count); for the elementwise and data-movement ops |got - ref| / (eps32 * |ref|)
(0 or 1 for a correctly rounded result); for Resize (linear) against the taps' sum of
|w*x|. It also runs the whole graph in float64 and prints each runner's error in the
outputs against it. Two more runners are plain float32 loops in numpy (every op
rounded to float32 once; a Conv as a loop of multiply-adds with the accumulator
starting at the bias, as kiln's lowering did until 2026-12-06, or at 0 with the bias
added after, as ONNX Runtime's MLAS and kiln now do): float32 evaluations that differ
only in summation order.
Only the ops of M-LSD are known (run_node); others raise NotImplementedError.

usage: /usr/bin/python3 bench/node_errors.py MODEL INPUT.npy KILN WORKDIR [BACKEND...]
environment: ORT_NODE (default /work/ort/node_modules/onnxruntime-node), WHOLE_ONLY=1
(the whole-graph table only). mlsd_tiny takes about 3 minutes on 2 loaded cores.
"""
import json, os, subprocess, sys
import numpy as np
import onnx
from onnx import helper, numpy_helper
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ORT_JS = os.path.join(HERE, '..', 'tests', 'models', 'ort_run.js')
EPS = 2.0 ** -24
os.environ.setdefault('ORT_NODE', '/work/ort/node_modules/onnxruntime-node')


def attrs(n):
    return {a.name: helper.get_attribute_value(a) for a in n.attribute}


def conv(x, w, b, a, absolute=False):
    """float64 Conv (NCHW, 2-D) by torch; with absolute, sum |x*w| + |b|."""
    x, w = torch.from_numpy(np.asarray(x, np.float64)), torch.from_numpy(np.asarray(w, np.float64))
    if absolute:
        x, w = x.abs(), w.abs()
    pads = a.get('pads', [0, 0, 0, 0])
    if a.get('auto_pad', b'NOTSET') not in (b'NOTSET', 'NOTSET'):
        raise ValueError('auto_pad')
    x = F.pad(x, (pads[1], pads[3], pads[0], pads[2]))
    y = F.conv2d(x, w, None, a.get('strides', [1, 1]), 0, a.get('dilations', [1, 1]),
                 a.get('group', 1)).numpy()
    if b is not None:
        bb = np.asarray(b, np.float64)
        y = y + (np.abs(bb) if absolute else bb).reshape(1, -1, 1, 1)
    return y


def resize_linear(x, sizes, absolute=False):
    """ONNX Resize, mode linear, half_pixel, on the last two axes (the only kind M-LSD has)."""
    x = np.asarray(x, np.float64)
    if absolute:
        x = np.abs(x)
    out = x
    for ax in (2, 3):
        n_in, n_out = x.shape[ax], int(sizes[ax])
        s = n_out / n_in
        c = np.clip((np.arange(n_out) + 0.5) / s - 0.5, 0, n_in - 1)
        i0 = np.floor(c).astype(int)
        i1 = np.minimum(i0 + 1, n_in - 1)
        f = c - i0
        shp = [1] * out.ndim
        shp[ax] = n_out
        f = f.reshape(shp)
        out = np.take(out, i0, axis=ax) * (1 - f) + np.take(out, i1, axis=ax) * f
    return out


def conv32(x, w, b, a, bias_first):
    """Conv in float32 as a loop of multiply-adds, one rounding each (the product, then
    the sum), over input channels and taps in order; the accumulator starts at the bias
    (bias_first: kiln's order until 2026-12-06) or at 0 with the bias added after the sum
    (ONNX Runtime's and kiln's order). Groups: 1 or depthwise."""
    x, w, b = x.astype(np.float32), w.astype(np.float32), b.astype(np.float32)
    pads, st, dl = a.get('pads', [0, 0, 0, 0]), a.get('strides', [1, 1]), a.get('dilations', [1, 1])
    g = a.get('group', 1)
    xp = np.pad(x[0], [(0, 0), (pads[0], pads[2]), (pads[1], pads[3])])
    O, Cg, KH, KW = w.shape
    OH = (xp.shape[1] - dl[0] * (KH - 1) - 1) // st[0] + 1
    OW = (xp.shape[2] - dl[1] * (KW - 1) - 1) // st[1] + 1
    acc = (np.broadcast_to(b[:, None, None], (O, OH, OW)) if bias_first
           else np.zeros((O, OH, OW), np.float32)).copy()
    for c in range(Cg):
        for i in range(KH):
            for j in range(KW):
                win = xp[:, i * dl[0]:i * dl[0] + st[0] * (OH - 1) + 1:st[0],
                         j * dl[1]:j * dl[1] + st[1] * (OW - 1) + 1:st[1]]
                if g == 1:
                    acc += w[:, c, i, j][:, None, None] * win[c][None]
                else:  # depthwise: output channel o reads input channel o
                    acc += w[:, c, i, j][:, None, None] * win
    if not bias_first:
        acc += b[:, None, None]
    return acc[None]


def run_node(n, ins, init):
    """Returns (float64 outputs, per-output rounding unit or None) of node n."""
    a = attrs(n)
    op = n.op_type
    x = ins
    f64 = [None if v is None else (v.astype(np.float64) if np.asarray(v).dtype.kind == 'f' else v)
           for v in x]
    if op == 'Conv':
        y = conv(f64[0], f64[1], f64[2] if len(f64) > 2 else None, a)
        u = conv(f64[0], f64[1], f64[2] if len(f64) > 2 else None, a, absolute=True)
        return [y], [u]
    if op == 'Resize':
        sizes = x[3]
        return [resize_linear(f64[0], sizes)], [resize_linear(f64[0], sizes, True)]
    if op in ('Add', 'Sub', 'Mul'):
        y = {'Add': np.add, 'Sub': np.subtract, 'Mul': np.multiply}[op](f64[0], f64[1])
        return [y], [np.abs(y)]
    if op == 'Clip':
        y = np.clip(f64[0], f64[1], f64[2])
        return [y], [np.abs(y)]
    if op == 'Relu':
        y = np.maximum(f64[0], 0)
        return [y], [np.abs(y)]
    if op == 'Sigmoid':
        y = 1 / (1 + np.exp(-f64[0]))
        return [y], [np.abs(y)]
    if op == 'Transpose':
        return [np.transpose(x[0], a['perm'])], None
    if op == 'Reshape':
        return [np.reshape(x[0], [int(d) for d in x[1]])], None
    if op == 'Concat':
        return [np.concatenate(x, axis=a['axis'])], None
    if op == 'Split':
        return np.split(x[0], np.cumsum(a['split'])[:-1], axis=a.get('axis', 0)), None
    if op == 'Shape':
        return [np.array(x[0].shape, np.int64)], None
    if op == 'Slice':
        st, en = x[1], x[2]
        axes = x[3] if len(x) > 3 else range(len(st))
        sl = [slice(None)] * np.ndim(x[0])
        for s, e, ax in zip(st, en, axes):
            sl[int(ax)] = slice(int(s), int(min(e, 2 ** 62)))
        return [np.asarray(x[0])[tuple(sl)]], None
    if op == 'Pad':
        p = [int(v) for v in x[1]]
        r = len(p) // 2
        return [np.pad(x[0], [(p[i], p[i + r]) for i in range(r)])], None
    if op == 'MaxPool':
        pads = a.get('pads', [0, 0, 0, 0])
        t = F.max_pool2d(F.pad(torch.from_numpy(f64[0]), (pads[1], pads[3], pads[0], pads[2]),
                               value=-np.inf), a['kernel_shape'], a.get('strides', [1, 1]))
        return [t.numpy()], None
    if op == 'Equal':
        return [np.equal(x[0], x[1])], None
    if op == 'Cast':
        return [np.asarray(x[0]).astype({1: np.float32, 7: np.int64, 9: np.bool_}[a['to']])], None
    raise NotImplementedError(op)


def evaluate(model, feeds, conv_mode=None):
    """The whole graph in float64 (integers and booleans as they are); with conv_mode
    'bias_first' or 'bias_last', a float32 run instead: Convs by conv32, every other
    float result rounded to float32 (correctly rounded, as a float32 kernel would)."""
    env = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    env.update({k: v.astype(np.float64 if conv_mode is None else np.float32)
                for k, v in feeds.items()})
    for n in model.graph.node:
        ins = [env[i] if i else None for i in n.input]
        if conv_mode and n.op_type == 'Conv':
            outs = [conv32(ins[0], ins[1], ins[2], attrs(n), conv_mode == 'bias_first')]
        else:
            outs, _ = run_node(n, ins, env)
            if conv_mode:
                outs = [o.astype(np.float32) if np.asarray(o).dtype == np.float64 else o
                        for o in outs]
        for name, v in zip(n.output, outs):
            env[name] = v
    return env


def shorten(model):
    """Renames the values nodes compute to NNN_Op (names of 200 characters do not make
    file names); graph outputs keep theirs."""
    keep = {o.name for o in model.graph.output}
    new = {}
    for k, n in enumerate(model.graph.node):
        for j, o in enumerate(n.output):
            if o not in keep:
                new[o] = '%03d_%s%s' % (k, n.op_type, '_%d' % j if len(n.output) > 1 else '')
    for n in model.graph.node:
        n.input[:] = [new.get(i, i) for i in n.input]
        n.output[:] = [new.get(o, o) for o in n.output]
    return model


def all_outputs(model, path):
    """Writes MODEL with every float value a graph output; returns the names."""
    m = onnx.shape_inference.infer_shapes(model)
    types = {v.name: v.type.tensor_type.elem_type for v in m.graph.value_info}
    have = {o.name for o in m.graph.output}
    names = []
    for n in m.graph.node:
        for o in n.output:
            if types.get(o) == onnx.TensorProto.FLOAT and o not in have:
                m.graph.output.append(helper.make_tensor_value_info(o, onnx.TensorProto.FLOAT, None))
                names.append(o)
    onnx.save(m, path)
    return names


def safe(name):
    return ''.join(c if c.isalnum() or c in '._-' else '_' for c in name)


def ort(model, inp_name, inp, work, level):
    out = os.path.join(work, 'ort_' + level)
    os.makedirs(out, exist_ok=True)
    f = os.path.join(work, 'input.bin')
    inp.tofile(f)
    man = {'model': model, 'opt': level, 'out_dir': out,
           'inputs': [{'name': inp_name, 'type': 'float32', 'dims': list(inp.shape), 'file': f}]}
    json.dump(man, open(os.path.join(out, 'm.json'), 'w'))
    subprocess.run(['node', ORT_JS, os.path.join(out, 'm.json')], check=True)
    res = {}
    for o in json.load(open(os.path.join(out, 'outputs.json'))):
        if o['type'] == 'float32':
            res[o['name']] = np.fromfile(o['file'], np.float32).reshape(o['dims'])
    return res


def kiln(kiln_bin, model, inp_name, inp_file, work, backend, names):
    out = os.path.join(work, 'kiln_' + backend)
    os.makedirs(out, exist_ok=True)
    subprocess.run([kiln_bin, 'run', model, '--backend', backend, '-q', '--output-dir', out,
                    '--input', '%s=%s' % (inp_name, inp_file)], check=True)
    return {n: np.load(os.path.join(out, safe(n) + '.npy')) for n in names
            if os.path.exists(os.path.join(out, safe(n) + '.npy'))}


def local_errors(model, vals, init):
    """Per node: (name, op, max scaled error, mean scaled error, max abs error)."""
    rows = []
    for n in model.graph.node:
        ins = []
        for i in n.input:
            if not i:
                ins.append(None)
            elif i in vals:
                ins.append(vals[i])
            elif i in init:
                ins.append(init[i])
            else:
                ins.append(init.get('__env__', {}).get(i))
        if any(v is None for v, i in zip(ins, n.input) if i):
            continue
        outs, units = run_node(n, ins, init)
        for k, o in enumerate(n.output):
            if o not in vals or np.asarray(outs[k]).dtype.kind != 'f':
                continue
            got = vals[o].astype(np.float64)
            err = np.abs(got - outs[k])
            unit = EPS * (units[k] if units else np.abs(outs[k]))
            sc = err / np.maximum(unit, 1e-300)
            sc[err == 0] = 0
            rows.append((o, n.op_type, float(sc.max()), float(sc.mean()), float(err.max())))
    return rows


def main():
    model_path, inp_path, kiln_bin, work = sys.argv[1:5]
    backends = sys.argv[5:] or ['interp', 'c', 'llvm', 'opencl']
    os.makedirs(work, exist_ok=True)
    model = shorten(onnx.load(model_path))
    inp_name = model.graph.input[0].name
    inp = np.load(inp_path).astype(np.float32)
    allm = os.path.join(work, 'all_outputs.onnx')
    names = all_outputs(model, allm)
    init = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    ref = evaluate(model, {inp_name: inp})
    # integer values (shapes) every runner agrees on: taken from the float64 run
    init['__env__'] = {k: v for k, v in ref.items() if np.asarray(v).dtype == np.int64}
    runners = {}
    for mode in ('bias_last', 'bias_first'):
        runners['sim32_' + mode] = evaluate(model, {inp_name: inp}, mode)
    for level in ('disabled', 'all'):
        runners['ort_' + level] = ort(allm, inp_name, inp, work, level)
    for b in backends:
        runners['kiln_' + b] = kiln(kiln_bin, allm, inp_name, inp_path, work, b,
                                    names + [o.name for o in model.graph.output])
    outs = [o.name for o in model.graph.output]
    print('## whole-graph error against float64 (max / mean abs)')
    for r, vals in runners.items():
        cells = []
        for o in outs:
            if o in vals:
                e = np.abs(vals[o].astype(np.float64) - ref[o].astype(np.float64))
                cells.append('%s %.2e / %.2e' % (o, e.max(), e.mean()))
        print('%-12s %s' % (r, '  '.join(cells)))
    if os.environ.get('WHOLE_ONLY'):
        return
    print('\n## per-node local error in float32 rounding units (max, mean) and max abs')
    table = {r: {row[0]: row for row in local_errors(model, vals, init)} for r, vals in runners.items()}
    order = [row[0] for row in local_errors(model, runners['ort_disabled'], init)]
    print('node | op | ' + ' | '.join(runners))
    for o in order:
        op = table['ort_disabled'][o][1]
        cells = ['%.1f %.2f %.1e' % table[r][o][2:] if o in table[r] else '-' for r in runners]
        print('%s | %s | %s' % (o[-60:], op, ' | '.join(cells)))


if __name__ == '__main__':
    main()
