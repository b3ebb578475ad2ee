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
# threads, or PE_THREADS), each beside the default pipeline measured again next to it
# (the ratio is the median of the pairs' ratios); a pass the pipeline cannot do without is
# reported as such.
#
# Each latency is the median of ROUNDS medians, each over RUNS timed runs after warm-up.
# kiln's JIT and ONNX Runtime are measured together, run by run: one node process holds
# the ORT session and drives `kiln bench --paced` through a pipe, alternating CHUNK timed
# runs of each (after one untimed run, and which goes first alternating too), so the
# VM's state (another process on a vCPU, the two vCPUs sharing a cache or not), which
# changes within minutes, falls on both alike; kiln/ORT is the median over the rounds of
# the ratio of a round's two medians. On a shared machine absolute times are noisy:
# compare the ratios of one run. Benchmarks are not CTest tests.
#
# usage: bench/run.sh BUILD_DIR [--passes-effect] [MODEL...]
#        (BUILD_DIR holds a built kiln, a Release or RelWithDebInfo build; MODEL names
#        from bench/make_models.py, default all)
# env:   RUNS (timed runs per measurement, default 20; 5 with --passes-effect),
#        CHUNK (timed runs of kiln, then of ORT, per turn of the interleaving, default 2),
#        ORT_SETTLE_MS (pause after ORT's turn, default 50: its threads spin ~30 ms),
#        ROUNDS (default 3; 1 with --passes-effect), THREADS (default 2),
#        PE_THREADS (thread counts of --passes-effect, default "1 THREADS"),
#        PE_CPU=1 (--passes-effect: compare the CPU time of every thread per run instead
#        of latency; steadier on a loaded machine, where a run waits for a vCPU),
#        NO_ORT=1 skips ONNX Runtime, NO_C=1 skips the C backend, CC (default gcc),
#        ORT_NODE (an installed onnxruntime-node folder to use instead of installing
#        onnxruntime-node@ORT_VERSION, default 1.30.0, into BUILD_DIR/bench-ort),
#        RESULTS=DIR (keep the raw measurements in DIR), REPORT_ONLY=1 (with RESULTS:
#        print the tables from DIR without measuring, e.g. after an interrupted run)
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
CHUNK=${CHUNK:-2}
export CC CHUNK
[ -x "$KILN" ] || { echo "no kiln in $B: build it first" >&2; exit 1; }
# RESULTS=DIR keeps the measurements there; REPORT_ONLY=1 prints the tables from such a
# folder without measuring (the rest of an interrupted run)
if [ -n "${RESULTS:-}" ]; then
  T=$RESULTS
  mkdir -p "$T"
else
  [ -z "${REPORT_ONLY:-}" ] || { echo "REPORT_ONLY needs RESULTS=DIR" >&2; exit 2; }
  T=$(mktemp -d)
  trap 'rm -rf "$T"' EXIT
fi

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
if [ -n "${REPORT_ONLY:-}" ] && [ -f "$T/peak.out" ]; then
  cat "$T/peak.out"
  PEAK1=$(sed -n 's/^peak 1 thread: \([0-9.]*\).*/\1/p' "$T/peak.out")
elif $CC -O2 -march=native -pthread "$SRC/bench/peak.c" -o "$T/peak" 2>"$T/peak.log"; then
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

# One ORT session and one `kiln bench --paced` (argv after the shape) interleaved: turns
# of one untimed and CHUNK timed runs each, kiln first on even turns; each side's
# spinning threads settle before the other starts (1 ms after kiln's runs, ORT_SETTLE_MS,
# default 50, after ORT's: its pool keeps a core busy for about 30 ms after a run);
# prints "kiln_median ort_median ort_version" and the kiln JSON summary on a second line
# (bench/ort_pair.js).

