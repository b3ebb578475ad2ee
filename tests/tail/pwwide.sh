#!/bin/sh
# The tiles pw_wide gives 1x1 convolutions in place of kt_widen's (passes/tile.c):
# - tests/tail/pwwide (61 -> 50 channels on 29 x 31 pixels, bias, a residual Add and
#   Relu): 4 x 6 (tile_rows=4 tile_vecs=6) where the pixel blocks run outermost with at
#   most 64 input channels;
# - tests/tail/pwwide49 (800 -> 40 channels at stride 2, 7 x 7 = 49 output pixels): 6 x 4
#   over the 49 pixels where kt_widen takes 8 x 3;
# - tests/tail/pwwide169 (64 -> 520 channels on 13 x 13 pixels): 6 x 4 where kt_widen
#   keeps 8 x 2, at 512 output channels or more.
# x86-64-avx512 takes each tile, x86-64-avx2 (16 registers) and cortex-m4 do not, nor a
# schedule file that sets the tile (kt_widen's there); outputs match numpy's (check-onnx)
# through the JIT and the C at 1 and 2 threads, with and without that schedule file.
# usage: pwwide.sh KILN SOURCE_DIR
KILN=$1
. "$2/tests/lib.sh"
for c in "pwwide:tile_rows=4 tile_vecs=6:tile_rows=6 tile_vecs=4" \
  "pwwide49:tile_rows=6 tile_vecs=4:tile_rows=8 tile_vecs=3" \
  "pwwide169:tile_rows=6 tile_vecs=4:tile_rows=8 tile_vecs=2"; do
  name=${c%%:*} rest=${c#*:}
  new=${rest%%:*} old=${rest#*:}
  D=$2/tests/tail/$name
  sched() { # sched TARGET [--schedule FILE]: the Conv's schedule line
    schedule_of "$D/model.onnx" "$T/s" --target "$@"
    grep "Conv" "$T/s"
  }
  sched x86-64-avx512 | grep -q "$new " && ok || bad "$name: x86-64-avx512: $(cat "$T/s")"
  sched x86-64-avx2 | grep -q "$new " && bad "$name: x86-64-avx2: $(cat "$T/s")" || ok
  sched cortex-m4 | grep -q "$new " && bad "$name: cortex-m4: $(cat "$T/s")" || ok
  echo "kernel 0 'pw' Conv $old" >"$T/old.sched"
  sched x86-64-avx512 --schedule "$T/old.sched" | grep -q "$old " && ok ||
    bad "$name: schedule $old: $(cat "$T/s")"
  check_jit_c "$D" "$name"
  check_jit_c "$D" "$name, $old" --schedule "$T/old.sched"
done
finish
