#!/bin/sh
# kiln tune: the schedule file it writes is read back by --schedule (kiln run, check-onnx)
# and the code compiled with it matches torch's outputs within check-onnx's tolerance;
# compiling twice with the file gives the same C, and dumping the schedule again gives the
# file's records; a missing model or an unwritable -o exits 1 naming the file and leaves
# no file behind. Nothing here is about speed (the choice depends on the machine).
# The model: tests/winograd's 3x3 convolutions (Winograd tiles, register tiles and padding
# choices all have candidates).
# usage: tune.sh KILN SOURCE_DIR
KILN=$1
S=$2
W=$S/tests/winograd
. "$2/tests/lib.sh"

"$KILN" tune "$W/model.onnx" --runs 2 -o "$T/w.sched" >"$T/out.txt" 2>"$T/err.txt" &&
  [ -s "$T/w.sched" ] && grep -q "^wrote $T/w.sched$" "$T/out.txt" && ok ||
  bad "tune: $(cat "$T/out.txt" "$T/err.txt")"
grep -q "^kernel 0 'c1' Conv .*lanes=" "$T/w.sched" && ok || bad "no record of c1: $(cat "$T/w.sched")"
grep -q "whole model (median of 10 runs each, interleaved, thread CPU time): default [0-9.]* ms, tuned [0-9.]* ms" \
  "$T/out.txt" && ok || bad "no whole-model line: $(cat "$T/out.txt")"
[ "$(ls "$T" | grep -c tmp)" = 0 ] && ok || bad "temporary files left: $(ls "$T")"
# read back: kiln run, and the outputs against torch's (tests/winograd/make_winograd.py)
"$KILN" run "$W/model.onnx" --backend llvm --schedule "$T/w.sched" --random 1 >/dev/null &&
  ok || bad "run --schedule"
"$KILN" check-onnx "$W" --backend llvm --schedule "$T/w.sched" >"$T/check.txt" 2>&1 &&
  tail -1 "$T/check.txt" | grep -q "^1 passed, 0 failed" && ok ||
  bad "check-onnx --schedule: $(cat "$T/check.txt")"
# deterministic for a given schedule file: the same C twice; the dump gives the file back
# (less wino=1, which the compiled record of a direct convolution leaves out)
for d in c1 c2; do
  "$KILN" compile "$W/model.onnx" --target native --emit c -o "$T/$d" --schedule "$T/w.sched" \
    --dump-schedule "$T/$d.sched" >/dev/null || bad "compile --schedule ($d)"
done
cmp -s "$T/c1/model.c" "$T/c2/model.c" && ok || bad "two compiles with one schedule differ"
grep -v '^#' "$T/w.sched" | sed 's/ wino=1$//' >"$T/want.txt"
grep -v '^#' "$T/c1.sched" >"$T/got.txt"
diff "$T/want.txt" "$T/got.txt" >/dev/null && ok || bad "schedule not applied: $(diff "$T/want.txt" "$T/got.txt")"
# bad input: exit 1, the file named, nothing written
"$KILN" tune "$T/missing.onnx" -o "$T/m.sched" 2>"$T/err1.txt" >/dev/null
[ $? = 1 ] && grep -q "missing.onnx" "$T/err1.txt" && [ ! -e "$T/m.sched" ] &&
  [ "$(ls "$T" | grep -c "^m.sched")" = 0 ] && ok || bad "missing model: $(cat "$T/err1.txt")"
"$KILN" tune "$W/model.onnx" -o "$T/nodir/x.sched" 2>"$T/err2.txt" >/dev/null
[ $? = 1 ] && grep -q "cannot write '$T/nodir/x.sched'" "$T/err2.txt" && [ ! -e "$T/nodir" ] && ok ||
  bad "unwritable -o: $(cat "$T/err2.txt")"
# a symbolic dimension: cli_inputs' one line, exit 1, no file
"$KILN" tune "$S/examples/digits/digits.onnx" -o "$T/s.sched" 2>"$T/err3.txt" >/dev/null
[ $? = 1 ] && [ "$(wc -l <"$T/err3.txt")" = 1 ] && grep -q "symbolic dimension 'batch'" "$T/err3.txt" &&
  [ "$(ls "$T" | grep -c "^s.sched")" = 0 ] && ok || bad "symbolic input: $(cat "$T/err3.txt")"
"$KILN" tune "$W/model.onnx" 2>/dev/null >/dev/null
[ $? = 2 ] && ok || bad "no -o: not a usage error"
finish