# pair_ms FILE_PREFIX MODEL THREADS: kiln's JIT and ORT interleaved (bench/ort_pair.js); the
# medians appended to PREFIX.jitTHREADS.ms and PREFIX.ortTHREADS.ms, their ratio to
# PREFIX.rTHREADS, kiln's JSON to PREFIX.jitTHREADS.json; a failure to PREFIX.jitTHREADS.err
pair_ms() {
  _p=$1 _m=$2 _th=$3
  if ORT=$ORT node "$SRC/bench/ort_pair.js" "$M/$_m.onnx" "$RUNS" "$_th" "$(shape "$_m")" "$KILN" bench \
    "$M/$_m.onnx" --backend llvm --threads "$_th" --warmup 3 --paced --json >"$_p.pair$_th.out" \
    2>"$_p.pair$_th.log"; then
    _l=$(head -1 "$_p.pair$_th.out")
    echo "$_l" | cut -d' ' -f1 >>"$_p.jit$_th.ms"
    echo "$_l" | cut -d' ' -f2 >>"$_p.ort$_th.ms"
    echo "$_l" | cut -d' ' -f3 >"$_p.ort$_th.version"
    ratio "$(echo "$_l" | cut -d' ' -f1)" "$(echo "$_l" | cut -d' ' -f2)" >>"$_p.r$_th"
    sed -n 2p "$_p.pair$_th.out" >>"$_p.jit$_th.json"
  else
    tail -1 "$_p.pair$_th.log" >"$_p.jit$_th.err"
  fi
}

# kiln_ms FILE_PREFIX MODEL BACKEND THREADS [ARGS...]: one kiln bench, its median
# appended to PREFIX.ms, the whole JSON to PREFIX.json; a failure to PREFIX.err
# (sh has no local variables: the helpers' own start with _)
kiln_ms() {
  _p=$1 _m=$2 _be=$3 _th=$4
  shift 4
  if _out=$("$KILN" bench "$M/$_m.onnx" --backend "$_be" --threads "$_th" --runs "$RUNS" \
    --warmup 3 --json "$@" 2>"$_p.log"); then
    echo "$_out" | field median_ms >>"$_p.ms"
    echo "$_out" | field cpu_ms >>"$_p.cpu"
    echo "$_out" >>"$_p.json"
  else
    tail -1 "$_p.log" >"$_p.err"
  fi
}

