#!/bin/sh
# tests/models/dw_rows_outer (MobileNetV2's 14x14 block, make_dw_rows_outer.py): in a
# program for 2 threads the depthwise kernel runs its two bands of 7 rows row by row, every
# channel block of a row before the next row (passes/depthwise.c dwc_rows_outer); in one
# for 1 thread each channel block over the band's rows, as before. The output is bit for
# bit the same at 1 and 2 threads (each output's taps in the same order) and matches torch.
# usage: dw_rows_outer.sh KILN SOURCE_DIR
KILN=$1
S=$2
D=$S/tests/models/dw_rows_outer
. "$2/tests/lib.sh"

for n in 1 2; do
  "$KILN" compile "$D/model.onnx" --target x86-64-avx512 --threads $n -o "$T/c$n" \
    --dump-after parallel >"$T/ir$n.txt" || bad "compile at $n threads"
done
# the band loop of 2, then (2 threads) the rows of a band, or (1 thread) the 6 channel blocks
grep -A3 "^kernel 1: node 'dw'" "$T/ir2.txt" | tr '\n' ' ' |
  grep -q "for v[0-9]* in \[0, 2) parallel: *for v[0-9]* in \[0, 7) parallel: *for v[0-9]* in \[0, 6)" &&
  ok || bad "2 threads: not row by row: $(grep -A3 "^kernel 1:" "$T/ir2.txt")"
grep -A2 "^kernel 1: node 'dw'" "$T/ir1.txt" | tr '\n' ' ' |
  grep -q "for v[0-9]* in \[0, 2) parallel: *for v[0-9]* in \[0, 6) parallel:" &&
  ok || bad "1 thread: not by channel blocks: $(grep -A2 "^kernel 1:" "$T/ir1.txt")"
# one thread (channel blocks outside) and two (rows outside): the same bits
same_bits_1_2 "$D/model.onnx" dw_rows_outer
check_jit_c "$D" dw_rows_outer
finish
