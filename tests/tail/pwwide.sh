#!/bin/sh
# The 4 x 6 tile of pointwise convolutions of at most 64 input channels whose pixel blocks
# run outermost (passes/tile.c, pw_wide; tests/tail/pwwide, 61 -> 50 channels on 29 x 31
# pixels, bias, a residual Add and Relu): x86-64-avx512 takes it (tile_rows=4
# tile_vecs=6), x86-64-avx2 (16 registers) and cortex-m4 do not, nor a schedule file that
# sets the tile; its outputs match numpy's (check-onnx) through the JIT and the C at 1 and
# 2 threads, with and without a schedule file's 6 x 4 tile.
# usage: pwwide.sh KILN SOURCE_DIR
KILN=$1
. "$2/tests/lib.sh"
D=$2/tests/tail/pwwide
sched() { # sched TARGET [--schedule FILE]: the Conv's schedule line
  "$KILN" compile "$D/model.onnx" -o "$T/o" --target "$@" --dump-schedule "$T/s" >"$T/log" 2>&1 ||
    bad "compile $*: $(cat "$T/log")"
  grep "Conv" "$T/s"
}
sched x86-64-avx512 | grep -q "tile_rows=4 tile_vecs=6 " && ok ||
  bad "x86-64-avx512: no 4 x 6 tile: $(cat "$T/s")"
sched x86-64-avx2 | grep -q "tile_vecs=6" && bad "x86-64-avx2: $(cat "$T/s")" || ok
sched cortex-m4 | grep -q "tile_vecs=6" && bad "cortex-m4: $(cat "$T/s")" || ok
echo "kernel 0 'pw' Conv tile_rows=6 tile_vecs=4" >"$T/six.sched"
sched x86-64-avx512 --schedule "$T/six.sched" | grep -q "tile_rows=6 tile_vecs=4 " && ok ||
  bad "schedule 6 x 4: $(cat "$T/s")"
for b in llvm c; do
  for n in 1 2; do
    KILN_TEST_THREADS=$n "$KILN" check-onnx "$D" --backend $b >"$T/chk" 2>&1 && ok ||
      bad "$b at $n threads: $(cat "$T/chk")"
    KILN_TEST_THREADS=$n "$KILN" check-onnx "$D" --backend $b --schedule "$T/six.sched" \
      >"$T/chk" 2>&1 && ok || bad "$b at $n threads, 6 x 4: $(cat "$T/chk")"
  done
done
finish
