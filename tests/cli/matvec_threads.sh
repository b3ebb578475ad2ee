#!/bin/sh
# The float matrix-vector tiles of a program for several threads (passes/tile.c,
# mm_matvec_widen): a 1000-column product with B past the L2 keeps kt_choose's 2-vector
# tiles at 2 threads (8 columns past the last whole tile, left on the calling thread by
# the parallel split, against 40 past the 4-vector tiles it takes at 1 thread); 520
# columns (8 past either) keep the 4-vector tiles at 2 threads too; AVX2's 8 lanes keep
# theirs. Both tiles give the same bits at 1 and 2 threads (each output is the same sum
# in the same order), checked on the machine running the test.
# usage: matvec_threads.sh KILN SOURCE_DIR
KILN=$1
A=$2/tests/attn/models
. "$2/tests/lib.sh"

# gemm_of MODEL TARGET THREADS: the Gemm's schedule line
gemm_of() {
  "$KILN" compile "$1" --target "$2" --emit c --threads "$3" -o "$T/c" \
    --dump-schedule "$T/s.txt" >"$T/log" 2>&1 || bad "compile $*: $(cat "$T/log")"
  grep Gemm "$T/s.txt"
}
for tg in x86-64-avx512 x86-64-zen4; do
  gemm_of "$A/matvec_classes/model.onnx" $tg 2 | grep -q "tile_vecs=2 lanes=16 tasks=31" && ok ||
    bad "$tg, 1000 columns at 2 threads: not 31 tiles of 2 vectors: $(cat "$T/s.txt")"
  gemm_of "$A/matvec_classes/model.onnx" $tg 1 | grep -q "tile_vecs=4 lanes=16" && ok ||
    bad "$tg, 1000 columns at 1 thread: not 4 vectors: $(cat "$T/s.txt")"
  gemm_of "$A/matvec_wide/model.onnx" $tg 2 | grep -q "tile_vecs=4 lanes=16" && ok ||
    bad "$tg, 520 columns at 2 threads: not 4 vectors: $(cat "$T/s.txt")"
done
gemm_of "$A/matvec_classes/model.onnx" x86-64-avx2 2 | grep -q "tile_vecs=4 lanes=8" && ok ||
  bad "AVX2, 1000 columns at 2 threads: not 4 vectors of 8: $(cat "$T/s.txt")"
# the other tile gives the same bits, at 1 and 2 threads
for v in 2 4; do
  printf "kernel 0 '' Gemm tile_vecs=$v\n" >"$T/v$v.sched"
  same_bits_schedule "$A/matvec_classes/model.onnx" "$T/v$v.sched" "tile_vecs=$v"
done
finish
