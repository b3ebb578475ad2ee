#!/bin/sh
# tests/models/pw_odd_cols (an EfficientNet-B0 MBConv block at 14x14 projecting 96 -> 80
# channels, make_pw_odd_cols.py): on x86-64-zen4 (vectors on units of half their width)
# the projection's tiles hold one vector of output channels (80 = 5 vectors of 16), not two
# with a partial block of one (passes/tile.c pw_odd_cols), on x86-64-avx512 still two;
# each output is the same sum in the same order, so the output is bit for bit the
# two-vector tile's (a schedule file's tile_vecs=2), at 1 and 2 threads, and matches
# torch through the JIT and the C.
# usage: pw_odd_cols.sh KILN SOURCE_DIR
KILN=$1
S=$2
D=$S/tests/models/pw_odd_cols
. "$2/tests/lib.sh"

schedule_of "$D/model.onnx" "$T/s.txt" --target x86-64-zen4
grep -q "^kernel [0-9]* 'project' Conv tile_rows=8 tile_vecs=1 " "$T/s.txt" && ok ||
  bad "project not in tiles of one vector: $(grep project "$T/s.txt")"
sed "/'project'/s/tile_vecs=1/tile_vecs=2/" "$T/s.txt" >"$T/two.sched"
grep -q "'project'.*tile_vecs=2" "$T/two.sched" && ok || bad "no two-vector schedule"
schedule_of "$D/model.onnx" "$T/s2.txt" --target x86-64-zen4 --schedule "$T/two.sched"
grep -q "'project' Conv tile_rows=8 tile_vecs=2 " "$T/s2.txt" && ok ||
  bad "the schedule file's tile_vecs=2 not kept: $(grep project "$T/s2.txt")"
schedule_of "$D/model.onnx" "$T/s3.txt" --target x86-64-avx512
grep -q "'project' Conv tile_rows=[0-9]* tile_vecs=2 " "$T/s3.txt" && ok ||
  bad "project not two vectors on x86-64-avx512: $(grep project "$T/s3.txt")"
# the native JIT (a Zen 4 takes the one-vector tile as x86-64-zen4 does; on another CPU
# both runs may have the same tiles): the same bits as the two-vector tile's
same_bits_schedule "$D/model.onnx" "$T/two.sched" "one- and two-vector tiles"
same_bits_1_2 "$D/model.onnx" "pw_odd_cols"
check_jit_c "$D" pw_odd_cols
finish
