#!/bin/sh
# tests/models/half_rate (MobileNetV2's first two blocks, make_half_rate.py): on a target
# whose full-width multiply-add costs two half-width ones (kn_target.fp_datapath_bits: x86-64-zen4)
# the channels-last projection to 24 channels takes three vectors of 8 lanes (passes/tile.c
# pw_channels_last), on x86-64-avx512 (full-rate 512-bit vectors) two vectors of 16, as
# before; the NCHW projection to 16 channels keeps its 8 x 2 tiles on both; a schedule file's
# tile is kept. The outputs of both targets' tiles are bit for bit the same
# (the same sums in the same order) and match torch through the JIT and the C at 1 and 2
# threads.
# usage: half_rate.sh KILN SOURCE_DIR
KILN=$1
S=$2
D=$S/tests/models/half_rate
. "$2/tests/lib.sh"

schedule_of "$D/model.onnx" "$T/zen4" --target x86-64-zen4 --emit llvm
grep -q "'project16' Conv tile_rows=8 tile_vecs=2 lanes=16" "$T/zen4" && ok || bad "zen4: project16: $(cat "$T/zen4")"
grep -q "'project24' Conv tile_rows=8 tile_vecs=3 lanes=8" "$T/zen4" && ok || bad "zen4: project24: $(cat "$T/zen4")"
schedule_of "$D/model.onnx" "$T/avx512" --target x86-64-avx512 --emit llvm
grep -q "'project16' Conv tile_rows=8 tile_vecs=2 lanes=16" "$T/avx512" && ok || bad "avx512: project16: $(cat "$T/avx512")"
grep -q "'project24' Conv tile_rows=8 tile_vecs=2 lanes=16" "$T/avx512" && ok || bad "avx512: project24: $(cat "$T/avx512")"
# a schedule file's tile wins on x86-64-zen4
printf "kernel 1 'project16' Conv tile_rows=8 tile_vecs=3\nkernel 4 'project24' Conv tile_vecs=2 lanes=16\n" >"$T/keep.sched"
schedule_of "$D/model.onnx" "$T/kept" --target x86-64-zen4 --emit llvm --schedule "$T/keep.sched"
grep -q "'project16' Conv tile_rows=8 tile_vecs=3 lanes=16" "$T/kept" && ok || bad "schedule file: project16: $(cat "$T/kept")"
grep -q "'project24' Conv tile_rows=8 tile_vecs=2 lanes=16" "$T/kept" && ok || bad "schedule file: project24: $(cat "$T/kept")"
for t in x86-64-zen4 x86-64-avx512; do
  for n in 1 2; do
    KILN_TEST_TARGET=$t KILN_TEST_THREADS=$n "$KILN" run "$D/model.onnx" --backend llvm --random 7 \
      --output-dir "$T/$t$n" >"$T/log" 2>&1 || bad "run $t at $n threads: $(cat "$T/log")"
  done
done
diff -r "$T/x86-64-zen41" "$T/x86-64-avx5121" >/dev/null && diff -r "$T/x86-64-zen42" "$T/x86-64-avx5122" >/dev/null &&
  ok || bad "x86-64-zen4's outputs differ from x86-64-avx512's"
KILN_TEST_TARGET=x86-64-zen4 check_jit_c "$D" "half_rate on x86-64-zen4"
finish
