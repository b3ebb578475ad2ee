#!/bin/sh
# The generated C against the LLVM JIT, per model, in one run (issue #16 item 5: C at
# gcc -O2 within 1.5x of the JIT). For each model: the JIT's median, the C backend's
# median built with $CC (default gcc) at -O2 for the host (-march=native, the same
# target as the JIT) with GCC/Clang vector extensions, the same C with the portable
# C99 loops (-DKN_NO_VECTOR_EXT), the ratios C/JIT, and the C build time (emit + cc).
# Timings move with the machine's load: compare the ratios of one run.
#
# usage: bench/c_speed.sh BUILD_DIR [MODEL.onnx ...]
#   default models: BUILD_DIR/bench-models/{resnet18,mobilenet_v2}.onnx (made by
#   bench/make_models.py when missing)
# env: RUNS (default 10), CC (default gcc), OPT (default -O2), NO_FALLBACK=1 skips the
#      C99-loop build
set -eu
[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR [MODEL.onnx ...]" >&2; exit 2; }
B=$(cd "$1" && pwd)
shift
SRC=$(cd "$(dirname "$0")/.." && pwd)
KILN=$B/kiln
RUNS=${RUNS:-10}
OPT=${OPT:--O2}
export CC=${CC:-gcc}
[ -x "$KILN" ] || { echo "no kiln in $B: build it first" >&2; exit 1; }
if [ $# -eq 0 ]; then
  M=$B/bench-models
  [ -f "$M/resnet18.onnx" ] && [ -f "$M/mobilenet_v2.onnx" ] ||
    /usr/bin/python3 "$SRC/bench/make_models.py" "$M" resnet18 mobilenet_v2
  set -- "$M/resnet18.onnx" "$M/mobilenet_v2.onnx"
fi
field() { sed -n "s/.*\"$1\": \([0-9.eE+-]*\).*/\1/p"; }
echo "C backend ($CC $OPT -march=native) against the LLVM JIT, $RUNS runs, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-16s %9s %9s %9s %7s %7s %9s\n' model "JIT ms" "C ms" "C99 ms" "C/JIT" "C99/JIT" "C build s"
for m in "$@"; do
  J=$("$KILN" bench "$m" --backend llvm --runs "$RUNS" --warmup 2 --json)
  C=$(KILN_CFLAGS="$OPT" "$KILN" bench "$m" --backend c --runs "$RUNS" --warmup 2 --json)
  F=""
  [ -n "${NO_FALLBACK:-}" ] ||
    F=$(KILN_CFLAGS="$OPT -DKN_NO_VECTOR_EXT" "$KILN" bench "$m" --backend c --runs "$RUNS" --warmup 2 --json)
  j=$(echo "$J" | field median_ms)
  c=$(echo "$C" | field median_ms)
  f=$([ -n "$F" ] && echo "$F" | field median_ms || echo 0)
  cb=$(echo "$C" | field compile_ms)
  echo "$(basename "$m" .onnx) $j $c $f $cb" |
    awk '{ printf "%-16s %9.2f %9.2f %9.2f %7.2f %7.2f %9.1f\n", $1, $2, $3, $4, $3 / $2, $4 / $2, $5 / 1000 }'
done
