#!/bin/sh
# int8 against fp32 in one run (#12): for each float model, its QDQ form written by
# bench/make_qdq.py, then kiln (LLVM JIT) and ONNX Runtime (npm's onnxruntime-node, CPU
# provider) on both, 1 thread, in ROUNDS interleaved rounds of RUNS runs each; prints
# each configuration's median and minimum latency (ms) over all rounds and its CPU time
# per run (kiln bench's cpu_ms; ORT: process.cpuUsage() over the timed runs), median of
# the rounds, and the ratios int8/fp32 (kiln), kiln int8 / ORT int8 of each. Under load
# (other processes on the cores) the CPU time is the steadier figure, then the minimum.
# The last column times kiln int8 and ORT int8 once more, interleaved run by run in one
# node process (bench/ort_pair.js, as bench/run.sh does: turns of CHUNK runs each), and
# gives the median over the rounds of each round's ratio of medians: a change of the
# VM's state within a round falls on both alike.
#
#   sh bench/quant_compare.sh BUILD_DIR MODEL.onnx...
#   sh bench/quant_compare.sh BUILD_DIR MODEL.onnx=QDQ.onnx...   (a QDQ file of your own,
#        e.g. written by `kiln quantize MODEL.onnx --calibrate ... -o QDQ.onnx`)
#   env: RUNS (default 20), ROUNDS (3), CHUNK (runs per turn of the paired timing, 2),
#        ORT_NODE (an onnxruntime-node folder; default
#        BUILD_DIR/bench-ort/node_modules/onnxruntime-node, as bench/run.sh installs it)
set -eu
B=$(cd "$1" && pwd)
shift
K=$B/kiln
SRC=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${RUNS:-20}
ROUNDS=${ROUNDS:-3}
ORT=${ORT_NODE:-$B/bench-ort/node_modules/onnxruntime-node}
MODELS="$*"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
[ -d "$ORT" ] || { echo "no onnxruntime-node at $ORT (set ORT_NODE, or run bench/run.sh once)"; ORT=""; }
kiln_run() { # MODEL OUTFILE: appends "median min cpu"
  "$K" bench "$1" --threads 1 --runs "$RUNS" --warmup 3 --json 2>/dev/null |
    /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["median_ms"], d["min_ms"], d["cpu_ms"])' >>"$2"
}
pair_run() { # QDQ OUTFILE SHAPE: appends "kiln_median/ort_median" of one interleaved turn
  [ -n "$ORT" ] || return 0
  ORT=$ORT node "$SRC/bench/ort_pair.js" "$1" "$RUNS" 1 "$3" "$K" bench "$1" --threads 1 \
    --warmup 3 --paced --json 2>/dev/null | head -1 |
    /usr/bin/python3 -c 'import sys; k, o = sys.stdin.read().split()[:2]; print(float(k) / float(o))' >>"$2" || true
}
ort_run() {
  [ -n "$ORT" ] || return 0
  ORT=$ORT node "$SRC/bench/ort_time.js" "$1" "$RUNS" 1 "$3" 2>/dev/null | cut -d' ' -f1,2,4 >>"$2"
}
stat() { # FILE: "median(of medians) min(of mins) median(of cpu)"
  [ -s "$1" ] || { echo "- - -"; return; }
  /usr/bin/python3 -c 'import sys,statistics as s; r=[l.split() for l in open(sys.argv[1])]; print("%.2f %.2f %.2f" % (s.median(float(x[0]) for x in r), min(float(x[1]) for x in r), s.median(float(x[2]) for x in r)))' "$1"
}
for arg in "$@"; do
  m=${arg%%=*}
  n=$(basename "$m" .onnx)
  if [ "$m" = "$arg" ]; then
    /usr/bin/python3 "$SRC/bench/make_qdq.py" "$K" "$m" "$T/$n.qdq.onnx"
  else
    cp "${arg#*=}" "$T/$n.qdq.onnx"
  fi
  shape=$(/usr/bin/python3 -c 'import onnx,sys; g=onnx.load(sys.argv[1], load_external_data=False).graph; print(",".join(str(d.dim_value) for d in g.input[0].type.tensor_type.shape.dim))' "$m")
  r=0
  while [ $r -lt "$ROUNDS" ]; do
    kiln_run "$m" "$T/$n.kf"
    kiln_run "$T/$n.qdq.onnx" "$T/$n.kq"
    ort_run "$m" "$T/$n.of" "$shape"
    ort_run "$T/$n.qdq.onnx" "$T/$n.oq" "$shape"
    pair_run "$T/$n.qdq.onnx" "$T/$n.pq" "$shape"
    r=$((r + 1))
  done
done
echo "load $(cut -d' ' -f1-3 /proc/loadavg); kiln $(git -C "$SRC" rev-parse --short HEAD); 1 thread; median / min / cpu ms"
printf '%-12s %20s %20s %20s %20s %17s %17s %8s\n' model "kiln fp32" "kiln int8" "ORT fp32" "ORT int8" "k int8/fp32" "k/ORT int8" "paired"
for arg in $MODELS; do
  n=$(basename "${arg%%=*}" .onnx)
  set -- $(stat "$T/$n.kf") $(stat "$T/$n.kq") $(stat "$T/$n.of") $(stat "$T/$n.oq")
  printf '%-12s %6s/%6s/%6s %6s/%6s/%6s %6s/%6s/%6s %6s/%6s/%6s' "$n" "$@"
  /usr/bin/python3 -c 'import sys; a=sys.argv[1:]
def q(x, y):
    try: return "%.2f" % (float(x) / float(y))
    except ValueError: return "-"
print(" %5s/%5s/%5s %5s/%5s/%5s" % (q(a[3], a[0]), q(a[4], a[1]), q(a[5], a[2]), q(a[3], a[9]), q(a[4], a[10]), q(a[5], a[11])), end="")' "$@"
  /usr/bin/python3 -c 'import sys,statistics as s
try: print(" %8.2f" % s.median(float(l) for l in open(sys.argv[1])))
except (OSError, ValueError, s.StatisticsError): print(" %8s" % "-")' "$T/$n.pq"
done
