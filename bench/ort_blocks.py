#!/usr/bin/python3
"""EfficientNet-B0 (and MobileNetV2-style) blocks: ONNX Runtime against kiln, block by block
(docs/benchmarks.md "EfficientNet-B0 on Zen 4"). ORT's per-node kernel times from
bench/ort_profile.js (wall us, the median over runs after the first 5; its Reorder nodes
counted with the block before them, column "ORT reorder") beside `kiln bench
--profile-file` files (the median over the files of each kernel's time), summed per
features.N.M block and per part of it (block.0 .. block.3: expansion, depthwise, squeeze
and excite, projection in an MBConv block; features.1.0 has no expansion, so its columns
read depthwise, squeeze, projection). kiln's projections include the squeeze's scale
(passes/sescale.c), ORT's is its Mul in the squeeze column.
usage: ort_blocks.py ORT_PROFILE.json K.json[,K2.json...]"""
import json, re, sys, statistics, collections
def key(n):
    m = re.search(r'features\.(\d+)/features\.\d+\.(\d+)(?:/block/block\.(\d+))?', n)
    if not m: return ('other', '')
    blk = 'f%s.%s' % (m.group(1), m.group(2))
    sub = m.group(3) or ''
    return (blk, sub)
def ort(f, skip=5):
    d = json.load(open(f)); by = collections.defaultdict(list); last = ('other','')
    order = []
    for e in d:
        if e.get('cat') != 'Node' or not e['name'].endswith('_kernel_time'): continue
        n = e['name']
        k = last if n.startswith('Reorder') else key(n)
        if not n.startswith('Reorder'): last = k
        if n.startswith('Reorder'): k = (k[0], k[1] + 'R')
        by[k].append(e['dur'])
    nrun = sum(1 for e in d if e.get('cat') == 'Session' and e['name'] == 'model_run')
    out = {}
    for k, v in by.items():
        per = len(v) // nrun
        out[k] = statistics.median(sum(v[i*per:(i+1)*per]) for i in range(nrun)[skip:])
    return out
def kiln(files):
    ks = [json.load(open(f))['kernels'] for f in files]
    out = collections.defaultdict(float)
    for i, k in enumerate(ks[0]):
        out[key(k['node'])] += statistics.median(x[i]['ms'] * 1000 for x in ks)
    return out
o = ort(sys.argv[1]); k = kiln(sys.argv[2].split(','))
subs = {'0':'exp','1':'dw','2':'se','3':'proj','':'-'}
blocks = []
for b,_ in list(k.keys()) + list(o.keys()):
    if b not in blocks: blocks.append(b)
print('| block | ' + ' | '.join('%s k/ORT' % s for s in ['exp','dw','se','proj','-']) + ' | ORT reorder | kiln | ORT | k-ORT |')
tk = to = 0
for b in blocks:
    row = []; sk = so = 0
    for s in ['0','1','2','3','']:
        kv = k.get((b,s), 0); ov = o.get((b,s), 0); sk += kv; so += ov
        row.append('%.0f/%.0f' % (kv, ov) if kv or ov else '')
    r = sum(v for (bb,s),v in o.items() if bb==b and s.endswith('R')); so += r
    tk += sk; to += so
    print('| %s | %s | %.0f | %.0f | %.0f | %+.0f |' % (b, ' | '.join(row), r, sk, so, sk-so))
print('total kiln %.0f ORT %.0f' % (tk, to))
