#!/bin/sh
# The LLVM backend's benchmarks, all measured in one run and printed as a table:
#   (a) JIT compile time to the first result, ResNet-18 (target <= 1.5 s), the
#       median of three fresh processes
#   (b) object emission time and peak RSS, ResNet-50 (target <= 3 s)
#   (c) latency of the JIT code against the C backend built with gcc -O3
#       -march=native, ResNet-18, as a ratio of medians measured in this run
#   (d) ONNX Runtime (npm's onnxruntime-node) on ResNet-18, if npm is there, on one
#       thread and on all cores (THREADS, default nproc) against the JIT on as many
# Timings move with the machine's other load: compare ratios from one run.
#
# usage: bench/run.sh BUILD_DIR   (BUILD_DIR holds a built kiln; a Release build)
# env:   RUNS (timed runs for (c) and (d), default 10), NO_ORT=1 skips (d),
#        THREADS (threads of the multi-threaded comparison, default nproc)
# Models go to BUILD_DIR/bench-models (made by bench/make_models.py if missing),
# onnxruntime-node to BUILD_DIR/bench-ort; nothing is written to the source tree.
set -eu
[ $# -eq 1 ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
B=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
KILN=$B/kiln
M=$B/bench-models
RUNS=${RUNS:-10}
THREADS=${THREADS:-$(nproc)}
[ -x "$KILN" ] || { echo "no kiln in $B: build it first" >&2; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

if [ ! -f "$M/resnet18.onnx" ] || [ ! -f "$M/resnet50.onnx" ]; then
  /usr/bin/python3 "$SRC/bench/make_models.py" "$M" resnet18 resnet50
fi

# field KEY: the number KEY in the one-line JSON object on stdin
field() { sed -n "s/.*\"$1\": \([0-9.eE+-]*\).*/\1/p"; }
# ms TEXT: "h:mm:ss" or "m:ss.ss" (GNU time's elapsed) in milliseconds
ms() { echo "$1" | awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.0f", s * 1000 }'; }

echo "kiln bench on $(uname -n), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "(a shared machine: absolute timings are noisy; ratios are measured in this one run)"
echo

# (a) JIT compile time to first result: compile (passes, lowering, JIT) + first run,
# the run with the median total of three fresh processes
for i in 1 2 3; do
  J=$("$KILN" bench "$M/resnet18.onnx" --backend llvm --runs 1 --warmup 0 --json)
  echo "$(echo "$J" | field compile_ms) $(echo "$J" | field first_ms) $(echo "$J" | field load_ms)"
done | awk '{ printf "%.0f %s %s %s\n", $1 + $2, $1, $2, $3 }' | sort -n >"$T/a.txt"
read -r a_total a_compile a_first a_load <<EOF2
$(sed -n 2p "$T/a.txt")
EOF2
a_all=$(cut -d' ' -f1 "$T/a.txt" | tr '\n' ' ')

# (b) object emission for ResNet-50 (kiln compile --emit obj when it exists)
if "$KILN" compile --help 2>&1 | grep -q 'obj'; then
  b_what="kiln compile --emit obj"
  b_args="--emit obj"
else
  b_what="kiln compile --emit c (no --emit obj yet)"
  b_args="--emit c"
fi
# shellcheck disable=SC2086
/usr/bin/time -v "$KILN" compile "$M/resnet50.onnx" $b_args -o "$T/r50" >"$T/b.out" 2>"$T/b.time" ||
  { cat "$T/b.out" "$T/b.time" >&2; exit 1; }
b_ms=$(ms "$(sed -n 's/.*Elapsed (wall clock) time.*: //p' "$T/b.time")")
b_rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$T/b.time")
b_size=$(du -sk "$T/r50" | cut -f1)

# (c) JIT against gcc -O3 -march=native, same inputs, same run
JL=$("$KILN" bench "$M/resnet18.onnx" --backend llvm --runs "$RUNS" --warmup 3 --json)
JC=$(CC=gcc "$KILN" bench "$M/resnet18.onnx" --backend c --runs "$RUNS" --warmup 3 --json)
JT=$("$KILN" bench "$M/resnet18.onnx" --backend llvm --threads "$THREADS" --runs "$RUNS" --warmup 3 --json)
t_med=$(echo "$JT" | field median_ms)
l_med=$(echo "$JL" | field median_ms)
l_min=$(echo "$JL" | field min_ms)
l_gf=$(echo "$JL" | field gflops)
c_med=$(echo "$JC" | field median_ms)
c_min=$(echo "$JC" | field min_ms)
c_gf=$(echo "$JC" | field gflops)
c_compile=$(echo "$JC" | field compile_ms)
ratio=$(echo "$l_med $c_med" | awk '{ printf "%.2f", $1 / $2 }')

# (d) ONNX Runtime through onnxruntime-node, if npm can install it
o_med="" o_min="" o_tmed=""
if [ -z "${NO_ORT:-}" ] && command -v npm >/dev/null && command -v node >/dev/null; then
  ORT=$B/bench-ort
  if [ ! -d "$ORT/node_modules/onnxruntime-node" ]; then
    mkdir -p "$ORT" # the CPU library is in the package; its install script only fetches CUDA's
    npm install --prefix "$ORT" --no-audit --no-fund --silent --ignore-scripts onnxruntime-node >"$T/npm.log" 2>&1 ||
      { echo "(d) skipped: npm install onnxruntime-node failed:"; tail -3 "$T/npm.log"; }
  fi
  if [ -d "$ORT/node_modules/onnxruntime-node" ]; then
    cat >"$T/ort.js" <<'EOF'
// One session on `threads` intra-op threads; prints "median_ms min_ms".
const ort = require('onnxruntime-node');
(async () => {
  const [model, runs, threads] = [process.argv[2], +process.argv[3], +process.argv[4]];
  const s = await ort.InferenceSession.create(model, { intraOpNumThreads: threads, interOpNumThreads: 1 });
  const x = new Float32Array(3 * 224 * 224).map(() => Math.random() * 2 - 1);
  const feeds = { [s.inputNames[0]]: new ort.Tensor('float32', x, [1, 3, 224, 224]) };
  for (let i = 0; i < 3; i++) await s.run(feeds);
  const t = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    await s.run(feeds);
    t.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  t.sort((a, b) => a - b);
  const med = runs % 2 ? t[runs >> 1] : (t[runs / 2 - 1] + t[runs / 2]) / 2;
  console.log(med.toFixed(3), t[0].toFixed(3));
})();
EOF
    if NODE_PATH=$ORT/node_modules node "$T/ort.js" "$M/resnet18.onnx" "$RUNS" 1 >"$T/ort.out" 2>&1 &&
      NODE_PATH=$ORT/node_modules node "$T/ort.js" "$M/resnet18.onnx" "$RUNS" "$THREADS" >"$T/ortt.out" 2>&1; then
      o_med=$(cut -d' ' -f1 "$T/ort.out")
      o_min=$(cut -d' ' -f2 "$T/ort.out")
      o_tmed=$(cut -d' ' -f1 "$T/ortt.out")
    else
      echo "(d) skipped: onnxruntime-node failed: $(tail -1 "$T/ort.out")"
    fi
  fi
else
  echo "(d) skipped: no npm/node (or NO_ORT set)"
fi

pass() { awk -v v="$1" -v t="$2" 'BEGIN { print (v <= t ? "ok" : "over") }'; }
printf '%-58s %12s %10s %s\n' "measure" "value" "target" ""
printf '%-58s %9s ms %7s ms %s\n' "(a) ResNet-18 JIT: compile + first run (median of 3)" \
  "$a_total" 1500 "$(pass "$a_total" 1500)"
printf '%-58s %12s\n' "      the three runs, ms" "$a_all"
printf '%-58s %9.0f ms\n' "      compile (passes, lowering, LLVM opt, JIT)" "$a_compile"
printf '%-58s %9.0f ms\n' "      first run" "$a_first"
printf '%-58s %9.0f ms\n' "      ONNX load (not counted)" "$a_load"
printf '%-58s %9s ms %7s ms %s\n' "(b) ResNet-50 $b_what" "$b_ms" 3000 "$(pass "$b_ms" 3000)"
printf '%-58s %9s MB\n' "      peak RSS" "$((b_rss / 1024))"
printf '%-58s %9s MB\n' "      output size" "$((b_size / 1024))"
printf '%-58s %9s ms   (min %s, %s GFLOP/s)\n' "(c) ResNet-18 median, LLVM JIT ($RUNS runs)" "$l_med" \
  "$l_min" "$l_gf"
printf '%-58s %9s ms   (min %s, %s GFLOP/s)\n' "    ResNet-18 median, C backend gcc -O3 -march=native" \
  "$c_med" "$c_min" "$c_gf"
printf '%-58s %9s      (below 1: the JIT is faster)\n' "    ratio JIT / C" "$ratio"
printf '%-58s %9.0f ms\n' "    C backend compile (emit C + gcc)" "$c_compile"
if [ -n "$o_med" ]; then
  printf '%-58s %9s ms   (min %s, 1 thread)\n' "(d) ResNet-18 median, ONNX Runtime (onnxruntime-node)" \
    "$o_med" "$o_min"
  printf '%-58s %9s      (below 1: kiln is faster)\n' "    ratio JIT / ONNX Runtime, 1 thread" \
    "$(echo "$l_med $o_med" | awk '{ printf "%.2f", $1 / $2 }')"
  printf '%-58s %9s ms\n' "    ResNet-18 median, ONNX Runtime, $THREADS threads" "$o_tmed"
  printf '%-58s %9s ms\n' "    ResNet-18 median, LLVM JIT, $THREADS threads" "$t_med"
  printf '%-58s %9s\n' "    ratio JIT / ONNX Runtime, $THREADS threads" \
    "$(echo "$t_med $o_tmed" | awk '{ printf "%.2f", $1 / $2 }')"
fi
