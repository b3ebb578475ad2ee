#!/bin/sh
# Issue #16's "large convolutions and GEMMs at >= 85% of the one-core FMA peak", measured
# the way docs/benchmarks.md ("% of the one-core peak: a protocol", branch gp) says:
# in each round the peak probe (bench/peak.c, 1 thread) runs, then each product alone on
# one thread (`kiln bench --threads 1 --json`: --warmup-ms's warm-up, RUNS timed runs),
# then (CONVS=1) ResNet-50 with per-kernel CPU time (--profile-clock cpu) for its largest
# convolutions; every GFLOP/s is divided by the same round's probe. The summary gives each
# product's median over the rounds.
#
# usage: bench/gemm_peak.sh BUILD_DIR [MxKxN...]   (default 512x1024x1024 196x2304x256
#        3136x576x64: a MatMul of an input A (M x K) by a constant B (K x N))
# env:   ROUNDS (default 5), RUNS (timed runs a measurement, default 30), CONVS (1: also
#        ResNet-50's convolutions of at least CONV_MFLOP (default 100) MFLOP, from
#        BUILD_DIR/bench-models/resnet50.onnx; default 1 when that file exists), CC (gcc)
#
# Two figures per product: "wall" is FLOPs over the median latency (what kiln bench
# prints), "cpu" FLOPs over the process's CPU time per timed run (load-robust: time other
# processes take from the core is not counted, like the probe's). Run it alone: on a
# shared machine under the project's CPU lock (flock -x /tmp/kiln.cpu.lock sh
# bench/gemm_peak.sh build), a round taking some 10 s.
# Products are written once to BUILD_DIR/gemm-models with Debian's python3-onnx.
set -eu
B=${1:?usage: bench/gemm_peak.sh BUILD_DIR [MxKxN...]}
shift
SRC=$(cd "$(dirname "$0")/.." && pwd)
K="$B/kiln"
ROUNDS=${ROUNDS:-5}
RUNS=${RUNS:-30}
CC=${CC:-gcc}
CONV_MFLOP=${CONV_MFLOP:-100}
R50="$B/bench-models/resnet50.onnx"
if [ -z "${CONVS:-}" ]; then
  if [ -f "$R50" ]; then CONVS=1; else CONVS=0; fi
fi
[ $# -gt 0 ] || set -- 512x1024x1024 196x2304x256 3136x576x64
M="$B/gemm-models"
mkdir -p "$M"
for p in "$@"; do
  [ -f "$M/mm_$p.onnx" ] && continue
  /usr/bin/python3 - "$p" "$M/mm_$p.onnx" <<'EOF'
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
m, k, n = (int(x) for x in sys.argv[1].split("x"))
b = numpy_helper.from_array(np.random.default_rng(7).standard_normal((k, n)).astype(np.float32), "B")
g = helper.make_graph([helper.make_node("MatMul", ["A", "B"], ["Y"])], "mm",
                      [helper.make_tensor_value_info("A", TensorProto.FLOAT, [m, k])],
                      [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [m, n])], [b])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[2])
EOF
done
PEAK="$B/gemm-peak"
[ -x "$PEAK" ] || $CC -O2 -march=native -pthread "$SRC/bench/peak.c" -o "$PEAK"

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
r=1
while [ $r -le "$ROUNDS" ]; do
  pk=$("$PEAK" 1 | sed -n 's/^peak 1 thread: \([0-9.]*\).*/\1/p')
  echo "round $r: peak $pk GFLOP/s"
  for p in "$@"; do
    "$K" bench "$M/mm_$p.onnx" --threads 1 --runs "$RUNS" --json >"$T/j" 2>/dev/null
    /usr/bin/python3 - "$T/j" "$pk" "$p" "$r" >>"$T/rows" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
pk = float(sys.argv[2])
w = j["flops"] / (j["median_ms"] * 1e6)
c = j["flops"] / (j["cpu_ms"] * 1e6)
print(f"{sys.argv[4]} mm_{sys.argv[3]} {w:.1f} {c:.1f} {100 * w / pk:.1f} {100 * c / pk:.1f}")
EOF
    tail -1 "$T/rows" | awk '{printf "  %-28s wall %6.1f GFLOP/s %5.1f%%   cpu %6.1f GFLOP/s %5.1f%%\n", $2, $3, $5, $4, $6}'
  done
  if [ "$CONVS" = 1 ]; then
    "$K" bench "$R50" --threads 1 --runs "$RUNS" --profile-clock cpu --profile-file "$T/prof.json" \
      --dump-schedule "$T/r50.sched" --json >/dev/null 2>&1
    /usr/bin/python3 - "$T/prof.json" "$pk" "$r" "$CONV_MFLOP" "$T/r50.sched" >>"$T/rows" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
pk, r, lim = float(sys.argv[2]), sys.argv[3], float(sys.argv[4]) * 1e6
wino = set()  # kernels the schedule runs as Winograd: their FLOPs are the direct ones
for line in open(sys.argv[5]):
    if line.startswith("kernel ") and " wino=" in line:
        wino.add(int(line.split()[1]))
big = [k for k in p["kernels"] if k["op"] == "Conv" and k["flops"] >= lim and k["ms"] > 0]
def row(name, fl, ms):
    g = fl / (ms * 1e6)
    print(f"{r} {name} {g:.1f} {g:.1f} {100 * g / pk:.1f} {100 * g / pk:.1f}")
for k in big:
    row("r50:" + (k["node"] or str(k["kernel"])) + ("[wino]" if k["kernel"] in wino else ""),
        k["flops"], k["ms"])
for tag, ks in (("winograd", [k for k in big if k["kernel"] in wino]),
                ("direct", [k for k in big if k["kernel"] not in wino])):
    if ks:
        row(f"r50:{tag}_convs>={sys.argv[4]}MFLOP(x{len(ks)})", sum(k["flops"] for k in ks),
            sum(k["ms"] for k in ks))
EOF
    grep "^$r r50:direct" "$T/rows" |
      awk '{printf "  %-28s cpu %6.1f GFLOP/s %5.1f%% (per-kernel CPU time)\n", $2, $4, $6}'
  fi
  r=$((r + 1))
done
echo
echo "median over $ROUNDS rounds (% of each round's own probe; r50: per-kernel thread CPU time,"
echo "a Winograd kernel counted at its direct convolution's FLOPs):"
printf '  %-52s %9s %7s %9s %7s\n' product "wall GF/s" "%peak" "cpu GF/s" "%peak"
/usr/bin/python3 - "$T/rows" <<'EOF'
import statistics
import sys
rows = {}  # name: its rounds' [wall GF/s, cpu GF/s, wall %, cpu %], in first-seen order
for line in open(sys.argv[1]):
    f = line.split()
    rows.setdefault(f[1], []).append([float(v) for v in f[2:6]])
for name, rs in rows.items():
    w, c, wp, cp = (statistics.median(col) for col in zip(*rs))
    print(f"  {name:<52} {w:9.1f} {wp:6.1f}% {c:9.1f} {cp:6.1f}%")
EOF
