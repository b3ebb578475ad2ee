#!/bin/sh
# kiln tune survives candidates the passes refuse (docs/tuning.md, "Refused candidates"):
# with the test hook KILN_TUNE_REFUSE (tools/cmd_tune.c) a compile fails where a Conv's pad,
# or any kernel's wino, differs from the baseline's: the first names the kernel's node, so
# only that kernel's candidate is dropped and its round measured again without it; the
# second names none, so its whole round is dropped. The search goes on, reports each
# refused candidate, and writes a file holding none of the refused values, which reads
# back and matches torch's outputs. Nothing here is about speed.
# The model: tests/winograd (c3a, c3b and c7 Winograd; c2 direct; c1, c4, c5, c6, c6r direct with a
# padded copy, pad=2: candidates wino in rounds 1-2; for the five direct ones the Winograd
# tiles (wino 0->2, 0->4, alone: refused, their pad is 0) in rounds 4-6 and pad 2->1 in rounds 6
# (c1, c4, c5) and 7 (c6, c6r)). Refused: rounds 1 and 2 whole (9 kernels x 2), the ten
# Winograd and the five pad candidates, 33; every other round keeps a candidate.
# usage: tune_refuse.sh KILN SOURCE_DIR
KILN=$1
S=$2
W=$S/tests/winograd
. "$2/tests/lib.sh"

KILN_TUNE_REFUSE='Conv:pad,*:wino' "$KILN" tune "$W/model.onnx" --runs 1 -o "$T/r.sched" \
  >"$T/out.txt" 2>"$T/err.txt" && grep -q "^wrote $T/r.sched$" "$T/out.txt" && ok ||
  bad "tune with refusals: $(cat "$T/out.txt" "$T/err.txt")"
# rounds 1 and 2 lose every candidate: six of eight measured
grep -q "6 of 8 candidate rounds" "$T/out.txt" && ok || bad "rounds: $(head -1 "$T/out.txt")"
# named: c1's, c4's and c5's own candidates in round 6, and c6's and c6r's in round 7, one at a time
for k in c1 c4 c5 c6 c6r; do
  grep -q "refused pad 2->1 (round [67]: node '$k' (Conv): pad=1 refused" "$T/out.txt" &&
    grep -q "refused wino 0->2 (round [45]: node '$k' (Conv): pad=0 refused" "$T/out.txt" && ok ||
    bad "$k's pad or wino candidate not reported refused: $(cat "$T/out.txt")"
done
# unnamed: every candidate of rounds 1 and 2, whatever its field
grep -q "refused tile_rows 5->4 (round 1, the whole round: " "$T/out.txt" &&
  grep -q "refused wino 4->2 (round 2, the whole round: " "$T/out.txt" && ok ||
  bad "whole rounds not reported refused: $(cat "$T/out.txt")"
grep -q "^33 candidates refused: dropped, not written$" "$T/out.txt" && ok ||
  bad "refused count: $(cat "$T/out.txt")"
# the others were measured: c6's row has its times (round 3's tile_vecs)
grep -q "^ *6 'c6' Conv *[0-9.]* *[0-9.]* " "$T/out.txt" && ok || bad "c6 not measured: $(cat "$T/out.txt")"
# no refused value in the file: the baseline's pad and wino where it had them
for k in c1 c4 c5 c6 c6r; do
  grep -q "^kernel [0-9] '$k' Conv .* pad=2" "$T/r.sched" && ok || bad "$k: $(cat "$T/r.sched")"
done
[ "$(grep -c ' wino=2 ' "$T/r.sched")" = 2 ] && grep -q "^kernel 8 'c7' Conv .* wino=4 " "$T/r.sched" &&
  ok || bad "wino changed: $(cat "$T/r.sched")"
[ "$(ls "$T" | grep -c tmp)" = 0 ] && ok || bad "temporary files left: $(ls "$T")"
"$KILN" check-onnx "$W" --backend llvm --schedule "$T/r.sched" >"$T/check.txt" 2>&1 &&
  tail -1 "$T/check.txt" | grep -q "^1 passed, 0 failed" && ok ||
  bad "check-onnx --schedule: $(cat "$T/check.txt")"
finish
