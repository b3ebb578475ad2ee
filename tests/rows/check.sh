#!/bin/sh
# passes/rows.c (kn_sched.tblock, smrows): the default schedule of tests/rows' Transpose and
# Softmax row kernels; each other value a schedule file sets is used (dumped back), builds
# another kernel (the generated C differs), gives outputs bit for bit equal to the default's
# and within check-onnx's tolerance of numpy's (JIT and C, 1 and 2 threads); values the
# kernels cannot take are refused with exit code 1, naming the file and the kernel, and
# nothing is written; kiln tune tries the other values.
# usage: check.sh KILN SOURCE_DIR
KILN=$1
S=$2
D=$S/tests/rows
M=$D/model.onnx
. "$2/tests/lib.sh"

schedule_of "$M" "$T/own.sched"
grep -q "^kernel 0 'tr' Transpose .*tblock=16" "$T/own.sched" &&
  grep -q "^kernel 1 'sm_t' Softmax .*smrows=4" "$T/own.sched" &&
  grep -q "^kernel 2 'sm_x' Softmax .*smrows=4" "$T/own.sched" && ok ||
  bad "default schedule: $(cat "$T/own.sched")"
"$KILN" compile "$M" -o "$T/own" >/dev/null 2>&1 || bad "compile"
# cortex-m4: the Transpose's blocks; no Softmax row kernel (no f32 vectors)
schedule_of "$M" "$T/m4.sched" --target cortex-m4
grep -q "'tr' Transpose .*tblock=16" "$T/m4.sched" && ! grep -q smrows "$T/m4.sched" && ok ||
  bad "cortex-m4 schedule: $(cat "$T/m4.sched")"

for f in tblock=1 tblock=8 tblock=32 smrows=1 smrows=2 smrows=8; do
  k=${f%=*}
  sed "s/$k=[0-9]*/$f/" "$T/own.sched" >"$T/$f.sched"
  "$KILN" compile "$M" -o "$T/$f" --schedule "$T/$f.sched" --dump-schedule "$T/$f.back" \
    >"$T/log" 2>&1 || bad "compile with $f: $(cat "$T/log")"
  grep -v '^#' "$T/$f.sched" >"$T/a"
  grep -v '^#' "$T/$f.back" >"$T/b"
  diff "$T/a" "$T/b" >/dev/null && ok || bad "$f not used: $(diff "$T/a" "$T/b")"
  cmp -s "$T/own/model.c" "$T/$f/model.c" && bad "$f: the same generated C as the default" || ok
  same_bits_schedule "$M" "$T/$f.sched" "$f"
  check_jit_c "$D" "$f" --schedule "$T/$f.sched"
done

# values the kernels cannot take
for f in tblock=7 tblock=96 tblock=136 smrows=3 smrows=16; do
  k=${f%=*}
  sed "s/$k=[0-9]*/$f/" "$T/own.sched" >"$T/bad.sched"
  "$KILN" compile "$M" -o "$T/badout" --schedule "$T/bad.sched" >/dev/null 2>"$T/err"
  [ $? = 1 ] && grep -q "schedule '$T/bad.sched': kernel [0-9] '[a-z_]*' [A-Za-z]*: $f " "$T/err" &&
    [ ! -e "$T/badout/model.c" ] && ok || bad "$f accepted or not named: $(cat "$T/err")"
done
sed "s/smrows=[0-9]*/smrows=x/" "$T/own.sched" >"$T/bad.sched"
"$KILN" compile "$M" -o "$T/badout" --schedule "$T/bad.sched" >/dev/null 2>"$T/err"
[ $? = 1 ] && grep -q "bad.sched' line [0-9]*: bad value in 'smrows=x'" "$T/err" && ok ||
  bad "malformed smrows: $(cat "$T/err")"

# kiln tune offers the other blocks and rows a step (no assertion on which wins), and its
# file reads back
"$KILN" tune "$M" -o "$T/tuned.sched" --runs 3 --list >"$T/tune.txt" 2>&1 || bad "tune: $(cat "$T/tune.txt")"
for c in "tblock 16->1" "tblock 16->8" "tblock 16->32" "smrows 4->1" "smrows 4->2" "smrows 4->8"; do
  grep -q "round [0-9]*: $c:" "$T/tune.txt" && ok || bad "tune did not try $c: $(cat "$T/tune.txt")"
done
"$KILN" compile "$M" -o "$T/tuned" --schedule "$T/tuned.sched" >"$T/log" 2>&1 && ok ||
  bad "tuned schedule refused: $(cat "$T/log")"
finish
