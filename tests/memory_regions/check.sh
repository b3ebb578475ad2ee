#!/bin/sh
# CTest "memory_regions": kiln compile --memory (several arena regions, fastest first).
# DS-CNN (examples/firmware) in float and int8, generic C on the host compiler, compiled
# with one arena, with two regions, and with two regions and --arena-in-place-io: the
# region builds' outputs equal the one-arena output byte for byte and the independent
# reference (torch within 1e-5 * max |ref|; the int8 model's numpy reference exactly),
# from regions allocated apart and filled with garbage (harness.c). The float plan with
# fast=64K is derived by hand: buffers smallest first into the first region that still
# fits: the two 256-byte pooled/flattened features, the 1,536- and 2,784-byte scratch
# rows, then the nine 32,000-byte activations (two live at once: 64,000 bytes, and the
# 1,536-byte row at 64,000 ends at 65,536 exactly), and the 48,384-byte padded copy of
# kernel 1, live with two activations, does not fit (64,000 + 48,384 > 65,536): the slow
# region holds it alone (48,384 bytes), fast 65,536, sum 113,920. Errors: a region too
# small (exit 1, naming the model, the buffer and the sizes) and bad --memory syntax
# (usage errors, exit 2). --json gives the same figures.
# usage: check.sh KILN SOURCE_DIR
. "$2/tests/lib.sh"
K=$1
S=$(cd "$2" && pwd)
CC=${CC:-cc}
F=$S/examples/firmware
one() { # LABEL MODEL MEMORY TIN TOUT TOL REF
  d=$T/$1
  mkdir -p "$d"
  if ! "$K" compile "$2" -o "$d" --name m -q >"$d/log" 2>&1 ||
    ! "$K" compile "$2" -o "$d" --name m2 --memory "$3" >>"$d/log" 2>&1 ||
    ! "$K" compile "$2" -o "$d" --name mr --memory "$3" --arena-in-place-io -q >>"$d/log" 2>&1; then
    bad "$1: compile: $(cat "$d/log")"
    return
  fi
  if ! $CC -std=c11 -O2 -I"$d" -DTIN=$4 -DTOUT=$5 -DTOL=$6 "$S/tests/memory_regions/harness.c" \
    "$d/m.c" "$d/m2.c" "$d/mr.c" -lm -o "$d/h" >>"$d/log" 2>&1; then
    bad "$1: build: $(tail -5 "$d/log")"
    return
  fi
  if "$d/h" "$F/kws_input.npy" "$7" >"$d/out" 2>&1; then ok; else bad "$1: $(cat "$d/out")"; fi
  cat "$d/log" "$d/out"
}
one float "$F/kws.onnx" fast=64K,slow=1M float float 1e-5 "$F/kws_output.npy"
one int8 "$F/kws_int8.onnx" fast=16K,slow=1M float int8_t 0 "$F/kws_int8_output.npy"

# the float plan, by hand (above)
d=$T/float
h=$(grep -h -E '^#define m2_ARENA_(SIZE|fast_SIZE|slow_SIZE) ' "$d/m2.h" | tr '\n' ' ')
[ "$h" = "#define m2_ARENA_SIZE 113920 #define m2_ARENA_fast_SIZE 65536 #define m2_ARENA_slow_SIZE 48384 " ] &&
  ok || bad "float plan: $h"
# only the padded copy (12,096 floats) is in the slow region; the small buffers are fast
slow=$(grep -E '^    [a-z0-9_ ]+\*[a-z0-9]+ = .*arena_slow \+' "$d/m2.c" | sed 's/^ *[a-z0-9_]* \*\([a-z0-9]*\) =.*/\1/' | tr '\n' ' ')
[ "$slow" = "s38 " ] && grep -q 'float \*t35 = .*arena_fast' "$d/m2.c" &&
  grep -q 'float \*t34 = .*arena_fast' "$d/m2.c" && ok || bad "float placement: slow holds '$slow'"
grep -q '^region fast: 65536 of 65536 bytes (lower bound 65536)$' "$d/log" &&
  grep -q '^region slow: 48384 of 1048576 bytes (lower bound 48384)$' "$d/log" && ok ||
  bad "printed figures: $(cat "$d/log")"

# --json: the same figures, the weights as N.h says, the code as big as the file
"$K" compile "$F/kws.onnx" -o "$T/json" --name m2 --memory fast=64K,slow=1M --json >"$T/json.out" 2>&1
w=$(sed -n 's/^#define m2_WEIGHTS_SIZE \([0-9]*\)$/\1/p' "$T/json/m2.h")
c=$(wc -c <"$T/json/m2.c")
/usr/bin/python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
want = {"name": "m2", "target": "generic", "emit": "c", "kernels": 13,
        "weights_bytes": int(sys.argv[2]), "code_bytes": int(sys.argv[3]),
        "arena_bytes": 113920, "arena_lower_bound": 112384,
        "regions": [{"name": "fast", "capacity": 65536, "bytes": 65536, "lower_bound": 65536},
                    {"name": "slow", "capacity": 1048576, "bytes": 48384, "lower_bound": 48384}]}
bad = [k for k in want if j.get(k) != want[k]]
sys.exit("json: " + ", ".join("%s %r, want %r" % (k, j.get(k), want[k]) for k in bad) if bad else 0)
' "$T/json.out" "$w" "$c" && ok || bad "json: $(cat "$T/json.out")"

# a region too small: t31 (32,000 bytes) fits in neither 1K nor 20K
"$K" compile "$F/kws.onnx" -o "$T/small" --memory fast=1K,slow=20K >"$T/small.log" 2>&1
rc=$?
[ $rc = 1 ] && grep -q "kws.onnx: --memory: buffer 't[0-9]*' (value '[^']*') (32000 bytes, live in kernels [0-9]* to [0-9]*) fits in no memory region (bytes planned of the size, before it: fast [0-9]* of 1024, slow [0-9]* of 20480)" "$T/small.log" &&
  [ ! -e "$T/small/model.c" ] && ok || bad "too small (rc $rc): $(cat "$T/small.log")"

# bad syntax: usage errors (exit 2), nothing compiled
for m in fast 'fast=' '=4K' '1fast=4K' 'fast=4X' 'fast=0' 'a=1K,a=2K' 'a=1K,b=1K,c=1K,d=1K,e=1K' 'a=1K,'; do
  "$K" compile "$F/kws.onnx" -o "$T/syn" --memory "$m" >"$T/syn.log" 2>&1
  rc=$?
  [ $rc = 2 ] && grep -q "^kiln compile: --memory" "$T/syn.log" && ok || bad "--memory '$m' (rc $rc): $(cat "$T/syn.log")"
done
"$K" compile "$F/kws.onnx" -o "$T/obj" --emit obj --memory fast=64K >"$T/obj.log" 2>&1
[ $? = 2 ] && grep -q "memory applies to --emit c and h" "$T/obj.log" && ok || bad "obj: $(cat "$T/obj.log")"
finish
