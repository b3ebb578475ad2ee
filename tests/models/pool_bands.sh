#!/bin/sh
# tests/models/pool_bands (SqueezeNet's stem, make_pool_bands.py): the MaxPool between two
# convolutions split by rows is built in bands of its rows too (passes/pool.c
# pool_bands_kept: 29 rows in 6 bands of 5, the last guarded, one task a band, each band's
# rows sharing their kernel rows), so that at 2 threads it reads under 64 KB a
# run that the other thread wrote (passes/xcore.c; split by its 64 channels, about half of
# the stem's 891 KB output would cross); and it matches torch on two threads.
# usage: pool_bands.sh KILN SOURCE_DIR
KILN=$1
S=$2
D=$S/tests/models/pool_bands
. "$2/tests/lib.sh"

KILN_XCORE=2 "$KILN" compile "$D/model.onnx" --target x86-64-avx512 --threads 2 -o "$T/c" \
  --dump-schedule "$T/s.txt" >/dev/null ||
  bad "compile"
grep -q "^kernel 1 'pool' MaxPool .*tasks=6" "$T/s.txt" && ok || bad "pool not in 6 bands: $(cat "$T/s.txt")"
read=$(sed -n "s/^#   kernel 1 'pool' MaxPool in [0-9]*: read \([0-9]*\) write.*/\1/p" "$T/s.txt")
[ -n "$read" ] && [ "$read" -lt 65536 ] && ok || bad "pool reads $read bytes across: $(cat "$T/s.txt")"
KILN_TEST_THREADS=2 "$KILN" check-onnx "$D" --backend llvm >"$T/check.txt" 2>&1 && ok ||
  bad "check-onnx at 2 threads: $(cat "$T/check.txt")"
finish
