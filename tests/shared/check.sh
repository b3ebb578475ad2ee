#!/bin/sh
# A weight read by two nodes is emitted once (kl_table shares equal constant tables): the
# model of tests/shared compiled for cortex-m4 and generic has two fewer weight arrays, and
# fewer weight bytes, when its Conv and MatMul weights are shared (one initializer, or two
# with equal values) than when they differ. check-onnx runs the outputs (CTest shared_*).
# usage: check.sh KILN SOURCE_DIR
KILN=$1
D=$2/tests/shared
. "$2/tests/lib.sh"
for t in cortex-m4 generic; do
  for m in shared copies distinct; do
    "$KILN" compile "$D/$m/model.onnx" -o "$T/$t-$m" --name m --target $t >"$T/$t-$m.log" 2>&1 ||
      bad "$t $m: compile: $(cat "$T/$t-$m.log")"
    eval "n_$m=$(grep -c '^static const union' "$T/$t-$m/m.c")"
    eval "w_$m=$(sed -n 's/^#define m_WEIGHTS_SIZE \([0-9]*\)/\1/p' "$T/$t-$m/m.h")"
  done
  # shellcheck disable=SC2154
  { [ "$n_shared" = "$n_copies" ] && [ "$((n_distinct - 2))" = "$n_shared" ]; } && ok ||
    bad "$t: weight arrays shared $n_shared, copies $n_copies, distinct $n_distinct"
  # shellcheck disable=SC2154
  { [ "$w_shared" = "$w_copies" ] && [ "$w_shared" -lt "$w_distinct" ]; } && ok ||
    bad "$t: weight bytes shared $w_shared, copies $w_copies, distinct $w_distinct"
done
finish
