#!/bin/sh
# CTest "memory_regions": kiln compile --memory (several arena regions, fastest first).
# DS-CNN (examples/firmware) in float and int8, generic C on the host compiler, compiled
# with one arena, with two regions, and with two regions and --arena-in-place-io: the
# region builds' outputs equal the one-arena output byte for byte and the independent
# reference (torch within 1e-5 * max |ref|; the int8 model's numpy reference exactly),
# from regions allocated apart and filled with garbage (harness.c). The int8 plan with
# fast=16K is derived by hand, whatever the order buffers are offered in: every buffer
# but the four 48,384-byte f32 scratch rows (each alone over 16K) fits in fast at once,
# since what is live together never exceeds 16,000 bytes (two 8,000-byte activations;
# the 8-bit convolutions store their outputs as words, with no scratch row), the fast
# region's lower bound, which its plan reaches; slow holds the four scratches, one live at a time (48,384). Errors: a region too
# small (exit 1, naming the model, the buffer and the sizes) and bad --memory syntax
# (usage errors, exit 2). --json gives the same figures, the traffic shares summing to 1.
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
  if ! $CC -std=c11 -O2 -I"$d" -I"$S/tests" -DTIN=$4 -DTOUT=$5 -DTOL=$6 "$S/tests/memory_regions/harness.c" \
    "$d/m.c" "$d/m2.c" "$d/mr.c" -lm -o "$d/h" >>"$d/log" 2>&1; then
    bad "$1: build: $(tail -5 "$d/log")"
    return
  fi
  if "$d/h" "$F/kws_input.npy" "$7" >"$d/out" 2>&1; then ok; else bad "$1: $(cat "$d/out")"; fi
  cat "$d/log" "$d/out"
}
one float "$F/kws.onnx" fast=64K,slow=1M float float 1e-5 "$F/kws_output.npy"
one int8 "$F/kws_int8.onnx" fast=16K,slow=1M float int8_t 0 "$F/kws_int8_output.npy"

# the int8 plan, by hand (above)
d=$T/int8
h=$(grep -h -E '^#define m2_ARENA_(SIZE|fast_SIZE|slow_SIZE|fast_LOWER_BOUND) ' "$d/m2.h" | tr '\n' ' ')
[ "$h" = "#define m2_ARENA_SIZE 64384 #define m2_ARENA_fast_SIZE 16000 #define m2_ARENA_fast_LOWER_BOUND 16000 #define m2_ARENA_slow_SIZE 48384 " ] &&
  ok || bad "int8 plan: $h"
slow=$(grep -E '^    [a-z0-9_ ]+\*[a-z0-9]+ = .*arena_slow \+' "$d/m2.c" | sed 's/^ *[a-z0-9_]* \*\([a-z0-9]*\) =.*/\1/' | tr '\n' ' ')
nfast=$(grep -c -E '^    [a-z0-9_ ]+\*[a-z0-9]+ = .*arena_fast \+' "$d/m2.c")
[ "$slow" = "s126 s130 s134 s138 " ] && [ "$(grep -c '^    float \*s1[23][0-9] = .*arena_slow + 0);' "$d/m2.c")" = 4 ] &&
  [ "$nfast" -gt 10 ] && ok || bad "int8 placement: slow holds '$slow', fast $nfast buffers"
grep -q '^region fast: 16000 of 16384 bytes (lower bound 16000), [0-9.]*% of the arena.s traffic$' "$d/log" &&
  grep -q '^region slow: 48384 of 1048576 bytes (lower bound 48384), [0-9.]*% of the arena.s traffic$' "$d/log" && ok ||
  bad "printed figures: $(cat "$d/log")"

