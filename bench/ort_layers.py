#!/usr/bin/python3
"""Per-layer table of ONNX Runtime against kiln on SqueezeNet 1.1 (docs/benchmarks.md
"SqueezeNet against ONNX Runtime, layer by layer"): ORT's per-node kernel times from
bench/ort_profile.js (wall us, the median over runs after the first 5; ORT names a Conv
fused with its Relu by the Relu's output, and its NCHWc ReorderOutput after the classifier
counts with the classifier) beside two sets of `kiln bench --profile-file` files, A and B (the
median over the files of each kernel's mean).
usage: ort_layers.py ORT_PROFILE.json A.json[,A2.json...] B.json[,B2.json...]"""
import json, sys, statistics, re
def ort_nodes(f, skip=5):
    d = json.load(open(f))
    by = {}
    for e in d:
        if e.get('cat') != 'Node' or not e['name'].endswith('_kernel_time'): continue
        n = e['name'][:-len('_kernel_time')]
        n = re.sub(r'_output_0_nchwc$', '', n)
        n = n.replace('/features/features.1/Relu', '/features/features.0/Conv')
        n = re.sub(r'/(squeeze|expand1x1|expand3x3)_activation/Relu', r'/\1/Conv', n)
        n = n.replace('/classifier/classifier.2/Relu', '/classifier/classifier.1/Conv')
        if n == 'ReorderOutput': n = '/classifier/classifier.1/Conv'  # ORT's NCHWc -> NCHW after it
        by.setdefault(n, []).append(e['dur'])
    nrun = sum(1 for e in d if e.get('cat') == 'Session' and e['name'] == 'model_run')
    out = {}
    for n, v in by.items():
        per = len(v) // nrun  # entries a run
        runs = [sum(v[i*per:(i+1)*per]) for i in range(nrun)][skip:]
        out[n] = statistics.median(runs)
    return out
def kiln(files):
    ks = [json.load(open(f))['kernels'] for f in files]
    out = {}
    for i, k in enumerate(ks[0]):
        out[k['node']] = statistics.median(x[i]['ms'] * 1000 for x in ks)
    return out
ort = ort_nodes(sys.argv[1]); base = kiln(sys.argv[2].split(',')); new = kiln(sys.argv[3].split(','))
print('| layer | ORT us | kiln A us | kiln B us | B/ORT | B - ORT us |')
print('|---|---:|---:|---:|---:|---:|')
T = [0, 0, 0]
for n in base:
    o = ort.get(n, 0.0); b = base[n]; s = new[n]
    T[0] += o; T[1] += b; T[2] += s
    print('| %s | %.0f | %.0f | %.0f | %s | %+.0f |' % (n.replace('/features/', '').replace('/classifier/', ''), o, b, s, '%.2f' % (s / o) if o else '-', s - o))
print('| sum | %.0f | %.0f | %.0f | %.2f | %+.0f |' % (T[0], T[1], T[2], T[2] / T[0], T[2] - T[0]))
