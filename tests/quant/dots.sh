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
# integer depthwise convolutions (passes/depthwise.c, staged words of input rows): the
# kind each kernel takes on VNNI (four rows for vpdpbusd; row pairs at stride 2 and where
# w - wz leaves int8), and every kind forced on every kernel, stride 2 included
for m in models/qlinear_dw_dot fixed/qdq_dw_dot; do
  M=$S/tests/quant/$m
  "$KILN" compile "$M/model.onnx" -o "$T/dw" --target x86-64-vnni --dump-schedule "$T/dw.txt" >/dev/null ||
    bad "$m: compile"
  for k in 1 2 3; do
    sed "s/dot=[0-9]*/dot=$k/" "$T/dw.txt" >"$T/dw$k.txt"
    for b in c llvm; do
      r=$(KILN_TEST_TARGET=x86-64-vnni "$KILN" check-onnx "$M" --backend $b --schedule "$T/dw$k.txt" 2>&1 | tail -1)
      [ "$r" = "1 passed, 0 failed" ] && ok || bad "$m dot=$k $b: $r"
    done
  done
done
want() { # schedule file, node, dot kind
  grep -q "'$2' .* dot=$3\b" "$1" && ok || bad "$2: want dot=$3 in: $(grep "'$2'" "$1")"
}
M=$S/tests/quant/models/qlinear_dw_dot/model.onnx
"$KILN" compile "$M" -o "$T/dwv" --target x86-64-vnni --emit asm --dump-schedule "$T/dwv.txt" >/dev/null ||
  bad "qlinear_dw_dot: compile --emit asm"
want "$T/dwv.txt" dwa 2
want "$T/dwv.txt" dwb 1
want "$T/dwv.txt" dwc 1
want "$T/dwv.txt" dwd 2
grep -qi vpdpbusd "$T/dwv"/*.s && ok || bad "qlinear_dw_dot: no vpdpbusd in the assembly"
"$KILN" compile "$M" -o "$T/dwg" --target generic --dump-schedule "$T/dwg.txt" >/dev/null
grep -q "dot=" "$T/dwg.txt" && bad "generic: a dot product without one: $(cat "$T/dwg.txt")" || ok
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