if [ $MODE = table ]; then
  [ -z "${REPORT_ONLY:-}" ] || ROUNDS_RUN=0
  for r in $(seq "${ROUNDS_RUN:-$ROUNDS}"); do
    for m in $MODELS; do
      echo "round $r/$ROUNDS: $m" >&2
      if [ -n "$ORT" ]; then
        pair_ms "$T/$m" "$m" 1
        [ "$THREADS" = 1 ] || pair_ms "$T/$m" "$m" "$THREADS"
      else
        kiln_ms "$T/$m.jit1" "$m" llvm 1
        [ "$THREADS" = 1 ] || kiln_ms "$T/$m.jit$THREADS" "$m" llvm "$THREADS"
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
  echo "latency: median ms of $ROUNDS rounds x $RUNS runs (C: 1 round), kiln JIT and ORT interleaved by $CHUNK runs;"
  echo "kiln/ORT: median of the rounds' ratios, below 1: kiln is faster"
  echo "GFLOP/s: the JIT on 1 thread at its median; %peak: of the 1-thread peak above"
  echo
  printf '%-34s %7s %9s %9s %9s %9s %9s %8s %8s %6s %6s %8s %6s\n' model GFLOP "JIT 1T" "JIT T$THREADS" \
    "C 1T" "ORT 1T" "ORT T$THREADS" "k/ORT 1" "k/ORT $THREADS" "C/JIT" "JIT x" "GFLOP/s" "%peak"
  for m in $MODELS; do
    j1=$(median "$T/$m.jit1.ms") j2=$(median "$T/$m.jit$THREADS.ms") c1=""
    [ -f "$T/$m.c1.ms" ] && c1=$(median "$T/$m.c1.ms")
    o1="" o2="" r1="-" r2="-"
    [ -f "$T/$m.ort1.ms" ] && o1=$(median "$T/$m.ort1.ms")
    [ -f "$T/$m.ort$THREADS.ms" ] && o2=$(median "$T/$m.ort$THREADS.ms")
    # kiln/ORT: the median of the rounds' ratios (each of two interleaved medians)
    [ -s "$T/$m.r1" ] && r1=$(median "$T/$m.r1" | xargs printf '%.2f')
    [ -s "$T/$m.r$THREADS" ] && r2=$(median "$T/$m.r$THREADS" | xargs printf '%.2f')
    fl=$(head -1 "$T/$m.jit1.json" 2>/dev/null | field flops)
    gf=$(awk -v f="$fl" -v t="$j1" 'BEGIN { if (f == "" || t == "") print ""; else printf "%.1f\n", f / (t * 1e6) }')
    pk=$(awk -v g="$gf" -v p="$PEAK1" 'BEGIN { if (g == "" || p == "") print "-"; else printf "%.0f%%\n", 100 * g / p }')
    printf '%-34s %7s %9s %9s %9s %9s %9s %8s %8s %6s %6s %8s %6s\n' "$(label "$m")" \
      "$(awk -v f="$fl" 'BEGIN { if (f == "") print "-"; else printf "%.3f\n", f * 1e-9 }')" \
      "$(fmt "$j1")" "$(fmt "$j2")" "$(fmt "$c1")" "$(fmt "$o1")" "$(fmt "$o2")" \
      "$r1" "$r2" "$(ratio "$c1" "$j1")" "$(ratio "$j1" "$j2")" \
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
    [ -f "$T/resnet18.jit1.json" ] && sed -n 's/.*"compile_ms": \([0-9.]*\).*"first_ms": \([0-9.]*\).*/\1 \2/p' "$T/resnet18.jit1.json" |
      awk '{ print $1 + $2 }' >"$T/r18c"
    med_compile=$(median "$T/r18c")
    echo "ResNet-18 JIT compile + first run: $(fmt "$med_compile") ms (median of $ROUNDS processes; target 1500)"
    [ -f "$T/resnet18.c1.json" ] &&
      echo "ResNet-18 C: emit + $CC -O2 build: $(fmt "$(field compile_ms <"$T/resnet18.c1.json")") ms (target 30000)"
  esac
  case " $MODELS " in *" resnet50 "*)
    if [ -z "${REPORT_ONLY:-}" ]; then
      t0=$(date +%s%N)
      if "$KILN" compile "$M/resnet50.onnx" --emit obj -o "$T/r50" >/dev/null 2>"$T/r50.log"; then
        echo $((($(date +%s%N) - t0) / 1000000)) >"$T/r50obj.ms"
      else
        tail -1 "$T/r50.log" >"$T/r50obj.err"
      fi
      rm -rf "$T/r50"
    fi
    [ -f "$T/r50obj.ms" ] && echo "ResNet-50 kiln compile --emit obj: $(cat "$T/r50obj.ms") ms (target 3000)"
    [ -f "$T/r50obj.err" ] && echo "ResNet-50 kiln compile --emit obj failed: $(cat "$T/r50obj.err")"
  esac
  exit 0
fi

