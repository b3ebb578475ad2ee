#!/bin/sh
# The shape of float matrix tiles on a 32-register AVX-512 target (passes/tile.c,
# kt_widen; tests/cli/make_mm_tiles.py): 6 rows x 4 vectors where the product has the
# columns and rows for it, 8 x 2 where 4 or 3 vectors would leave a wider partial block of
# columns or the rows are fewer than 4 tiles; a schedule file's tile still wins. On the
# machine running the test, the default tiles and 8 x 2 ones give the same bits (each
# output is the same sum in the same order, only the tiling differs).
# usage: mm_tiles.sh KILN SOURCE_DIR
KILN=$1
M=$2/tests/cli/mm_tiles.onnx
. "$2/tests/lib.sh"

"$KILN" compile "$M" --target x86-64-avx512 -o "$T/a" --dump-schedule "$T/s.txt" >/dev/null ||
  bad "compile --dump-schedule"
grep -q "^kernel 0 'wide' MatMul tile_rows=6 tile_vecs=4 lanes=16" "$T/s.txt" && ok ||
  bad "[48,64]x[64,256] not in 6 x 4: $(cat "$T/s.txt")"
grep -q "^kernel 1 'partial' MatMul tile_rows=8 tile_vecs=2 lanes=16" "$T/s.txt" && ok ||
  bad "[48,64]x[64,160] not in 8 x 2: $(cat "$T/s.txt")"
grep -q "^kernel 2 'few_rows' MatMul tile_rows=8 tile_vecs=2 lanes=16" "$T/s.txt" && ok ||
  bad "[16,64]x[64,256] not in 8 x 2: $(cat "$T/s.txt")"
# AVX2 (16 registers) keeps kt_choose's tiles
"$KILN" compile "$M" --target x86-64-avx2 -o "$T/b" --dump-schedule "$T/s2.txt" >/dev/null &&
  grep -q "^kernel 0 'wide' MatMul tile_rows=6 tile_vecs=2 lanes=8" "$T/s2.txt" && ok ||
  bad "AVX2 tile changed: $(cat "$T/s2.txt")"
# a schedule file's tile is used as it is
printf "kernel 0 'wide' MatMul tile_rows=8 tile_vecs=2\n" >"$T/f.txt"
"$KILN" compile "$M" --target x86-64-avx512 -o "$T/c" --schedule "$T/f.txt" \
  --dump-schedule "$T/s3.txt" >/dev/null &&
  grep -q "^kernel 0 'wide' MatMul tile_rows=8 tile_vecs=2" "$T/s3.txt" && ok ||
  bad "schedule file's tile not used: $(cat "$T/s3.txt")"
"$KILN" run "$M" --random 7 --output-dir "$T/o1" >/dev/null 2>&1 || bad "run (default tiles)"
"$KILN" run "$M" --random 7 --output-dir "$T/o2" --schedule "$T/f.txt" >/dev/null 2>&1 ||
  bad "run (8 x 2)"
for y in y1 y2 y3; do
  cmp -s "$T/o1/$y.npy" "$T/o2/$y.npy" && ok || bad "$y differs between 6 x 4 and 8 x 2 tiles"
done
finish
