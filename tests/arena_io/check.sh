#!/bin/sh
# CTest "arena_io": kiln compile --arena-in-place-io. DS-CNN (examples/firmware) in float
# and int8, each compiled twice (generic C, host compiler): in place, the output read from
# the arena equals the normal mode's byte for byte and the independent reference (torch:
# within 1e-5 * max |ref|; the int8 model's numpy integer reference: equal), pointers
# outside the arena are refused (status 5), and the RAM shrinks: the in-place arena is
# smaller than the normal arena plus the input and output buffers. The ONNX Relu node
# test (3x4x5 f32 in, same out) checks the plan by hand: 240 bytes each, both live in the
# one kernel, so the input at 0, the output at 256 (64-byte aligned), arena 512 (lower
# bound 2 x 256); without the flag the arena is 0. --emit obj refuses the flag.
# usage: check.sh KILN SOURCE_DIR
. "$2/tests/lib.sh"
K=$1
S=$(cd "$2" && pwd)
CC=${CC:-cc}
F=$S/examples/firmware
one() { # LABEL MODEL TIN TOUT TOL REF
  d=$T/$1
  mkdir -p "$d"
  if ! "$K" compile "$2" -o "$d" --name m -q >"$d/log" 2>&1 ||
    ! "$K" compile "$2" -o "$d" --name mi --arena-in-place-io -q >>"$d/log" 2>&1; then
    bad "$1: compile: $(cat "$d/log")"
    return
  fi
  if ! $CC -std=c11 -O2 -I"$d" -I"$S/tests" -DTIN=$3 -DTOUT=$4 -DTOL=$5 "$S/tests/arena_io/harness.c" \
    "$d/m.c" "$d/mi.c" -lm -o "$d/h" >>"$d/log" 2>&1; then
    bad "$1: build: $(tail -5 "$d/log")"
    return
  fi
  if "$d/h" "$F/kws_input.npy" "$6" >"$d/out" 2>&1; then ok; else bad "$1: $(cat "$d/out")"; fi
  # sizes: arena A, input I, output O; in place: arena B
  set -- $(sed -n 's/^sizes: arena \([0-9]*\), input \([0-9]*\), output \([0-9]*\); in place: arena \([0-9]*\),.*/\1 \2 \3 \4/p' "$d/out")
  if [ $# = 4 ] && [ "$4" -lt $(($1 + $2 + $3)) ] && [ "$4" -ge "$1" ]; then ok; else
    bad "RAM: $(cat "$d/out")"; fi
  cat "$d/out"
}
one float "$F/kws.onnx" float float 1e-5 "$F/kws_output.npy"
one int8 "$F/kws_int8.onnx" float int8_t 0 "$F/kws_int8_output.npy"

R=/usr/share/libonnx-testdata/data/node/test_relu/model.onnx
if [ -f "$R" ]; then
  "$K" compile "$R" -o "$T/relu" --name r --emit h -q &&
    "$K" compile "$R" -o "$T/relu" --name ri --emit h --arena-in-place-io -q || bad "relu: compile"
  h=$(grep -h -E '^#define [a-z]*_(ARENA_SIZE|INPUT_0_OFFSET|OUTPUT_0_OFFSET) ' "$T/relu/r.h" "$T/relu/ri.h" |
    tr '\n' ' ')
  [ "$h" = "#define r_ARENA_SIZE 0 #define ri_ARENA_SIZE 512 #define ri_INPUT_0_OFFSET 0 #define ri_OUTPUT_0_OFFSET 256 " ] &&
    ok || bad "relu plan: $h"
fi
"$K" compile "$F/kws.onnx" -o "$T/obj" --emit obj --arena-in-place-io >"$T/obj.log" 2>&1
[ $? = 2 ] && grep -q "applies to --emit c and h" "$T/obj.log" && ok || bad "obj: $(cat "$T/obj.log")"
finish
