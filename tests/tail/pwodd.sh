#!/bin/sh
# The float 1x1 channel tiles make two input channels an iteration of their reduction loop
# on 32-register CPUs (passes/tile.c, conv_k_unroll): tests/tail/pwodd (301 -> 70 channels
# on 5 x 5 pixels, a residual and Relu). In the assembly for x86-64-avx512 the tile's loop
# holds 2 x rows x vectors FMAs (rows and vectors from the schedule), for x86-64-avx2 (16
# registers) one step's, and in 8 x 3 tiles (a schedule file; 8 x 3 spilled in two steps)
# one step's with no stack access in the loop; the outputs, the odd channel's step after
# the loop included, match numpy's (check-onnx) through the JIT and the C at 1 and 2 threads.
# usage: pwodd.sh KILN SOURCE_DIR
KILN=$1
. "$2/tests/lib.sh"
D=$2/tests/tail/pwodd
# the most vfmadd231ps in one loop (a label up to the branch back to it) of FILE, and the
# stack accesses (%rsp) in the loops that have FMAs
loop_fmas() {
  awk '/^[.A-Za-z0-9_]+:/ { l = substr($1, 1, length($1) - 1); n = 0; s = 0; next }
       /vfmadd231ps/ { n++ }
       /\(%rsp\)/ { s++ }
       $1 ~ /^j/ && $2 == l && n > 0 { t += s }
       $1 ~ /^j/ && $2 == l && n > m { m = n }
       END { print m + 0, t + 0 }' "$1"
}
echo "kernel 0 'pw' Conv tile_rows=8 tile_vecs=3" >"$T/8x3.sched"
for t in x86-64-avx512 x86-64-avx2 8x3; do
  set -- --target $t
  [ $t = 8x3 ] && set -- --target x86-64-avx512 --schedule "$T/8x3.sched"
  "$KILN" compile "$D/model.onnx" -o "$T/$t" "$@" --emit asm --dump-schedule "$T/$t.txt" \
    >"$T/log" 2>&1 || bad "$t: compile --emit asm: $(cat "$T/log")"
  rv=$(sed -n "s/.*'pw' Conv tile_rows=\([0-9]*\) tile_vecs=\([0-9]*\) .*/\1 \2/p" "$T/$t.txt")
  [ -n "$rv" ] || bad "$t: no tile in $(cat "$T/$t.txt")"
  steps=2
  [ $t != x86-64-avx512 ] && steps=1
  want="$(echo "$rv" | awk -v s=$steps '{ print s * $1 * $2 }') 0"
  got=$(loop_fmas "$T/$t"/*.s)
  [ "$got" = "$want" ] && ok || bad "$t: tile $rv, FMAs and stack accesses in the loops $got, want $want"
done
check_jit_c "$D" "pwodd"
finish
