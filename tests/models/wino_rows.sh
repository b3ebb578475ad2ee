#!/bin/sh
# tests/models/wino_rows (two 32-channel 3x3 convolutions at 32x32, make_wino_rows.py):
# Winograd F(4x4) over 64 tiles; the products (147 KB of transformed weights, more than
# the many-chunk split takes and less than 1 MB) are split by halves of the tiles, as the
# transforms around them split by tile rows, so that at 2 threads the two kernels read
# under 300 KB a run that the other thread wrote (passes/xcore.c; split by the 36
# transform positions they read 603 KB); and the output matches torch on two threads.
# usage: wino_rows.sh KILN SOURCE_DIR
KILN=$1
S=$2
D=$S/tests/models/wino_rows
. "$2/tests/lib.sh"

KILN_XCORE=2 "$KILN" compile "$D/model.onnx" --target x86-64-avx512 -o "$T/c" --dump-schedule "$T/s.txt" >/dev/null ||
  bad "compile"
grep -q "^kernel 1 'conv1' Conv .*wino=4" "$T/s.txt" && ok || bad "conv1 not Winograd F(4x4): $(cat "$T/s.txt")"
read=$(sed -n "s/^# cross-core bytes at 2 threads.*: read \([0-9]*\) write.*/\1/p" "$T/s.txt")
[ -n "$read" ] && [ "$read" -lt 300000 ] && ok || bad "the products read $read bytes across: $(cat "$T/s.txt")"
KILN_TEST_THREADS=2 "$KILN" check-onnx "$D" --backend llvm >"$T/check.txt" 2>&1 && ok ||
  bad "check-onnx at 2 threads: $(cat "$T/check.txt")"
finish
