#!/bin/sh
# The libFuzzer regressions through the kiln command line (runs in every build, also
# without clang): each model of tests/fuzz/regressions/fuzz_{passes,codegen} is
# compiled to C, to an LLVM object for x86-64-avx2, x86-64-zen4 (512-bit vectors on a
# 256-bit FP datapath: the fp_split schedule rules) and cortex-m4, and to OpenCL C.
# kiln must accept it (exit 0) or refuse it with a message (exit 1): never crash or
# report an internal error. The fuzz_passes models also run through the interpreter
# (kiln run --backend interp --random 1), but for the oom-* ones.
# usage: regressions.sh KILN DIR
kiln=$1
dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
pass=0
# outcome STATUS WHAT: counts a check that held (STATUS 0) or failed (printed as WHAT, with
# the log's first lines), then clears the output folder
outcome() {
  if [ "$1" = 0 ]; then
    pass=$((pass + 1))
  else
    echo "FAIL $2"
    sed 's/^/  /' "$tmp/log" | head -5
    fail=$((fail + 1))
  fi
  rm -rf "$tmp/out"
}
# verdict RC WHAT: an exit code of 0 or 1 (accepted, or refused with a message) holds,
# anything else (a crash, an internal error) fails
verdict() {
  [ "$1" -le 1 ]
  outcome $? "$2: exit $1"
}
for f in "$dir"/fuzz_passes/*.onnx "$dir"/fuzz_codegen/*.onnx; do
  [ -f "$f" ] || continue
  for how in "--emit c" "--emit obj --target x86-64-avx2" "--emit obj --target x86-64-zen4" \
             "--emit obj --target cortex-m4" "--emit opencl"; do
    # shellcheck disable=SC2086
    "$kiln" compile "$f" -o "$tmp/out" $how >"$tmp/log" 2>&1
    verdict $? "$(basename "$f") ($how)"
  done
done
# the fuzz_passes inputs through the reference interpreter too (kiln run, random inputs):
# several were too slow there (their regression is their time, under the CTest timeout);
# oom-* ones are left out: kiln run has no memory limit, fuzz_passes runs them under one
for f in "$dir"/fuzz_passes/*.onnx; do
  case $(basename "$f") in oom-*) continue ;; esac
  "$kiln" run "$f" --backend interp --random 1 --output-dir "$tmp/out" >"$tmp/log" 2>&1
  verdict $? "$(basename "$f") (run --backend interp)"
done
# a memory plan past what a plan may hold (2^60 bytes; each of its two tensors takes 4.6e18)
# is refused, not written (tests/malformed: plan_arena_4gib, past a microcontroller's 4 GiB)
"$kiln" compile "$dir/fuzz_codegen/ubsan-patch-live-bytes-overflow.onnx" --target cortex-m4 \
  -o "$tmp/out" >"$tmp/log" 2>&1
rc=$?
[ $rc = 1 ] && grep -q "the memory plan would pass 1152921504606846975 bytes" "$tmp/log" &&
  [ ! -e "$tmp/out/model.c" ]
outcome $? "ubsan-patch-live-bytes-overflow.onnx (cortex-m4): exit $rc, not the plan's refusal"
# the patch pass's estimates past int64 (regressions/patch_cost: 2^54 multiply-adds
# recomputed in every band; not in fuzz_codegen's corpus, 26 s a compile under ASan)
# saturate: the bands count as too costly, the model compiles unbanded
"$kiln" compile "$dir/patch_cost/ubsan-patch-cost-overflow.onnx" --target cortex-m4 \
  --dump-after patch -o "$tmp/out" >"$tmp/log" 2>&1
rc=$?
[ $rc = 0 ] && grep -q "QLinearConv" "$tmp/log" && ! grep -q "band" "$tmp/log"
outcome $? "ubsan-patch-cost-overflow.onnx (cortex-m4): exit $rc, or banded"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
