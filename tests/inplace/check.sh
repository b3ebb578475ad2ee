#!/bin/sh
# Layers written over their input on microcontrollers (passes/plan.c; docs/firmware.md,
# "Layers written over their input"). For tests/inplace/* (make_inplace.py; their outputs
# through every backend against torch's are the CTest cases inplace_{b}_cortex-m4): the
# values the cortex-m4 memory plan writes over their input are each depthwise output, each
# 1x1 convolution's (not with batch 2) and the residual block's (and the Flatten, a copy
# the plan always aliases); on generic only the residual (and the Flatten and the Pad).
# usage: check.sh KILN SOURCE_DIR
KILN=$1
S=$2
. "$2/tests/lib.sh"
want() { # model target value-names...
  m=$1 t=$2
  shift 2
  "$KILN" inspect "$S/tests/inplace/$m/model.onnx" --memory --target $t >"$T/$m-$t" 2>&1 ||
    { bad "$m $t: inspect: $(tail -3 "$T/$m-$t")"; return; }
  got=$(awk '/in place of/ {print $5}' "$T/$m-$t" | sort | tr '\n' ' ')
  exp=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
  [ "$got" = "$exp" ] && ok || bad "$m $t: in place: '$got', expected '$exp'"
}
want chain cortex-m4 b e r
want batch2 cortex-m4 b r
want sep13 cortex-m4 b e f g flat
want sep16 cortex-m4 b e f g flat
want chain generic r
want batch2 generic r
want sep13 generic gp flat
want sep16 generic gp flat
finish
