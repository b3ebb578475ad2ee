#!/bin/sh
# The dot tiles' weight prefetch (passes/tile.c, conv_pf; the kernel IR's KS_PREFETCH,
# kl_prefetch): tests/quant/fixed/qdq_prefetch's two 3x3 convolutions (several blocks of
# output channels) with pf=1 forced by a schedule file on x86-64-vnni (vpdpbusd words):
# the same bits as the Python-integer reference through the C printer and LLVM, the
# schedule reports pf=1, the C holds kn_prefetch and the LLVM IR llvm.prefetch; with the
# default schedule (weights far below half the second-level cache) and with pf=2 there
# is none; x86-64-avx2's pmaddwd tiles (words of 2) take none even with pf=1.
# usage: prefetch.sh KILN SOURCE_DIR
KILN=$1
S=$2
. "$2/tests/lib.sh"
export CC=${CC:-gcc}
M=$S/tests/quant/fixed/qdq_prefetch
for t in x86-64-vnni; do
  "$KILN" compile "$M/model.onnx" -o "$T/d$t" --target $t --dump-schedule "$T/d$t.txt" >/dev/null ||
    bad "$t: compile"
  [ "$(grep -c "dot=" "$T/d$t.txt")" = 2 ] && ok || bad "$t: want two dot tiles: $(cat "$T/d$t.txt")"
  grep -q "pf=" "$T/d$t.txt" && bad "$t: prefetch by default: $(cat "$T/d$t.txt")" || ok
  grep -q kn_prefetch "$T/d$t/model.c" && bad "$t: kn_prefetch by default" || ok
  sed "/dot=/s/\$/ pf=1/" "$T/d$t.txt" >"$T/p$t.txt"
  sed "/dot=/s/\$/ pf=2/" "$T/d$t.txt" >"$T/n$t.txt"
  "$KILN" compile "$M/model.onnx" -o "$T/c$t" --target $t --schedule "$T/p$t.txt" \
    --dump-schedule "$T/s$t.txt" >/dev/null || bad "$t: compile with pf=1"
  [ "$(grep -c "pf=1" "$T/s$t.txt")" = 2 ] && ok || bad "$t: pf=1 not taken: $(cat "$T/s$t.txt")"
  [ "$(grep -c "kn_prefetch(" "$T/c$t/model.c")" -ge 2 ] && ok || bad "$t: no kn_prefetch in the C"
  "$KILN" compile "$M/model.onnx" -o "$T/l$t" --target $t --emit llvm --schedule "$T/p$t.txt" \
    >/dev/null || bad "$t: compile --emit llvm with pf=1"
  grep -q "call void @llvm.prefetch" "$T/l$t/model.ll" && ok || bad "$t: no llvm.prefetch in the IR"
  "$KILN" compile "$M/model.onnx" -o "$T/n$t" --target $t --schedule "$T/n$t.txt" >/dev/null ||
    bad "$t: compile with pf=2"
  grep -q kn_prefetch "$T/n$t/model.c" && bad "$t: kn_prefetch with pf=2" || ok
  for b in c llvm; do
    r=$(KILN_TEST_TARGET=$t "$KILN" check-onnx "$M" --backend $b --schedule "$T/p$t.txt" 2>&1 | tail -1)
    [ "$r" = "1 passed, 0 failed" ] && ok || bad "$t pf=1 $b: $r"
  done
done
t=x86-64-avx2
"$KILN" compile "$M/model.onnx" -o "$T/a" --target $t --dump-schedule "$T/a.txt" >/dev/null ||
  bad "$t: compile"
sed "/dot=/s/\$/ pf=1/" "$T/a.txt" >"$T/ap.txt"
"$KILN" compile "$M/model.onnx" -o "$T/ap" --target $t --schedule "$T/ap.txt" >/dev/null ||
  bad "$t: compile with pf=1"
grep -q kn_prefetch "$T/ap/model.c" && bad "$t: kn_prefetch in words of 2" || ok
finish
