#!/bin/sh
# Winograd's batched products prefetch the next block of U across the products
# (passes/tile.c, kt_batched_const: the last full block of a product the next product's
# first): tests/winograd_pf (128 -> 256 channels on 10x10, F(2x2), U 2 MB in 16 products
# of 128 KB) has pf=1 on its Winograd kernel on x86-64-avx512 and x86-64-avx2 (where U
# is past the L2: the three passes), none on cortex-m4 or with pf=2 in a schedule file,
# and its output matches numpy's (check-onnx) through the JIT with x86-64-avx512's tiles
# (KILN_TEST_TARGET; the native target may take the chunked form) at 1 and 2 threads with
# and without the prefetch (the C is left out: its 2 MB of transformed weights as text
# take gcc a minute).
# usage: check.sh KILN SOURCE_DIR
KILN=$1
. "$2/tests/lib.sh"
D=$2/tests/winograd_pf
for t in x86-64-avx512 x86-64-avx2; do
  schedule_of "$D/model.onnx" "$T/on" --target $t
  grep -q "'c' Conv .*wino=2 pf=1" "$T/on" && ok || bad "$t: no wino=2 pf=1 in $(cat "$T/on")"
done
schedule_of "$D/model.onnx" "$T/m4" --target cortex-m4 --emit llvm
grep -q "pf=" "$T/m4" && bad "cortex-m4: $(cat "$T/m4")" || ok
echo "kernel 0 'c' Conv pf=2" >"$T/off.sched"
schedule_of "$D/model.onnx" "$T/off" --target x86-64-avx512 --schedule "$T/off.sched"
grep -q "pf=1" "$T/off" && bad "pf=2: $(cat "$T/off")" || ok
grep -q "wino=2" "$T/off" && ok || bad "pf=2: not Winograd: $(cat "$T/off")"
for n in 1 2; do
  for s in "" "--schedule $T/off.sched"; do
    # shellcheck disable=SC2086
    KILN_TEST_TARGET=x86-64-avx512 KILN_TEST_THREADS=$n "$KILN" check-onnx "$D" --backend llvm $s >"$T/chk" 2>&1 && ok ||
      bad "llvm at $n threads $s: $(cat "$T/chk")"
  done
done
finish
