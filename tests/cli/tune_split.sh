#!/bin/sh
# kiln tune tries split's legal alternative on an integer stem (docs/tuning.md, "split"):
# on this CPU target the stem takes merged words (split=5, passes/tile.c) and the
# candidate is the channel words a tap (split=1, alone), at one thread and at two. Kept
# (the test hook KILN_TUNE_FAVOUR makes it win whatever the timing), the file holds
# split=1, which reads back as the channel words (the compiled record has no split), the
# same C twice and the reference outputs. Nothing here is about speed.
# The model: tests/quant/models/stem_words_c3 (make_stem_words.py: ResNet's 7x7 stem
# shape on 3 channels, QLinearConv, outputs from the integer reference).
# usage: tune_split.sh KILN SOURCE_DIR
KILN=$1
S=$2
M=$S/tests/quant/models/stem_words_c3
. "$2/tests/lib.sh"

# the baseline is the merged words here (a CPU with a four-part dot), else nothing to test
"$KILN" compile "$M/model.onnx" --target native --emit c -o "$T/d" --dump-schedule "$T/d.sched" \
  >/dev/null || bad "compile"
if ! grep -q "^kernel 0 'stem' QLinearConv .* split=5" "$T/d.sched"; then
  echo "skipped: this CPU's stem does not take merged words: $(grep '^kernel' "$T/d.sched")"
  finish
  exit 0
fi
ok
# tried at one thread and at two, listed with its time
for n in 1 2; do
  "$KILN" tune "$M/model.onnx" --runs 1 --threads $n --list -o "$T/l$n.sched" >"$T/l$n.txt" 2>&1 &&
    grep -q "^ *round [0-9]: split 5->1: [0-9.]* us, baseline [0-9.]* us$" "$T/l$n.txt" && ok ||
    bad "split not tried at $n threads: $(cat "$T/l$n.txt")"
done
# kept: the file says split=1, and the compile reading it takes the channel words
KILN_TUNE_FAVOUR=split "$KILN" tune "$M/model.onnx" --runs 2 --threads 2 -o "$T/s.sched" \
  >"$T/out.txt" 2>&1 && grep -q "^ *0 'stem' QLinearConv .* split 5->1$" "$T/out.txt" && ok ||
  bad "split change not kept: $(cat "$T/out.txt")"
grep -q "^kernel 0 'stem' QLinearConv .* split=1$" "$T/s.sched" && ok ||
  bad "no split=1 in the file: $(cat "$T/s.sched")"
for d in c1 c2; do
  "$KILN" compile "$M/model.onnx" --target native --emit c -o "$T/$d" --schedule "$T/s.sched" \
    --dump-schedule "$T/$d.sched" >/dev/null || bad "compile --schedule ($d)"
done
grep -q "^kernel 0 'stem' QLinearConv " "$T/c1.sched" && ! grep -q "split=" "$T/c1.sched" && ok ||
  bad "the file's split not applied: $(cat "$T/c1.sched")"
cmp -s "$T/c1/model.c" "$T/c2/model.c" && ok || bad "two compiles with one schedule differ"
cmp -s "$T/c1/model.c" "$T/d/model.c" && bad "the file's split changed nothing" || ok
"$KILN" check-onnx "$M" --backend llvm --schedule "$T/s.sched" >"$T/check.txt" 2>&1 &&
  tail -1 "$T/check.txt" | grep -q "^1 passed, 0 failed" && ok ||
  bad "check-onnx --schedule: $(cat "$T/check.txt")"
finish
