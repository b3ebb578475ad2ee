#!/bin/sh
# tests/models/dw_odd_rows_se (EfficientNet-B0's 14x14 -> 7x7 block with its squeeze and
# excite, make_dw_odd_rows_se.py): in a program for 2 threads the stride-2 depthwise
# kernel, which computes the squeeze's means, runs in 7 bands of one output row
# (passes/depthwise.c dwc_odd_rows_banded), so that it reads under 192 KB a run that the
# other thread wrote (passes/xcore.c; by channel blocks 263 KB); each tile's sum is kept
# and the sums added after the bands in the 1-thread order (dwc_pool_tiles), so the output
# and the means are bit for bit the same at 1 and 2 threads, and match torch.
# usage: dw_odd_rows_se.sh KILN SOURCE_DIR
KILN=$1
S=$2
D=$S/tests/models/dw_odd_rows_se
. "$2/tests/lib.sh"

KILN_XCORE=2 "$KILN" compile "$D/model.onnx" --target x86-64-avx512 --threads 2 -o "$T/c" \
  --dump-schedule "$T/s.txt" --dump-after parallel >"$T/ir.txt" || bad "compile"
grep -A1 "^kernel 1: node 'dw'" "$T/ir.txt" | grep -q "for v[0-9]* in \[0, 7) parallel in 7 tasks" &&
  ok || bad "dw not in 7 bands of a row: $(grep -A1 "^kernel 1:" "$T/ir.txt")"
grep -A1 "^kernel 2: node 'squeeze'" "$T/ir.txt" | grep -q "for" &&
  bad "the squeeze has a kernel of its own: $(grep -A1 "^kernel 2:" "$T/ir.txt")" || ok
read=$(sed -n "s/^#   kernel 1 'dw' Conv in [0-9]*: read \([0-9]*\) write.*/\1/p" "$T/s.txt")
[ -n "$read" ] && [ "$read" -lt 196608 ] && ok || bad "dw reads $read bytes across: $(cat "$T/s.txt")"
# one thread (channel blocks, a running sum) and two (rows, the tiles' sums): the same bits
same_bits_1_2 "$D/model.onnx" "dw_odd_rows_se (y and g)"
check_jit_c "$D" dw_odd_rows_se
finish
