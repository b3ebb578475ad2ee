#!/bin/sh
# The thread-aware arena plan (pass threadplan, passes/plan.c) on tests/models/residual_rows
# (a channels-last expansion, then a projection with its residual Add split over rows):
# at 2 threads its offsets differ from the thread-blind plan's (KILN_THREAD_PLAN=0), the
# threads store into fewer lines the other thread holds (passes/xcore.c's `write`), the
# arena stays within 10% of the thread-blind one, and the model still matches torch on two
# threads; at 1 thread, and on a microcontroller at 2, the plan is the thread-blind one
# byte for byte.
# usage: thread_plan.sh KILN SOURCE_DIR
KILN=$1
S=$2
D=$S/tests/models/residual_rows
. "$2/tests/lib.sh"

mem() { # TAG SWITCH ARGS...: kiln inspect --memory into $T/TAG
  tag=$1 sw=$2
  shift 2
  KILN_THREAD_PLAN=$sw "$KILN" inspect "$D/model.onnx" --memory "$@" >"$T/$tag" 2>&1 || bad "inspect $tag"
}
mem on2 1 --threads 2 --target x86-64-avx512
mem off2 0 --threads 2 --target x86-64-avx512
cmp -s "$T/on2" "$T/off2" && bad "same plan at 2 threads with the switch on and off: $(cat "$T/on2")" || ok
arena() { sed -n 's/^arena \([0-9]*\) bytes.*/\1/p' "$T/$1"; }
a_on=$(arena on2) a_off=$(arena off2)
[ -n "$a_on" ] && [ -n "$a_off" ] && [ $((a_on * 10)) -le $((a_off * 11)) ] && ok ||
  bad "arena $a_on against $a_off thread-blind"
mem on1 1 --threads 1 --target x86-64-avx512
mem off1 0 --threads 1 --target x86-64-avx512
cmp -s "$T/on1" "$T/off1" && ok || bad "the plan at 1 thread moved: $(diff "$T/on1" "$T/off1")"
mem m4on 1 --threads 2 --target cortex-m4
mem m4off 0 --threads 2 --target cortex-m4
cmp -s "$T/m4on" "$T/m4off" && ok || bad "the plan on cortex-m4 moved: $(diff "$T/m4on" "$T/m4off")"

writes() { # SWITCH: cross-core write bytes of a run at 2 threads
  KILN_THREAD_PLAN=$1 KILN_XCORE=2 "$KILN" bench "$D/model.onnx" --threads 2 --runs 1 --warmup 0 \
    --dump-schedule "$T/s$1.txt" >/dev/null 2>&1 || bad "bench $1"
  sed -n 's/^# cross-core bytes.*: read [0-9]* write \([0-9]*\)$/\1/p' "$T/s$1.txt"
}
w_on=$(writes 1) w_off=$(writes 0)
[ -n "$w_on" ] && [ -n "$w_off" ] && [ "$w_on" -lt "$w_off" ] && ok ||
  bad "cross-core writes $w_on thread-aware, $w_off thread-blind"
echo "cross-core writes a run: $w_off thread-blind, $w_on thread-aware; arena $a_off, $a_on"
KILN_TEST_THREADS=2 "$KILN" check-onnx "$D" --backend llvm >"$T/check.txt" 2>&1 && ok ||
  bad "check-onnx at 2 threads: $(cat "$T/check.txt")"
finish
