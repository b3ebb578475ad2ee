#!/bin/sh
# Generated C with GCC/Clang vector extensions and with its portable C99 form
# (-DKN_NO_VECTOR_EXT): for tiled models (register tiles, depthwise row tiles, vmath
# polynomials, fused epilogues with selects and NaN-propagating min/max) on targets of
# 16, 8, 4 and 1 lanes, both forms
#   - compile with gcc and clang at -std=c99 -Wall -Wextra -Wpedantic -Werror,
#   - give bit-identical outputs (same operations in the same order per lane), also
#     with fused multiply-adds (-march=native where the host has FMA),
#   - match the ONNX reference outputs of the test folders (kiln check-onnx).
# The vector form must really be vector statements: the file must use the vector
# macros of its target's width.
# usage: vector_ext.sh KILN SOURCE_DIR
KILN=$1
S=$2
. "$2/tests/lib.sh"
export CC=gcc

# compile: every target, both forms, gcc (-O1, for its flow warnings) and clang
for t in x86-64-avx512:16 x86-64-avx2:8 generic:4 cortex-m4:1; do
  tgt=${t%:*} lanes=${t#*:}
  for m in graphopt depthwise fuse; do
    "$KILN" compile "$S/tests/$m/model.onnx" -o "$T/$tgt-$m" --target "$tgt" >/dev/null || { bad "compile $m for $tgt"; continue; }
    f=$T/$tgt-$m/model.c
    if [ "$lanes" -gt 1 ]; then
      grep -q "KN_FMA${lanes}F(" "$f" && grep -q "KN_LD${lanes}F(" "$f" && grep -q "^#if KN_VECTOR_EXT$" "$f" &&
        ok || bad "$m for $tgt: no ${lanes}-lane vector statements"
    else # no SIMD (Cortex-M4): scalar tiles and register blocks (KN_LDM), no vector types at all
      ! grep -q "kn_v[0-9]*f\|KN_VECTOR_EXT" "$f" && ok || bad "$m for $tgt: vector types on a 1-lane target"
    fi
    for def in "" -DKN_NO_VECTOR_EXT; do
      gcc -std=c99 -O1 -Wall -Wextra -Wpedantic -Werror $def -c "$f" -o "$T/o.o" 2>"$T/cc.log" &&
        ok || bad "gcc $def rejects $m for $tgt: $(head -3 "$T/cc.log")"
      ! command -v clang >/dev/null ||
        clang -std=c99 -Wall -Wextra -Wpedantic -Werror $def -fsyntax-only "$f" 2>"$T/cc.log" &&
        ok || bad "clang $def rejects $m for $tgt: $(head -3 "$T/cc.log")"
    done
  done
done
# outputs: vector extensions against the C99 form, bit for bit, at -O2 without and
# with the host's FMA (-march=native)
for tgt in x86-64-avx512 x86-64-avx2; do
  for m in graphopt depthwise; do
    for arch in "" "-march=native"; do
      for def in "" -DKN_NO_VECTOR_EXT; do
        o=$T/out-$tgt-$m-${arch:+n}${def:+s}
        KILN_TEST_TARGET=$tgt KILN_CFLAGS="-O2 $arch $def" "$KILN" run "$S/tests/$m/model.onnx" --backend c \
          --random 7 --output-dir "$o" >/dev/null 2>"$T/run.log" || bad "run $m $tgt $arch $def: $(tail -2 "$T/run.log")"
      done
      a=$T/out-$tgt-$m-${arch:+n}
      same=1
      for y in "$a"/*.npy; do cmp -s "$y" "$a"s/"$(basename "$y")" || same=0; done
      [ -n "$(ls "$a" 2>/dev/null)" ] && [ $same = 1 ] && ok ||
        bad "$m for $tgt ${arch}: vector extensions and C99 loops give different outputs"
    done
  done
done
# against the ONNX references (the test folders' outputs, from torch)
for tgt in x86-64-avx512 x86-64-avx2 generic; do
  for def in "" -DKN_NO_VECTOR_EXT; do
    KILN_TEST_TARGET=$tgt KILN_CFLAGS="-O2 -march=native $def" "$KILN" check-onnx "$S/tests/graphopt" \
      "$S/tests/depthwise" "$S/tests/fuse" --backend c --timeout 600 >"$T/chk.log" 2>&1 &&
      grep -q "^3 passed, 0 failed" "$T/chk.log" && ok || bad "$tgt $def against the references: $(tail -3 "$T/chk.log")"
  done
done
# restrict: kernel parameters of distinct buffers are restrict; a buffer computed in
# place of another (the memory plan's in-place alias) and that one never are
# (dynamic_quant's scale computations run in place)
"$KILN" compile "$S/tests/models/dynamic_quant/model.onnx" -o "$T/ip" --dump-kir >"$T/ip.kir" 2>&1 || bad "compile dynamic_quant"
grep -q "^static void model_k[0-9]*(.*\*restrict " "$T/ip/model.c" && ok || bad "no restrict parameters"
sed -n 's/.*temp *\(t[0-9]*\):.* in place of \(t[0-9]*\) .*/\1 \2/p' "$T/ip.kir" >"$T/pairs"
[ -s "$T/pairs" ] && ok || bad "dynamic_quant has no in-place buffer (the check below is void)"
# (a copy that runs in place of its source, Reshape or Flatten, leaves an empty kernel:
# no kernel then takes both, and there is nothing to check for that pair)
n=0
while read -r a b; do
  both=$(grep "^static void model_k[0-9]*(.*[^t]\*$a[,)]" "$T/ip/model.c" | grep "[^t]\*$b[,)]")
  [ -n "$both" ] || continue
  n=$((n + 1))
  echo "$both" | grep -q "restrict $a[,)]\|restrict $b[,)]" &&
    bad "in-place $a (of $b) is restrict: $both" || ok
done <"$T/pairs"
[ "$n" -gt 0 ] && ok || bad "no kernel computes an in-place buffer with its source (the check above is void)"
finish
