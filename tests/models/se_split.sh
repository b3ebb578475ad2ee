#!/bin/sh
# tests/models/se_split (an EfficientNet-B0 MBConv block, make_se_split.py): the
# squeeze-and-excite Mul reads the split depthwise output and 144 scales the calling
# thread computed; passes/parallel.c sources_split looks past so small an operand, so the
# Mul is split (on one thread it first read the other core's half of its input), and the
# block matches torch on two threads.
# usage: se_split.sh KILN SOURCE_DIR
KILN=$1
S=$2
D=$S/tests/models/se_split
. "$2/tests/lib.sh"

"$KILN" compile "$D/model.onnx" --target x86-64-avx512 -o "$T/c" --dump-schedule "$T/s.txt" >/dev/null ||
  bad "compile"
grep -q "^kernel 5 'se_scale' Mul tasks=[2-8]$" "$T/s.txt" && ok || bad "the Mul is not split: $(cat "$T/s.txt")"
KILN_TEST_THREADS=2 "$KILN" check-onnx "$D" --backend llvm >"$T/check.txt" 2>&1 && ok ||
  bad "check-onnx at 2 threads: $(cat "$T/check.txt")"
finish
