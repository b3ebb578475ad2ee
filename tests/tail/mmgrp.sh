#!/bin/sh
# The GotoBLAS order of a float MatMul's blocks (passes/tile.c, mm_groups): a schedule's mc
# groups tests/tail/mmgrp's 4 full blocks of columns in 2 (the parallel tasks), each run in
# blocks of 12 rows (45 rows: 3 blocks and 9 left, a tile of 6 and a partial one of 3),
# the partial block of 13 columns after; the schedule splits the groups in 2 tasks. Its outputs against numpy's (check-onnx) through
# the JIT and the C at 1 and 2 threads; without a schedule the blocks stay ungrouped.
# The group width comes from the host's L2 (native's l2_bytes): needs one that is known.
# usage: mmgrp.sh KILN SOURCE_DIR
KILN=$1
D=$2/tests/tail/mmgrp
. "$2/tests/lib.sh"
echo "kernel 0 'mm' MatMul mc=12 tasks=2" >"$T/grp.sched"
"$KILN" bench "$D/model.onnx" --threads 2 --runs 1 --schedule "$T/grp.sched" \
  --dump-schedule "$T/got" >"$T/log" 2>&1 || bad "bench: $(cat "$T/log")"
grep -q "mc=12" "$T/got" && grep -q "tasks=2" "$T/got" && ok ||
  bad "no mc=12 and tasks=2 (2 groups) in $(cat "$T/got")"
check_jit_c "$D" "mc=12" --schedule "$T/grp.sched"
schedule_of "$D/model.onnx" "$T/off" --target native
grep -q "mc=" "$T/off" && bad "grouped without a schedule: $(cat "$T/off")" || ok
finish
