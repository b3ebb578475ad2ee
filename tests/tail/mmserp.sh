#!/bin/sh
# The serpentine order of a float MatMul's blocks of columns (passes/tile.c, mm_serp):
# tests/tail/mmserp (93 x 360 -> 205, A 134 KB) takes it by default on x86-64-avx2 (L2
# 256 KB: A and a block's B over half of it) for one thread, not for 2, not on cortex-m4
# nor with serp=2 in a schedule file, and with serp=1 on any CPU at any thread count. Its
# outputs match numpy's (check-onnx) through the JIT and the C at 1 and 2 threads with
# x86-64-avx2's tiles (KILN_TEST_TARGET) and the host's, in that order (by default, or
# serp=1) and in order; and the JIT's outputs in the serpentine order (serp=1) are the
# same bits as in order (each tile keeps its sums) at 1 and 2 threads.
# usage: mmserp.sh KILN SOURCE_DIR
KILN=$1
D=$2/tests/tail/mmserp
. "$2/tests/lib.sh"
echo "kernel 0 'mm' MatMul serp=2" >"$T/off.sched"
echo "kernel 0 'mm' MatMul serp=1" >"$T/on.sched"
schedule_of "$D/model.onnx" "$T/avx2" --target x86-64-avx2
grep -q "MatMul.* serp=1" "$T/avx2" && ok || bad "x86-64-avx2: no serp=1 in $(cat "$T/avx2")"
schedule_of "$D/model.onnx" "$T/avx2t2" --target x86-64-avx2 --threads 2
grep -q "serp=" "$T/avx2t2" && bad "x86-64-avx2, 2 threads: $(cat "$T/avx2t2")" || ok
schedule_of "$D/model.onnx" "$T/m4" --target cortex-m4
grep -q "serp=" "$T/m4" && bad "cortex-m4: $(cat "$T/m4")" || ok
schedule_of "$D/model.onnx" "$T/avx2off" --target x86-64-avx2 --schedule "$T/off.sched"
grep -q "serp=1" "$T/avx2off" && bad "serp=2: $(cat "$T/avx2off")" || ok
schedule_of "$D/model.onnx" "$T/nat" --target native --schedule "$T/on.sched"
grep -q "MatMul.* serp=1" "$T/nat" && ok || bad "native, serp=1: $(cat "$T/nat")"
for tgt in x86-64-avx2 native; do
  on="--schedule $T/on.sched"
  [ $tgt = x86-64-avx2 ] && KILN_TEST_TARGET=$tgt check_jit_c "$D" "$tgt, by default"
  KILN_TEST_TARGET=$tgt check_jit_c "$D" "$tgt, serp=1" $on
  KILN_TEST_TARGET=$tgt check_jit_c "$D" "$tgt, serp=2" --schedule "$T/off.sched"
  for n in 1 2; do
    for s in on off; do
      sch=
      [ $s = off ] && sch="--schedule $T/off.sched"
      [ $s = on ] && sch=$on
      KILN_TEST_TARGET=$tgt KILN_TEST_THREADS=$n "$KILN" run "$D/model.onnx" --backend llvm \
        --random 7 --output-dir "$T/$tgt-$n-$s" $sch >"$T/log" 2>&1 ||
        bad "$tgt, $n threads, $s: run: $(cat "$T/log")"
    done
    cmp -s "$T/$tgt-$n-on/y.npy" "$T/$tgt-$n-off/y.npy" && ok ||
      bad "$tgt, $n threads: outputs differ between the serpentine order and in order"
  done
done
finish
