#!/bin/sh
# Prefetches in float product tiles (passes/tile.c): MatMul tiles prefetch their share of
# the next block's packed B (mm_bpf; tests/tail/mmpf, 13 x 129 -> 515, 266 KB of B, 8 full
# blocks and 3 columns), 1x1 convolution tiles the next tile's weights (pw_apf;
# tests/tail/pwpf, 131 -> 517 channels, 271 KB of weights, on 9 x 11 pixels). Each has
# pf=1 in its schedule on a CPU, none on cortex-m4 or with pf=2 in a schedule file, and
# its outputs match numpy's (check-onnx) through the JIT and the C at 1 and 2 threads, with
# and without the prefetches.
# usage: mmpf.sh KILN SOURCE_DIR
KILN=$1
. "$2/tests/lib.sh"
for c in "mmpf:mm:MatMul" "pwpf:pw:Conv"; do
  name=${c%%:*} rest=${c#*:}
  node=${rest%%:*} op=${rest#*:}
  D=$2/tests/tail/$name
  schedule_of "$D/model.onnx" "$T/on" --target native
  grep -q "$op.* pf=1" "$T/on" && ok || bad "$name: native: no pf=1 in $(cat "$T/on")"
  schedule_of "$D/model.onnx" "$T/m4" --target cortex-m4
  grep -q "pf=" "$T/m4" && bad "$name: cortex-m4: $(cat "$T/m4")" || ok
  echo "kernel 0 '$node' $op pf=2" >"$T/off.sched"
  schedule_of "$D/model.onnx" "$T/off" --target native --schedule "$T/off.sched"
  grep -q "pf=1" "$T/off" && bad "$name: pf=2: $(cat "$T/off")" || ok
  check_jit_c "$D" "$name"
  check_jit_c "$D" "$name, pf=2" --schedule "$T/off.sched"
done
finish
