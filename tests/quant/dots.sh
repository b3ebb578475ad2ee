#!/bin/sh
# The integer tiles' dot products (KX_DOT, #12): every kind, forced through a schedule
# file's dot= field on every quantized model, through the C printer (its kn_dot helpers)
# and the LLVM JIT (pmaddwd/vpdpbusd where this CPU has them, else the portable
# expansion), must give the reference's bits; the default schedule of each target uses
# the kind its description names (x86-64-avx2 and x86-64-avx512: s16x2, x86-64-vnni:
# u8s8x4 where w - wz fits int8, aarch64: s8s8x4, cortex-m4: s16x2), and the
# generated assembly holds the instruction.
# usage: dots.sh KILN SOURCE_DIR
KILN=$1
S=$2
. "$2/tests/lib.sh"
export CC=${CC:-gcc}
for m in qlinear_cnn qlinear_odd integer_ops dynamic_quant; do
  M=$S/tests/quant/models/$m
  for t in x86-64-avx512 cortex-m4; do
    "$KILN" compile "$M/model.onnx" -o "$T/c" --target $t --dump-schedule "$T/s.txt" >/dev/null ||
      bad "$m $t: compile"
    grep -q "dot=[123]" "$T/s.txt" && ok || bad "$m $t: no dot product in the schedule: $(cat "$T/s.txt")"
    for k in 1 2 3; do
      sed "s/dot=[0-9]*/dot=$k/" "$T/s.txt" >"$T/s$k.txt"
      for b in c llvm; do
        r=$(KILN_TEST_TARGET=$t "$KILN" check-onnx "$M" --backend $b --schedule "$T/s$k.txt" 2>&1 | tail -1)
        [ "$r" = "1 passed, 0 failed" ] && ok || bad "$m $t dot=$k $b: $r"
      done
    done
  done
done
# the kind each target names, and its instruction in the assembly
M=$S/tests/quant/models/qlinear_odd/model.onnx
check() { # target, kind a kernel must use, instruction
  "$KILN" compile "$M" -o "$T/$1" --target $1 --emit asm --dump-schedule "$T/$1.txt" >/dev/null ||
    bad "$1: compile --emit asm"
  grep -q "dot=$2" "$T/$1.txt" && ok || bad "$1: no kernel with dot=$2: $(cat "$T/$1.txt")"
  grep -qi "$3" "$T/$1"/*.s && ok || bad "$1: no $3 in the assembly"
}
check x86-64-avx2 1 vpmaddwd
check x86-64-avx512 1 vpmaddwd
check x86-64-vnni 2 vpdpbusd
check aarch64 3 sdot
check cortex-m4 1 smlad
finish
