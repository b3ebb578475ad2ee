#!/bin/sh
# kiln's benchmarks (issue #16), all measured in one run and printed as tables:
#   peak   fp32 FMA peak of this machine on 1 and THREADS threads (bench/peak.c, gcc
#          -O2 -march=native), the yardstick for "% of peak"
#   table  per model (bench/make_models.py: LeNet-5, MLP, SqueezeNet 1.1, MobileNetV2,
#          EfficientNet-B0, BERT-style encoder, ResNet-18, ResNet-50; batch 1), median
#          latency in ms of the kiln JIT on 1 and THREADS threads, the generated C built
#          with $CC -O2 -march=native on 1 thread, ONNX Runtime (npm's onnxruntime-node,
#          CPU) on 1 and THREADS threads; kiln/ORT ratios (below 1: kiln is faster), C/JIT,
#          the JIT's 2-thread speed-up, its GFLOP/s and their share of the 1-core peak
#   compile  ResNet-18 JIT compile + first run, ResNet-50 --emit obj, ResNet-18's C build
# With --passes-effect instead: ResNet-18, MobileNetV2 and the BERT-style encoder with
# the default pipeline and with each of its passes left out by name (JIT, 1 and THREADS
# threads); a pass the pipeline cannot do without is reported as such.
#
# Each latency is the median of ROUNDS medians (the rounds interleave the
# configurations, so a burst of load elsewhere hits all of them alike), each over RUNS
# timed runs after warm-up. On a shared machine absolute times are noisy: compare the
# ratios of one run. Benchmarks are not CTest tests.
#
# usage: bench/run.sh BUILD_DIR [--passes-effect] [MODEL...]
#        (BUILD_DIR holds a built kiln, a Release or RelWithDebInfo build; MODEL names
#        from bench/make_models.py, default all)
# env:   RUNS (timed runs per measurement, default 20; 5 with --passes-effect),
#        ROUNDS (default 3; 1 with --passes-effect), THREADS (default 2),
#        NO_ORT=1 skips ONNX Runtime, NO_C=1 skips the C backend, CC (default gcc),
#        ORT_NODE (an installed onnxruntime-node folder to use instead of installing
#        onnxruntime-node@ORT_VERSION, default 1.30.0, into BUILD_DIR/bench-ort)
# Models go to BUILD_DIR/bench-models (made by bench/make_models.py when missing);
# nothing is written to the source tree.
set -eu
usage() { echo "usage: $0 BUILD_DIR [--passes-effect] [MODEL...]" >&2; exit 2; }
[ $# -ge 1 ] || usage
B=$(cd "$1" && pwd)
shift
MODE=table
if [ $# -ge 1 ] && [ "$1" = --passes-effect ]; then
  MODE=passes
  shift
fi
SRC=$(cd "$(dirname "$0")/.." && pwd)
KILN=$B/kiln
M=$B/bench-models
THREADS=${THREADS:-2}
if [ $MODE = passes ]; then
  RUNS=${RUNS:-5} ROUNDS=${ROUNDS:-1}
else
  RUNS=${RUNS:-20} ROUNDS=${ROUNDS:-3}
fi
CC=${CC:-gcc}
export CC
[ -x "$KILN" ] || { echo "no kiln in $B: build it first" >&2; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# name|input shape|label, in the order of the table
ALL="lenet5|1,1,28,28|LeNet-5
mlp|1,784|MLP 784-512-256-10
squeezenet|1,3,224,224|SqueezeNet 1.1
mobilenetv2|1,3,224,224|MobileNetV2
efficientnet|1,3,224,224|EfficientNet-B0
bert|1,128,256|BERT-style encoder 4x256 seq 128
resnet18|1,3,224,224|ResNet-18
resnet50|1,3,224,224|ResNet-50"
if [ $# -ge 1 ]; then
  want=" $* "
elif [ $MODE = passes ]; then
  want=" resnet18 mobilenetv2 bert "
else
  want=" $(echo "$ALL" | cut -d'|' -f1 | tr '\n' ' ') "
fi
MODELS=""
for n in $want; do
  echo "$ALL" | grep -q "^$n|" || { echo "unknown model '$n'" >&2; usage; }
  MODELS="$MODELS $n"
done
missing=""
for n in $MODELS; do [ -f "$M/$n.onnx" ] || missing="$missing $n"; done
# shellcheck disable=SC2086
[ -z "$missing" ] || /usr/bin/python3 "$SRC/bench/make_models.py" "$M" $missing >&2

shape() { echo "$ALL" | grep "^$1|" | cut -d'|' -f2; }
label() { echo "$ALL" | grep "^$1|" | cut -d'|' -f3; }
# field KEY: the number KEY in the one-line JSON object on stdin
field() { sed -n "s/.*\"$1\": \([0-9.eE+-]*\).*/\1/p"; }
# median FILE: the median of the numbers in FILE, one a line ("" when none)
median() {
  [ -s "$1" ] || { echo ""; return; }
  sort -g "$1" | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2];
                                           else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# ratio A B: A / B with two decimals, "-" when either is missing
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print "-";
                                           else printf "%.2f\n", a / b }'; }
fmt() { awk -v v="$1" 'BEGIN { if (v == "") print "-"; else if (v < 1) printf "%.3f\n", v;
                               else if (v < 100) printf "%.2f\n", v; else printf "%.1f\n", v }'; }

echo "kiln benchmarks on $(uname -n): $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')" \
  "(family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2 | tr -d ' ')," \
  "model $(grep -m1 '^model[[:space:]]*:' /proc/cpuinfo | cut -d: -f2 | tr -d ' ')), $(nproc) cores"
echo "flags: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' |
  grep -E '^(fma|avx2|avx512f|avx512_vnni|avx_vnni|avx512_bf16|avx512_fp16|amx_tile)$' | tr '\n' ' ')"
echo "load average at the start $(cut -d' ' -f1-3 /proc/loadavg); $(date -u '+%Y-%m-%d %H:%M UTC');" \
  "kiln $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "(a shared machine: absolute timings are noisy; compare the ratios of this one run)"
echo

# ---- peak
if $CC -O2 -march=native -pthread "$SRC/bench/peak.c" -o "$T/peak" 2>"$T/peak.log"; then
  "$T/peak" 1 "$THREADS" >"$T/peak.out"
  cat "$T/peak.out"
  PEAK1=$(sed -n 's/^peak 1 thread: \([0-9.]*\).*/\1/p' "$T/peak.out")
else
  echo "peak: $CC cannot build bench/peak.c: $(head -1 "$T/peak.log")"
  PEAK1=""
fi
echo

# ---- ONNX Runtime
ORT=""
if [ $MODE = table ] && [ -z "${NO_ORT:-}" ]; then
  if [ -n "${ORT_NODE:-}" ] && [ -d "$ORT_NODE" ]; then
    ORT=$ORT_NODE
  elif command -v npm >/dev/null && command -v node >/dev/null; then
    ORT=$B/bench-ort/node_modules/onnxruntime-node
    if [ ! -d "$ORT" ]; then
      mkdir -p "$B/bench-ort" # the CPU library is in the package; its install script only fetches CUDA's
      npm install --prefix "$B/bench-ort" --no-audit --no-fund --silent --ignore-scripts \
        "onnxruntime-node@${ORT_VERSION:-1.30.0}" >"$T/npm.log" 2>&1 ||
        { echo "ONNX Runtime skipped: npm install onnxruntime-node failed:"; tail -3 "$T/npm.log"; ORT=""; }
    fi
  else
    echo "ONNX Runtime skipped: no npm/node"
  fi
fi
cat >"$T/ort.js" <<'EOF'
// One session on `threads` intra-op threads, random input of the given shape;
// prints "median_ms min_ms version".
const ort = require(process.env.ORT);
(async () => {
  const [model, runs, threads, shape] = [process.argv[2], +process.argv[3], +process.argv[4],
                                         process.argv[5].split(',').map(Number)];
  const s = await ort.InferenceSession.create(model, { intraOpNumThreads: threads,
                                                       interOpNumThreads: 1,
                                                       executionMode: 'sequential' });
  const x = new Float32Array(shape.reduce((a, b) => a * b)).map(() => Math.random() * 2 - 1);
  const feeds = { [s.inputNames[0]]: new ort.Tensor('float32', x, shape) };
  for (let i = 0; i < 3; i++) await s.run(feeds);
  const t = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    await s.run(feeds);
    t.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  t.sort((a, b) => a - b);
  const med = runs % 2 ? t[runs >> 1] : (t[runs / 2 - 1] + t[runs / 2]) / 2;
  console.log(med.toFixed(4), t[0].toFixed(4), ort.env.versions ? ort.env.versions.common : '?');
})().catch(e => { console.error(String(e)); process.exit(1); });
EOF

# kiln_ms FILE_PREFIX MODEL BACKEND THREADS [ARGS...]: one kiln bench, its median
# appended to PREFIX.ms, the whole JSON to PREFIX.json; a failure to PREFIX.err
# (sh has no local variables: the helpers' own start with _)
kiln_ms() {
  _p=$1 _m=$2 _be=$3 _th=$4
  shift 4
  if _out=$("$KILN" bench "$M/$_m.onnx" --backend "$_be" --threads "$_th" --runs "$RUNS" \
    --warmup 3 --json "$@" 2>"$_p.log"); then
    echo "$_out" | field median_ms >>"$_p.ms"
    echo "$_out" >>"$_p.json"
  else
    tail -1 "$_p.log" >"$_p.err"
  fi
}
ort_ms() {
  _p=$1 _m=$2 _th=$3
  if ORT=$ORT node "$T/ort.js" "$M/$_m.onnx" "$RUNS" "$_th" "$(shape "$_m")" >"$_p.out" \
    2>"$_p.log"; then
    cut -d' ' -f1 "$_p.out" >>"$_p.ms"
    cut -d' ' -f3 "$_p.out" >"$_p.version"
  else
    tail -1 "$_p.log" >"$_p.err"
  fi
}

if [ $MODE = table ]; then
  for r in $(seq "$ROUNDS"); do
    for m in $MODELS; do
      echo "round $r/$ROUNDS: $m" >&2
      kiln_ms "$T/$m.jit1" "$m" llvm 1
      kiln_ms "$T/$m.jit2" "$m" llvm "$THREADS"
      if [ -n "$ORT" ]; then
        ort_ms "$T/$m.ort1" "$m" 1
        ort_ms "$T/$m.ort2" "$m" "$THREADS"
      fi
      # the C backend is built by gcc each time: one round ($CC -O2 after bench's
      # -O3 -march=native: -O2 -march=native)
      if [ "$r" = 1 ] && [ -z "${NO_C:-}" ]; then
        KILN_CFLAGS="-O2 ${KILN_CFLAGS:-}" kiln_ms "$T/$m.c1" "$m" c 1
      fi
    done
  done
  [ -z "$ORT" ] || echo "ONNX Runtime: onnxruntime-node $(cat "$T"/*.ort1.version 2>/dev/null | head -1), CPU provider"
  echo "kiln: LLVM JIT (llvm) and generated C ($CC -O2 -march=native, 1 thread); $THREADS-thread columns: T$THREADS"
  echo "latency: median ms of $ROUNDS rounds x $RUNS runs (C: 1 round); kiln/ORT below 1: kiln is faster"
  echo
  printf '%-34s %7s %9s %9s %9s %9s %9s %8s %8s %6s %6s %8s %6s\n' model GFLOP "JIT 1T" "JIT T$THREADS" \
    "C 1T" "ORT 1T" "ORT T$THREADS" "k/ORT 1" "k/ORT $THREADS" "C/JIT" "JIT x" "GFLOP/s" "%peak"
  for m in $MODELS; do
    j1=$(median "$T/$m.jit1.ms") j2=$(median "$T/$m.jit2.ms") c1=""
    [ -f "$T/$m.c1.ms" ] && c1=$(median "$T/$m.c1.ms")
    o1="" o2=""
    [ -f "$T/$m.ort1.ms" ] && o1=$(median "$T/$m.ort1.ms")
    [ -f "$T/$m.ort2.ms" ] && o2=$(median "$T/$m.ort2.ms")
    fl=$(head -1 "$T/$m.jit1.json" 2>/dev/null | field flops)
    gf=$(awk -v f="$fl" -v t="$j1" 'BEGIN { if (f == "" || t == "") print ""; else printf "%.1f\n", f / (t * 1e6) }')
    pk=$(awk -v g="$gf" -v p="$PEAK1" 'BEGIN { if (g == "" || p == "") print "-"; else printf "%.0f%%\n", 100 * g / p }')
    printf '%-34s %7s %9s %9s %9s %9s %9s %8s %8s %6s %6s %8s %6s\n' "$(label "$m")" \
      "$(awk -v f="$fl" 'BEGIN { if (f == "") print "-"; else printf "%.3f\n", f * 1e-9 }')" \
      "$(fmt "$j1")" "$(fmt "$j2")" "$(fmt "$c1")" "$(fmt "$o1")" "$(fmt "$o2")" \
      "$(ratio "$j1" "$o1")" "$(ratio "$j2" "$o2")" "$(ratio "$c1" "$j1")" "$(ratio "$j1" "$j2")" \
      "${gf:--}" "$pk"
  done
  for f in "$T"/*.err; do
    [ -f "$f" ] || continue
    echo "failed: $(basename "$f" .err): $(cat "$f")"
  done
  echo

  # ---- compile times (targets of #16: ResNet-18 JIT compile + first run <= 1.5 s,
  # ResNet-50 --emit obj <= 3 s, ResNet-18's C built in <= 30 s)
  case " $MODELS " in *" resnet18 "*)
    sed -n 's/.*"compile_ms": \([0-9.]*\).*"first_ms": \([0-9.]*\).*/\1 \2/p' "$T/resnet18.jit1.json" |
      awk '{ print $1 + $2 }' >"$T/r18c"
    med_compile=$(median "$T/r18c")
    echo "ResNet-18 JIT compile + first run: $(fmt "$med_compile") ms (median of $ROUNDS processes; target 1500)"
    [ -f "$T/resnet18.c1.json" ] &&
      echo "ResNet-18 C: emit + $CC -O2 build: $(fmt "$(field compile_ms <"$T/resnet18.c1.json")") ms (target 30000)"
  esac
  case " $MODELS " in *" resnet50 "*)
    t0=$(date +%s%N)
    if "$KILN" compile "$M/resnet50.onnx" --emit obj -o "$T/r50" >/dev/null 2>"$T/r50.log"; then
      echo "ResNet-50 kiln compile --emit obj: $(( ($(date +%s%N) - t0) / 1000000 )) ms (target 3000)"
    else
      echo "ResNet-50 kiln compile --emit obj failed: $(tail -1 "$T/r50.log")"
    fi
  esac
  exit 0
fi

# ---- --passes-effect
PIPE=$("$KILN" inspect --list-passes | sed -n 's/^default pipeline[^:]*: //p')
[ -n "$PIPE" ] || { echo "kiln inspect --list-passes prints no default pipeline" >&2; exit 1; }
PASSES=$(echo "$PIPE" | tr ',' '\n' | awk '!seen[$0]++' | tr '\n' ' ')
echo "default pipeline: $PIPE"
echo "each row leaves every occurrence of one pass out of it; ms: median of $ROUNDS x $RUNS runs;"
echo "(xN.NN): time without the pass / time with the full pipeline (above 1: the pass helps)"
echo
# without PASS: the default pipeline without PASS
without() { echo "$PIPE" | tr ',' '\n' | grep -vx "$1" | paste -sd, -; }
for r in $(seq "$ROUNDS"); do
  for m in $MODELS; do
    echo "round $r/$ROUNDS: $m" >&2
    for th in 1 "$THREADS"; do
      kiln_ms "$T/$m.full.$th" "$m" llvm "$th"
      for p in $PASSES; do
        # a pipeline kiln refuses (a pass another needs) is tried once
        [ -f "$T/$m.$p.$th.err" ] && continue
        kiln_ms "$T/$m.$p.$th" "$m" llvm "$th" --passes "$(without "$p")"
      done
    done
  done
done
hdr=$(printf '%-10s' "pass off")
for m in $MODELS; do hdr="$hdr$(printf ' %21s %21s' "$m 1T" "$m T$THREADS")"; done
echo "$hdr"
cell() { # cell PREFIX FULL_MS
  if [ -f "$1.err" ] && [ ! -s "$1.ms" ]; then
    if grep -q "needs\|already turned\|does not end in a planned" "$1.err"; then echo "required"; else echo "fails"; fi
  else
    v=$(median "$1.ms")
    echo "$(fmt "$v") (x$(ratio "$v" "$2"))"
  fi
}
line=$(printf '%-10s' "(none)")
for m in $MODELS; do
  line="$line$(printf ' %21s %21s' "$(fmt "$(median "$T/$m.full.1.ms")")" "$(fmt "$(median "$T/$m.full.$THREADS.ms")")")"
done
echo "$line"
for p in $PASSES; do
  line=$(printf '%-10s' "$p")
  for m in $MODELS; do
    for th in 1 "$THREADS"; do
      line="$line$(printf ' %21s' "$(cell "$T/$m.$p.$th" "$(median "$T/$m.full.$th.ms")")")"
    done
  done
  echo "$line"
done
for f in "$T"/*.err; do
  [ -f "$f" ] || continue
  grep -q "needs\|already turned\|does not end in a planned" "$f" && continue
  echo "failed: $(basename "$f" .err): $(cat "$f")"
done
