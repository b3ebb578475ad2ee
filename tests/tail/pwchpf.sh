#!/bin/sh
# The float pointwise channel tiles (passes/tile.c, pw_channel_tiles: few pixels, the
# image read as one row) prefetch the next block's weights (conv_pf) where the weights are
# half the L2 or more: tests/tail/pwchpf (600 -> 230 channels on 5 x 5 pixels, 552 KB of
# weights, a residual and Relu) has pf=1 on x86-64-avx512 (1 MB of L2), none on cortex-m4
# or with pf=2 in a schedule file, and its outputs match numpy's (check-onnx) through the
# JIT and the C at 1 and 2 threads with the prefetch forced on (pf=1) and off (pf=2).
# usage: pwchpf.sh KILN SOURCE_DIR
KILN=$1
. "$2/tests/lib.sh"
D=$2/tests/tail/pwchpf
schedule_of "$D/model.onnx" "$T/on" --target x86-64-avx512
grep -q "Conv tile_rows=.* pf=1" "$T/on" && ok || bad "x86-64-avx512: no pf=1 in $(cat "$T/on")"
schedule_of "$D/model.onnx" "$T/m4" --target cortex-m4
grep -q "pf=" "$T/m4" && bad "cortex-m4: $(cat "$T/m4")" || ok
echo "kernel 0 'pw' Conv pf=2" >"$T/off.sched"
schedule_of "$D/model.onnx" "$T/off" --target x86-64-avx512 --schedule "$T/off.sched"
grep -q "pf=1" "$T/off" && bad "pf=2: $(cat "$T/off")" || ok
echo "kernel 0 'pw' Conv pf=1" >"$T/on.sched"
schedule_of "$D/model.onnx" "$T/non" --target native --schedule "$T/on.sched"
grep -q "pf=1" "$T/non" && ok || bad "native, pf=1: $(cat "$T/non")"
check_jit_c "$D" "pf=1" --schedule "$T/on.sched"
check_jit_c "$D" "pf=2" --schedule "$T/off.sched"
finish
