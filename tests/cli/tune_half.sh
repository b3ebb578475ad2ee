#!/bin/sh
# kiln tune tries half-width tiles on float pointwise convolutions and matrix products
# (docs/tuning.md): vectors of half the target's lanes, 2 nv - 1, 2 nv and 2 nv + 1 of
# them, rows kept or cut so that rows x vectors + vectors + 3 fit the 32 registers, and
# 4 x 5 from a tile of one vector. The
# model is tests/pointwise (torch's outputs) on x86-64-zen4 (16 lanes, 512-bit vectors run
# as two halves): pw1's tile is 8 x 2 of 16 lanes, pw9's 7 x 3, pw8's 7 x 1; conv7 (3x3)
# gets none. Kept through the test hook KILN_TUNE_FAVOUR=lanes (whatever the timing), the
# half-width tiles are written, read back, compile to the same C twice and pass the
# reference outputs; so do all three widths on every tile at once, through the JIT and
# the C at 1 and 2 threads. Nothing here is about speed.
# usage: tune_half.sh KILN SOURCE_DIR
KILN=$1
S=$2
M=$S/tests/pointwise
TG="--target x86-64-zen4"
. "$2/tests/lib.sh"

"$KILN" compile "$M/model.onnx" $TG --emit c -o "$T/d" --dump-schedule "$T/d.sched" >/dev/null ||
  bad "compile"
"$KILN" tune "$M/model.onnx" $TG --runs 1 --list -o "$T/l.sched" >"$T/l.txt" 2>"$T/err.txt"
rc=$?
if [ $rc = 2 ] && grep -q "cannot run it" "$T/err.txt"; then
  echo "skipped: this CPU does not run x86-64-zen4: $(cat "$T/err.txt")"
  finish
  exit 0
fi
[ $rc = 0 ] && ok || bad "tune --list: $(cat "$T/l.txt" "$T/err.txt")"
grep -q "^kernel 0 'pw1' Conv tile_rows=8 tile_vecs=2 lanes=16 " "$T/d.sched" &&
  grep -q "^kernel 8 'pw9' Conv tile_rows=7 tile_vecs=3 lanes=16" "$T/d.sched" &&
  grep -q "^kernel 7 'pw8' Conv tile_rows=7 tile_vecs=1 lanes=16" "$T/d.sched" && ok ||
  bad "the baseline tiles moved (update this test): $(cat "$T/d.sched")"
# listed: kernel K's candidates are the lines under its row
cands() { awk -v k="$1" '$1 == k && $2 ~ /^'"'"'/ {on=1; next} $1 ~ /^[0-9]+$/ {on=0} on' "$T/l.txt"; }
for c in "tile_vecs 2->3, lanes 16->8" "tile_rows 8->6, tile_vecs 2->4, lanes 16->8" \
  "tile_rows 8->4, tile_vecs 2->5, lanes 16->8"; do
  cands 0 | grep -q "^ *round [0-9]*: $c: [0-9.]* us, baseline [0-9.]* us$" && ok ||
    bad "pw1: $c not tried: $(cat "$T/l.txt")"
done
for c in "tile_rows 7->4, tile_vecs 3->5, lanes 16->8" "tile_rows 7->3, tile_vecs 3->6, lanes 16->8" \
  "tile_rows 7->3, tile_vecs 3->7, lanes 16->8"; do
  cands 8 | grep -q "^ *round [0-9]*: $c: " && ok || bad "pw9: $c not tried: $(cat "$T/l.txt")"
done
# one vector fewer than two halves of one: 1 of 8 lanes; and from one vector the widest
# tile of 4 rows (4 x 5), which 2 nv + 1 does not reach; none past 8 vectors. pw8 has 10
# output channels: 5 (or 3) vectors of 8 lanes leave it untiled, so the schedule reader
# refuses their lanes (docs/internals.md, "Schedule files"), and the tuner drops them
cands 7 | grep -q "^ *round [0-9]*: lanes 16->8: " && ok || bad "pw8: lanes 16->8 not tried: $(cat "$T/l.txt")"
cands 7 | grep -q "^ *refused tile_rows 7->4, tile_vecs 1->5, lanes 16->8 (round [0-9]*: node 'pw8' (Conv): .*lanes=8 not taken" &&
  ok || bad "pw8: 4 x 5 x 8 not refused: $(cat "$T/l.txt")"
[ "$(cands 7 | grep -c "lanes 16->8")" = 4 ] && ok || bad "pw8: not 4 half-width candidates"
[ "$(cands 8 | grep -c "lanes 16->8")" = 3 ] && ok || bad "pw9: not 3 half-width candidates"
cands 6 | grep -q "lanes" && bad "conv7 (3x3) got a half-width candidate: $(cat "$T/l.txt")" || ok

# kept (the test hook), written, read back
KILN_TUNE_FAVOUR=lanes "$KILN" tune "$M/model.onnx" $TG --runs 1 -o "$T/h.sched" >"$T/h.txt" 2>&1 &&
  grep -q "^kernel 0 'pw1' Conv tile_rows=8 tile_vecs=3 lanes=8" "$T/h.sched" &&
  grep -q "^kernel 8 'pw9' Conv tile_rows=4 tile_vecs=5 lanes=8" "$T/h.sched" &&
  grep -q "^kernel 6 'conv7' Conv .*lanes=16" "$T/h.sched" && ok ||
  bad "half-width tiles not kept: $(cat "$T/h.txt" "$T/h.sched")"
schedule_twice "$M/model.onnx" "$T/h.sched" h $TG
cmp -s "$T/h1/model.c" "$T/d/model.c" && bad "h.sched changed nothing" || ok
grep -v '^#' "$T/h.sched" >"$T/want.txt"
grep -v '^#' "$T/h1.sched" >"$T/got.txt"
diff "$T/want.txt" "$T/got.txt" >/dev/null && ok || bad "h.sched not applied: $(diff "$T/want.txt" "$T/got.txt")"
export KILN_TEST_TARGET=x86-64-zen4
check_jit_c "$M" "h.sched" --schedule "$T/h.sched"
# every float tile of 16 lanes at once in each of the three half widths (3x3 included)
for i in -1 0 1; do
  awk -v i=$i '/^kernel/ {
      l = 0; nv = 0; r = 0
      for (f = 5; f <= NF; f++) {
        split($f, a, "=")
        if (a[1] == "lanes") l = a[2]
        if (a[1] == "tile_vecs") nv = a[2]
        if (a[1] == "tile_rows") r = a[2]
      }
      n = 2 * nv + i; fit = int((32 - n - 3) / n)
      if (l != 16 || nv < 1 || r < 1 || n < 1 || n > 8 || fit < 1) next
      if ($3 == "\x27pw8\x27" && n > 2) next # 10 channels: 3 vectors of 8 leave it untiled
      if (fit < r) r = fit
      s = $0
      sub(/tile_rows=[0-9]+/, "tile_rows=" r, s); sub(/tile_vecs=[0-9]+/, "tile_vecs=" n, s)
      sub(/lanes=16/, "lanes=8", s)
      print s
    }' "$T/d.sched" >"$T/v$i.sched"
  want=12
  [ $i = 1 ] && want=11
  [ "$(wc -l <"$T/v$i.sched")" = $want ] && ok || bad "variant $i: not $want tiles: $(cat "$T/v$i.sched")"
  check_jit_c "$M" "every tile in $i half vectors" --schedule "$T/v$i.sched"
done
finish
