#!/bin/sh
# kiln tune --target T for another target this machine runs (docs/tuning.md, "Another
# target"): the passes tile for T and the JIT builds for T's CPU and features, so an
# AVX-512 host tunes for x86-64-avx2; the file names T, its records are T's (8 lanes), and
# read back for T (KILN_TEST_TARGET: T's tiles, run here) it passes torch's outputs and
# compiles to the same C twice. A target this machine cannot run is a usage error naming
# why. Nothing here is about speed (--budget 1: the first rounds are enough).
# usage: tune_target.sh KILN SOURCE_DIR
KILN=$1
S=$2
W=$S/tests/winograd
. "$2/tests/lib.sh"

if grep -q avx2 /proc/cpuinfo 2>/dev/null; then
  "$KILN" tune "$W/model.onnx" --target x86-64-avx2 --runs 1 --budget 1 -o "$T/a.sched" >"$T/out.txt" 2>&1 &&
    grep -q "^wrote $T/a.sched$" "$T/out.txt" && ok || bad "tune --target x86-64-avx2: $(cat "$T/out.txt")"
  grep -q "^# kiln schedule of 'model' for target x86-64-avx2:" "$T/a.sched" && ok ||
    bad "not the target's file: $(cat "$T/a.sched")"
  [ "$(grep -cE '^kernel .* lanes=8( |$)' "$T/a.sched")" = 9 ] && ok || bad "not AVX2's tiles: $(cat "$T/a.sched")"
  KILN_TEST_TARGET=x86-64-avx2 "$KILN" check-onnx "$W" --backend llvm --schedule "$T/a.sched" \
    >"$T/check.txt" 2>&1 && tail -1 "$T/check.txt" | grep -q "^1 passed, 0 failed" && ok ||
    bad "check-onnx --schedule for x86-64-avx2: $(cat "$T/check.txt")"
  for d in c1 c2; do
    "$KILN" compile "$W/model.onnx" --target x86-64-avx2 --emit c -o "$T/$d" --schedule "$T/a.sched" \
      >/dev/null || bad "compile --target x86-64-avx2 --schedule ($d)"
  done
  cmp -s "$T/c1/model.c" "$T/c2/model.c" && ok || bad "two compiles with one schedule differ"
else
  echo "skipped: no AVX2 here"
fi
# targets this machine cannot run: exit 2, the reason, no file
for t in aarch64 cortex-m4; do
  "$KILN" tune "$W/model.onnx" --target $t -o "$T/$t.sched" >/dev/null 2>"$T/err.txt"
  [ $? = 2 ] && grep -q "^kiln tune: --target $t: tune measures on this machine, which cannot run it: " \
    "$T/err.txt" && [ ! -e "$T/$t.sched" ] && ok || bad "--target $t: $(cat "$T/err.txt")"
done
finish
