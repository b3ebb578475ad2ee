#!/bin/sh
# tests/models/strided_7x7 (the head of ResNet's layer4.0 narrowed, make_strided_7x7.py):
# on x86-64-zen4 (vectors on units of half their width) the 3x3 stride-2 convolution to
# 7x7 reads its padding in the kernel (pad=1, passes/tile.c conv_pad_inplace_suits) and
# the 1x1 stride-2 one to 800 channels runs in tiles of 3 vectors by 7 pixels, its last
# block of channels a partial one (pw_strided_row3); on x86-64-avx512 pad=2 and 2 vectors.
# Each output is the same sum in the same order, so the outputs are bit for bit those of
# a schedule file's pad=2 and tile_vecs=2, at 1 and 2 threads, and match torch through
# the JIT and the C.
# usage: strided_7x7.sh KILN SOURCE_DIR
KILN=$1
S=$2
D=$S/tests/models/strided_7x7
. "$2/tests/lib.sh"

schedule_of "$D/model.onnx" "$T/s.txt" --target x86-64-zen4
grep -q "^kernel [0-9]* 'conv' Conv tile_rows=7 tile_vecs=2 .* pad=1" "$T/s.txt" && ok ||
  bad "conv not pad=1 on x86-64-zen4: $(grep conv "$T/s.txt")"
grep -q "^kernel [0-9]* 'down' Conv tile_rows=7 tile_vecs=3 " "$T/s.txt" && ok ||
  bad "down not in 7 x 3 tiles on x86-64-zen4: $(grep down "$T/s.txt")"
schedule_of "$D/model.onnx" "$T/s3.txt" --target x86-64-avx512
grep -q "'conv' Conv .* pad=2" "$T/s3.txt" && ok ||
  bad "conv not pad=2 on x86-64-avx512: $(grep conv "$T/s3.txt")"
grep -q "'down' Conv tile_rows=7 tile_vecs=2 " "$T/s3.txt" && ok ||
  bad "down not two vectors on x86-64-avx512: $(grep down "$T/s3.txt")"
sed -e "/'down'/s/tile_vecs=3/tile_vecs=2/" -e "/'conv'/s/pad=1/pad=2/" "$T/s.txt" >"$T/old.sched"
schedule_of "$D/model.onnx" "$T/s2.txt" --target x86-64-zen4 --schedule "$T/old.sched"
grep -q "'down' Conv tile_rows=7 tile_vecs=2 " "$T/s2.txt" && grep -q "'conv' .* pad=2" "$T/s2.txt" &&
  ok || bad "the schedule file's tile_vecs=2 and pad=2 not kept: $(cat "$T/s2.txt")"
# the native JIT (a Zen 4 takes the x86-64-zen4 choices; on another CPU both runs may
# have the same schedule): the same bits as pad=2 and two vectors
same_bits_schedule "$D/model.onnx" "$T/old.sched" "the new and old schedules"
same_bits_1_2 "$D/model.onnx" "strided_7x7"
check_jit_c "$D" strided_7x7
finish
