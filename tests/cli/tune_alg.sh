#!/bin/sh
# kiln tune tries the other algorithm of a float windowed convolution where the passes
# chose one (docs/tuning.md): the Winograd tiles for a 3x3 they computed directly, and
# span tiles against tiles of one output row; and the GotoBLAS order (mc) of a MatMul. The model is tests/convspan (outputs from
# torch in float64): on x86-64-avx512 (1 MB L2) its c4 (128 -> 136 at 7x7, U past the
# L2) is direct in span tiles, c1 (3x3 stride 2) in rows of 7. Kept through the test hook
# KILN_TUNE_FAVOUR (whatever the timing), each choice is written so that it reads back,
# the same C twice, and the reference outputs. Nothing here is about speed.
# usage: tune_alg.sh KILN SOURCE_DIR
KILN=$1
S=$2
M=$S/tests/convspan
TG="--target x86-64-avx512"
. "$2/tests/lib.sh"

# the GotoBLAS order's blocks of rows (mc, passes/tile.c mm_groups) on a float MatMul:
# tests/tail/mmgrp (45 x 37 -> 269, numpy's outputs) takes mc 22, rounded to 18 (3 tiles)
G=$S/tests/tail/mmgrp
KILN_TUNE_FAVOUR=mc "$KILN" tune "$G/model.onnx" --runs 2 --list -o "$T/g.sched" >"$T/g.txt" 2>&1 &&
  grep -q "^ *round [0-9]*: mc 0->22: " "$T/g.txt" && grep -q "^kernel 0 'mm' MatMul .*mc=18$" "$T/g.sched" &&
  ok || bad "mc not tried or not kept: $(cat "$T/g.txt" "$T/g.sched")"
KILN_TEST_THREADS=2 "$KILN" check-onnx "$G" --backend llvm --schedule "$T/g.sched" >"$T/checkg.txt" 2>&1 &&
  tail -1 "$T/checkg.txt" | grep -q "^1 passed, 0 failed" && ok || bad "check-onnx --schedule g.sched: $(cat "$T/checkg.txt")"

"$KILN" compile "$M/model.onnx" $TG --emit c -o "$T/d" --dump-schedule "$T/d.sched" \
  >/dev/null || bad "compile"
if ! grep -q "^kernel 3 'c4' Conv tile_rows=13 .*span=1$" "$T/d.sched"; then
  echo "skipped: this CPU does not run x86-64-avx512, or c4 is not direct in span tiles: $(cat "$T/d.sched")"
  finish
  exit 0
fi
ok
# tried and listed
"$KILN" tune "$M/model.onnx" $TG --runs 1 --threads 1 --list -o "$T/l.sched" >"$T/l.txt" 2>&1 || bad "tune --list: $(cat "$T/l.txt")"
for c in "wino 0->2" "wino 0->4" "span 1->2"; do
  awk '/^ *3 .c4. Conv/{on=1; next} /^ *[0-9]+ /{on=0} on' "$T/l.txt" |
    grep -q "^ *round [0-9]*: $c: [0-9.]* us, baseline [0-9.]* us$" && ok || bad "c4: $c not tried: $(cat "$T/l.txt")"
done
awk '/^ *0 .c1. Conv/{on=1; next} /^ *[0-9]+ /{on=0} on' "$T/l.txt" |
  grep -q "^ *round [0-9]*: span 0->1: " && ok || bad "c1: span 0->1 not tried: $(cat "$T/l.txt")"
awk '/^ *0 .c1. Conv/{on=1; next} /^ *[0-9]+ /{on=0} on' "$T/l.txt" | grep -q "wino" &&
  bad "c1 (stride 2) got a Winograd candidate" || ok
# kept, written, read back: Winograd for c4; span tiles for c1 and rows for c4
KILN_TUNE_FAVOUR=wino "$KILN" tune "$M/model.onnx" $TG --runs 2 -o "$T/w.sched" >"$T/w.txt" 2>&1 &&
  grep -q "^kernel 3 'c4' Conv .*wino=2" "$T/w.sched" && ok || bad "wino not kept: $(cat "$T/w.txt" "$T/w.sched")"
KILN_TUNE_FAVOUR=span "$KILN" tune "$M/model.onnx" $TG --runs 2 -o "$T/s.sched" >"$T/s.txt" 2>&1 &&
  grep -q "^kernel 3 'c4' Conv .*span=2$" "$T/s.sched" &&
  grep -q "^kernel 0 'c1' Conv .*span=1$" "$T/s.sched" && ok || bad "span not kept: $(cat "$T/s.txt" "$T/s.sched")"
for f in w s; do
  schedule_twice "$M/model.onnx" "$T/$f.sched" "$f" $TG
  cmp -s "$T/${f}1/model.c" "$T/d/model.c" && bad "$f.sched changed nothing" || ok
  KILN_TEST_TARGET=x86-64-avx512 "$KILN" check-onnx "$M" --backend llvm --schedule "$T/$f.sched" >"$T/check$f.txt" 2>&1 &&
    tail -1 "$T/check$f.txt" | grep -q "^1 passed, 0 failed" && ok ||
    bad "check-onnx --schedule $f.sched: $(cat "$T/check$f.txt")"
done
grep -q "^kernel 3 'c4' Conv .*wino=2" "$T/w1.sched" && ok || bad "wino=2 not applied: $(cat "$T/w1.sched")"
grep -q "^kernel 3 'c4' Conv tile_rows=7 " "$T/s1.sched" && ! grep -q "^kernel 3 .*span=1" "$T/s1.sched" &&
  grep -q "^kernel 0 'c1' Conv tile_rows=13 .*span=1$" "$T/s1.sched" && ok ||
  bad "span choices not applied: $(cat "$T/s1.sched")"
finish
