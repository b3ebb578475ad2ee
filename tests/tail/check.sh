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
# mmint10: 32 words of 2 x 16-bit weights x 10 columns + 10 i32 column inits (padded: 1584);
# gemm10 and gemm13 take the register-block tiles (mm_fblock: 8 columns a block, the
# partial one rounded up to pairs): gemm10 8 + 2 columns x 64 + 10 biases, gemm13
# 8 + 6 columns x 24 f32 weights + 8 + 6 biases (1400; 16 columns padded: 1600)
for m in gemm10:2600 gemm7:952 mmint10:1320 gemm13:1400; do
  name=${m%%:*} want=${m#*:}
  "$KILN" compile "$D/$name/model.onnx" -o "$T/$name" --name m --target cortex-m4 >"$T/$name.log" 2>&1 ||
    bad "$name: compile: $(cat "$T/$name.log")"
  got=$(sed -n 's/^#define m_WEIGHTS_SIZE \([0-9]*\)/\1/p' "$T/$name/m.h")
  [ "$got" = "$want" ] && ok || bad "$name: weight bytes $got, expected $want"
done
# the register blocks: the schedule says so, and the C loads them with KN_LDM16F (VLDM)
"$KILN" compile "$D/gemm13/model.onnx" -o "$T/g13" --name m --target cortex-m4 --emit c \
  --dump-schedule "$T/g13.sched" >"$T/g13.log" 2>&1 || bad "gemm13: compile: $(cat "$T/g13.log")"
grep -q "fblock=8" "$T/g13.sched" && ok || bad "gemm13: no fblock=8 in $(cat "$T/g13.sched")"
grep -q "KN_LDM16F(" "$T/g13/m.c" && ok || bad "gemm13: no KN_LDM16F in the C"
echo "kernel 0 'fc' Gemm fblock=1" >"$T/off.sched"
"$KILN" compile "$D/gemm13/model.onnx" -o "$T/g13off" --name m --target cortex-m4 --emit c \
  --schedule "$T/off.sched" --dump-schedule "$T/g13off.sched" >"$T/g13off.log" 2>&1 ||
  bad "gemm13 fblock=1: compile: $(cat "$T/g13off.log")"
grep -q "KN_LDM" "$T/g13off/m.c" && bad "gemm13 fblock=1: still register blocks" || ok
# a float matrix-vector product on cortex-m55 (8 Q registers, VFMA by a general register):
# tiles of 7 vectors, one register left for the weights (passes/tile.c, kt_choose)
"$KILN" compile "$D/gemv45/model.onnx" -o "$T/g45" --name m --target cortex-m55 --emit c \
  --dump-schedule "$T/g45.sched" >"$T/g45.log" 2>&1 || bad "gemv45: compile: $(cat "$T/g45.log")"
grep -q "tile_vecs=7 " "$T/g45.sched" && ok || bad "gemv45: no tile_vecs=7 in $(cat "$T/g45.sched")"
finish
