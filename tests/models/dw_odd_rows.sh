#!/bin/sh
# tests/models/dw_odd_rows (MobileNetV2's 14x14 -> 7x7 block and a 7x7 block,
# make_dw_odd_rows.py): in a program for 2 threads the stride-2 depthwise kernel, whose 7
# output rows make no even bands, and the 7x7 one run in 7 bands of one row
# (passes/depthwise.c dwc_odd_rows_banded), so that each reads under 64 KB a run that the
# other thread wrote (passes/xcore.c; split by channel vectors, 226 KB and 82 KB crossed);
# the output is bit for bit the same at 1 and 2 threads (the same taps in the same order)
# and matches torch.
# usage: dw_odd_rows.sh KILN SOURCE_DIR
KILN=$1
S=$2
D=$S/tests/models/dw_odd_rows
. "$2/tests/lib.sh"

KILN_XCORE=2 "$KILN" compile "$D/model.onnx" --target x86-64-avx512 --threads 2 -o "$T/c" \
  --dump-schedule "$T/s.txt" --dump-after parallel >"$T/ir.txt" || bad "compile"
for k in "1 dw" "4 dw2"; do
  set -- $k
  grep -A1 "^kernel $1: node '$2'" "$T/ir.txt" | grep -q "for v[0-9]* in \[0, 7) parallel in 7 tasks" &&
    ok || bad "$2 not in 7 bands of a row: $(grep -A1 "^kernel $1:" "$T/ir.txt")"
  read=$(sed -n "s/^#   kernel $1 '$2' Conv in [0-9]*: read \([0-9]*\) write.*/\1/p" "$T/s.txt")
  [ -n "$read" ] && [ "$read" -lt 65536 ] && ok || bad "$2 reads $read bytes across: $(cat "$T/s.txt")"
done
# one thread (channel blocks) and two (rows): the same bits
same_bits_1_2 "$D/model.onnx" dw_odd_rows
check_jit_c "$D" dw_odd_rows
finish