# --json: the same figures, the weights as N.h says, the code as big as the file
"$K" compile "$F/kws_int8.onnx" -o "$T/json" --name m2 --memory fast=16K,slow=1M --json >"$T/json.out" 2>&1
w=$(sed -n 's/^#define m2_WEIGHTS_SIZE \([0-9]*\)$/\1/p' "$T/json/m2.h")
c=$(wc -c <"$T/json/m2.c")
/usr/bin/python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
share = [r.pop("traffic_share", None) for r in j.get("regions", [])]
want = {"name": "m2", "target": "generic", "emit": "c", "kernels": 13,
        "weights_bytes": int(sys.argv[2]), "code_bytes": int(sys.argv[3]),
        "arena_bytes": 64384, "arena_lower_bound": 64384,
        "regions": [{"name": "fast", "capacity": 16384, "bytes": 16000, "lower_bound": 16000},
                    {"name": "slow", "capacity": 1048576, "bytes": 48384, "lower_bound": 48384}]}
bad = ["%s %r, want %r" % (k, j.get(k), want[k]) for k in want if j.get(k) != want[k]]
if len(share) != 2 or None in share or abs(sum(share) - 1) > 2e-4 or min(share) <= 0:
    bad.append("traffic shares %r" % share)
sys.exit("json: " + ", ".join(bad) if bad else 0)
' "$T/json.out" "$w" "$c" && ok || bad "json: $(cat "$T/json.out")"

# the traffic estimate, by hand: ONNX's Add node test with broadcasting (x 3x4x5 + y 5,
# f32), inputs and output in the arena: x read once per element (240 bytes), the sum
# written once (240), y (20 bytes, 64 with alignment) read once per output (240): y has
# the most traffic per byte and goes first into a=320, then one of x and the sum (256:
# 64 + 256 = 320, all three live in the one kernel), the other to b (256). Shares:
# a (240 + 240) / 720 = 66.7%, b 33.3%.
A=/usr/share/libonnx-testdata/data/node/test_add_bcast/model.onnx
if [ -f "$A" ]; then
  "$K" compile "$A" -o "$T/add" --name a --emit h --arena-in-place-io --memory a=320,b=1K \
    >"$T/add.log" 2>&1
  grep -q "^region a: 320 of 320 bytes (lower bound 320), 66.7% of the arena's traffic$" "$T/add.log" &&
    grep -q "^region b: 256 of 1024 bytes (lower bound 256), 33.3% of the arena's traffic$" "$T/add.log" &&
    grep -q "^#define a_INPUT_1_REGION 0 " "$T/add/a.h" && ok || bad "add traffic: $(cat "$T/add.log")"
fi

# a region too small: the 32,000-byte activations and the 48,384-byte padded copy fit in
# neither 1K nor 20K; the message names a buffer bigger than 20K and both regions' figures
"$K" compile "$F/kws.onnx" -o "$T/small" --memory fast=1K,slow=20K >"$T/small.log" 2>&1
rc=$?
n=$(sed -n "s/^kiln: .*kws.onnx: --memory: buffer '[a-z0-9]*'.* (\([0-9]*\) bytes, live in kernels [0-9]* to [0-9]*) fits in no memory region (bytes planned of the size, before it: fast [0-9]* of 1024, slow [0-9]* of 20480)$/\1/p" "$T/small.log")
[ $rc = 1 ] && [ -n "$n" ] && [ "$n" -gt 20480 ] && [ ! -e "$T/small/model.c" ] && ok ||
  bad "too small (rc $rc): $(cat "$T/small.log")"

# bad syntax: usage errors (exit 2), nothing compiled
for m in fast 'fast=' '=4K' '1fast=4K' 'fast=4X' 'fast=0' 'a=1K,a=2K' 'a=1K,b=1K,c=1K,d=1K,e=1K' 'a=1K,'; do
  "$K" compile "$F/kws.onnx" -o "$T/syn" --memory "$m" >"$T/syn.log" 2>&1
  rc=$?
  [ $rc = 2 ] && grep -q "^kiln compile: --memory" "$T/syn.log" && ok || bad "--memory '$m' (rc $rc): $(cat "$T/syn.log")"
done
"$K" compile "$F/kws.onnx" -o "$T/obj" --emit obj --memory fast=64K >"$T/obj.log" 2>&1
[ $? = 2 ] && grep -q "memory applies to --emit c and h" "$T/obj.log" && ok || bad "obj: $(cat "$T/obj.log")"
finish