# ---- --passes-effect
PIPE=$("$KILN" inspect --list-passes | sed -n 's/^default pipeline[^:]*: //p')
[ -n "$PIPE" ] || { echo "kiln inspect --list-passes prints no default pipeline" >&2; exit 1; }
PASSES=$(echo "$PIPE" | tr ',' '\n' | awk '!seen[$0]++' | tr '\n' ' ')
echo "default pipeline: $PIPE"
# PE_CPU=1: the CPU time per run (kiln bench's cpu_ms) in place of the median latency
X=ms
[ -z "${PE_CPU:-}" ] || X=cpu
echo "each row leaves every occurrence of one pass out of it; ms: $([ $X = ms ] && echo "median" || echo "CPU time per run, median") of $ROUNDS x $RUNS runs;"
echo "(xN.NN): time without the pass / time with the full pipeline measured beside it, the"
echo "median over rounds of each pair's ratio (above 1: the pass helps)"
echo
PE_THREADS=${PE_THREADS:-1 $THREADS}
# without PASS: the default pipeline without PASS
without() { echo "$PIPE" | tr ',' '\n' | grep -vx "$1" | paste -sd, -; }
[ -z "${REPORT_ONLY:-}" ] || ROUNDS_RUN=0
for r in $(seq "${ROUNDS_RUN:-$ROUNDS}"); do
  for m in $MODELS; do
    echo "round $r/$ROUNDS: $m" >&2
    for th in $PE_THREADS; do
      kiln_ms "$T/$m.full.$th" "$m" llvm "$th"
      _n=0
      for p in $PASSES; do
        # a pipeline kiln refuses (a pass another needs) is tried once
        [ -f "$T/$m.$p.$th.err" ] && continue
        # beside the full pipeline, measured again next to it (which first alternating),
        # so that the machine's drift falls on both: the pair's ratio
        _n=$((_n + 1))
        [ $((_n % 2)) = 1 ] || kiln_ms "$T/$m.$p.$th.base" "$m" llvm "$th"
        kiln_ms "$T/$m.$p.$th" "$m" llvm "$th" --passes "$(without "$p")"
        [ -f "$T/$m.$p.$th.err" ] && continue
        [ $((_n % 2)) = 0 ] || kiln_ms "$T/$m.$p.$th.base" "$m" llvm "$th"
        for _x in ms cpu; do
          [ -s "$T/$m.$p.$th.$_x" ] && [ -s "$T/$m.$p.$th.base.$_x" ] || continue
          awk -v a="$(tail -1 "$T/$m.$p.$th.$_x")" -v b="$(tail -1 "$T/$m.$p.$th.base.$_x")" \
            'BEGIN { if (b + 0 > 0) printf "%.4f\n", a / b }' >>"$T/$m.$p.$th.r$_x"
        done
      done
    done
  done
done
hdr=$(printf '%-10s' "pass off")
for m in $MODELS; do for th in $PE_THREADS; do hdr="$hdr$(printf ' %21s' "$m ${th}T")"; done; done
echo "$hdr"
cell() { # cell PREFIX FULL_MS
  if [ -f "$1.err" ] && [ ! -s "$1.$X" ]; then
    if grep -q "needs\|already turned\|does not end in a planned" "$1.err"; then echo "required"; else echo "fails"; fi
  else
    v=$(median "$1.$X")
    if [ -s "$1.r$X" ]; then
      echo "$(fmt "$v") (x$(median "$1.r$X" | xargs printf '%.2f'))"
    else # results from before the pairs: against the full pipeline's own measurement
      echo "$(fmt "$v") (x$(ratio "$v" "$2"))"
    fi
  fi
}
line=$(printf '%-10s' "(none)")
for m in $MODELS; do
  for th in $PE_THREADS; do line="$line$(printf ' %21s' "$(fmt "$(median "$T/$m.full.$th.$X")")")"; done
done
echo "$line"
for p in $PASSES; do
  line=$(printf '%-10s' "$p")
  for m in $MODELS; do
    for th in $PE_THREADS; do
      line="$line$(printf ' %21s' "$(cell "$T/$m.$p.$th" "$(median "$T/$m.full.$th.$X")")")"
    done
  done
  echo "$line"
done
for f in "$T"/*.err; do
  [ -f "$f" ] || continue
  grep -q "needs\|already turned\|does not end in a planned" "$f" && continue
  echo "failed: $(basename "$f" .err): $(cat "$f")"
done
