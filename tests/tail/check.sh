#!/bin/sh
# The last, partial block of a product's output columns is packed only as wide as the
# whole vectors it needs (passes/tile.c, mm_lower): on cortex-m4 (scalar tiles of 4
# columns) the models of tests/tail (make_tail.py) have exactly their own weight bytes,
# not the columns rounded up to 4. check-onnx runs their outputs (CTest tail_*).
# usage: check.sh KILN SOURCE_DIR
KILN=$1
D=$2/tests/tail
. "$2/tests/lib.sh"
# gemm10: 10 x 64 f32 weights + 10 f32 biases (12 columns padded: 3120 bytes);
# gemm7: 33 x 7 f32 weights (7 columns: 4 + 3, padded 8: 1084) + the Add's 7 f32;
# mmint10: 32 words of 2 x 16-bit weights x 10 columns + 10 i32 column inits (padded: 1584)
for m in gemm10:2600 gemm7:952 mmint10:1320; do
  name=${m%%:*} want=${m#*:}
  "$KILN" compile "$D/$name/model.onnx" -o "$T/$name" --name m --target cortex-m4 >"$T/$name.log" 2>&1 ||
    bad "$name: compile: $(cat "$T/$name.log")"
  got=$(sed -n 's/^#define m_WEIGHTS_SIZE \([0-9]*\)/\1/p' "$T/$name/m.h")
  [ "$got" = "$want" ] && ok || bad "$name: weight bytes $got, expected $want"
done
finish
