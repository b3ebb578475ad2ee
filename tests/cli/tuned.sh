#!/bin/sh
# The tuning table (passes/tuned.c, docs/tuning.md "Tuning tables"): an entry keyed by a
# CPU and a kernel's workload gives that kernel its tile in every model that has it, on
# that CPU's targets only; a --schedule line wins over it; leaving pass 'tuned' out of
# --passes switches it off; an entry the kernel cannot take is ignored; a malformed table
# is refused naming its line; outputs pass torch's with and without the table; and kiln
# tune --table-out writes entries that read back as the tuned tiles. Models: tests/tuned/a
# and b (two graphs sharing a 1x1 convolution of 40 -> 80 channels over 14x14, written
# by hand below as its key) and tests/pointwise (for kiln tune). Nothing here is about speed.
# usage: tuned.sh KILN SOURCE_DIR
KILN=$1
S=$2
A=$S/tests/tuned/a
B=$S/tests/tuned/b
ZEN="--target x86-64-zen4"
. "$2/tests/lib.sh"

KEY="conv f32 x=1x40x14x14 y=80x14x14 k=1x1 s=1x1 d=1x1 p=0,0,0,0 g=1 nchw"
printf '# a test table\nznver4   %s  :  tile_rows=4 tile_vecs=5 lanes=8   # the shared shape\n\n' \
  "$KEY" >"$T/t.tab"
field() { # field SCHED KERNEL NAME: the value of NAME on kernel KERNEL's line, or 0
  awk -v k="$2" -v f="$3" '$1 == "kernel" && $2 == k {
      for (i = 5; i <= NF; i++) { split($i, a, "="); if (a[1] == f) v = a[2] } }
    END { print v ? v : 0 }' "$1"
}
tile() { echo "$(field "$1" "$2" tile_rows)x$(field "$1" "$2" tile_vecs)x$(field "$1" "$2" lanes)"; }

# the keys pass 'tuned' gives (KILN_TUNED_TRACE) are the hand-written one for both models
for m in "$A" "$B"; do
  KILN_TUNED_TRACE=1 "$KILN" compile "$m/model.onnx" $ZEN -o "$T/tr" 2>"$T/trace" >/dev/null ||
    bad "compile $m: $(cat "$T/trace")"
  grep -q "^kiln tuned: kernel [0-9]* (node '\(pw80\|project\)' (Conv)): znver4 $KEY :$" "$T/trace" &&
    ok || bad "$m: the shared kernel's key is not '$KEY': $(cat "$T/trace")"
done
# a: kernel 0 is pw80, kernel 1 pw24; b: kernel 0 expand, kernel 1 project (the shared shape)
for mk in "$A 0 1" "$B 1 0"; do
  set -- $mk
  m=$1 k=$2 other=$3
  schedule_of "$m/model.onnx" "$T/d.sched" $ZEN
  schedule_of "$m/model.onnx" "$T/t.sched" $ZEN --tuning "$T/t.tab"
  [ "$(tile "$T/t.sched" $k)" = 4x5x8 ] && ok ||
    bad "$m: kernel $k did not get the entry's 4x5x8: $(cat "$T/t.sched")"
  [ "$(tile "$T/d.sched" $k)" != 4x5x8 ] && ok || bad "$m: 4x5x8 without the table"
  [ "$(tile "$T/t.sched" $other)" = "$(tile "$T/d.sched" $other)" ] && ok ||
    bad "$m: the table moved kernel $other: $(cat "$T/d.sched" "$T/t.sched")"
  # not on another CPU's target: x86-64-avx512 (skylake-avx512) compiles to the same C
  schedule_of "$m/model.onnx" "$T/x.sched" --target x86-64-avx512 --tuning "$T/t.tab"
  [ "$(tile "$T/x.sched" $k)" != 4x5x8 ] && ok || bad "$m: the znver4 entry applied on avx512"
  for tb in "" "--tuning $T/t.tab"; do
    "$KILN" compile "$m/model.onnx" --target x86-64-avx512 --emit c -o "$T/x${tb:+t}" $tb \
      >"$T/log" 2>&1 || bad "compile avx512 $tb: $(cat "$T/log")"
  done
  cmp -s "$T/x/model.c" "$T/xt/model.c" && ok || bad "$m: the table changed avx512's C"
  # switched off: the default pipeline without 'tuned'
  P=$("$KILN" inspect --list-passes 2>/dev/null | sed -n 's/^default pipeline (-O1 to -O3): //p')
  case "$P" in *,tuned,tile,*) ok ;; *) bad "no default pipeline with tuned: $P" ;; esac
  NOTUNED=$(echo "$P" | sed 's/,tuned,/,/')
  schedule_of "$m/model.onnx" "$T/o.sched" $ZEN --tuning "$T/t.tab" --passes "$NOTUNED"
  [ "$(tile "$T/o.sched" $k)" = "$(tile "$T/d.sched" $k)" ] && ok ||
    bad "$m: --passes without tuned still applied the table: $(cat "$T/o.sched")"
  # a --schedule line for the kernel wins over the table
  grep "^kernel $k " "$T/d.sched" >"$T/line.sched"
  schedule_of "$m/model.onnx" "$T/s.sched" $ZEN --tuning "$T/t.tab" --schedule "$T/line.sched"
  [ "$(tile "$T/s.sched" $k)" = "$(tile "$T/d.sched" $k)" ] && ok ||
    bad "$m: the table won over --schedule: $(cat "$T/s.sched")"
  # outputs: torch's, with and without the table, JIT and C at 1 and 2 threads
  KILN_TEST_TARGET=x86-64-zen4 check_jit_c "$m" "$m with the table" --tuning "$T/t.tab"
  KILN_TEST_TARGET=x86-64-zen4 check_jit_c "$m" "$m without it"
done

# entries the kernel cannot take are ignored (the kernel's own tile), not refused
for bad_entry in "tile_rows=4 tile_vecs=5 lanes=32" "tile_rows=4 tile_vecs=5 lanes=6" \
  "tile_rows=17 tile_vecs=1 lanes=8" "tile_rows=4 tile_vecs=9 lanes=8" \
  "tile_rows=8 tile_vecs=5 lanes=8" "tile_rows=4 tile_vecs=5 lanes=8 pad=4" \
  "tile_rows=4 tile_vecs=5 lanes=8 mc=192" "tile_rows=4 tile_vecs=5 lanes=8 span=3"; do
  echo "znver4 $KEY : $bad_entry" >"$T/bad.tab"
  schedule_of "$A/model.onnx" "$T/d.sched" $ZEN
  schedule_of "$A/model.onnx" "$T/b.sched" $ZEN --tuning "$T/bad.tab"
  cmp -s "$T/d.sched" "$T/b.sched" && ok || bad "'$bad_entry' not ignored: $(cat "$T/b.sched")"
done
# two entries of one key: the first is the one (a later line is not reached)
printf 'znver4 %s : tile_rows=4 tile_vecs=5 lanes=8\nznver4 %s : tile_rows=2 tile_vecs=2 lanes=8\n' \
  "$KEY" "$KEY" >"$T/two.tab"
schedule_of "$A/model.onnx" "$T/w.sched" $ZEN --tuning "$T/two.tab"
[ "$(tile "$T/w.sched" 0)" = 4x5x8 ] && ok || bad "not the first entry of the key: $(cat "$T/w.sched")"

# a malformed table is refused, naming the file and line
for line in "znver4 $KEY tile_rows=4" "znver4 $KEY : tasks=4" "znver4 $KEY : tile_rows=x" \
  "znver4 : tile_rows=4" "znver4 $KEY :"; do
  printf '# ok\n%s\n' "$line" >"$T/mal.tab"
  "$KILN" compile "$A/model.onnx" $ZEN -o "$T/m" --tuning "$T/mal.tab" >"$T/log" 2>&1
  rc=$?
  [ $rc = 1 ] && grep -q "tuning table '$T/mal.tab' line 2: " "$T/log" && ok ||
    bad "'$line': exit $rc, not refused by line: $(cat "$T/log")"
done
printf 'znver4 %0400d : tile_rows=4\n' 0 >"$T/long.tab"
"$KILN" compile "$A/model.onnx" $ZEN -o "$T/m" --tuning "$T/long.tab" >"$T/log" 2>&1
[ $? = 1 ] && grep -q "line 1: the CPU and workload take over" "$T/log" && ok || bad "long key: $(cat "$T/log")"
"$KILN" compile "$A/model.onnx" $ZEN -o "$T/m" --tuning "$T/none.tab" >"$T/log" 2>&1
[ $? = 1 ] && grep -q "cannot open tuning table" "$T/log" && ok || bad "missing table: $(cat "$T/log")"
printf 'znver4 a\000b : tile_rows=1\n' >"$T/nul.tab"
"$KILN" compile "$A/model.onnx" $ZEN -o "$T/m" --tuning "$T/nul.tab" >"$T/log" 2>&1
[ $? = 1 ] && grep -q "not a text file" "$T/log" && ok || bad "binary table: $(cat "$T/log")"

# kiln tune --table-out: the kept half-width tiles (test hook KILN_TUNE_FAVOUR=lanes) as
# entries, which read back (--tuning, no schedule file) as the tuned file's tiles
M=$S/tests/pointwise
KILN_TUNE_FAVOUR=lanes "$KILN" tune "$M/model.onnx" $ZEN --runs 1 -o "$T/h.sched" \
  --table-out "$T/h.tab" >"$T/h.txt" 2>"$T/err.txt"
rc=$?
if [ $rc = 2 ] && grep -q "cannot run it" "$T/err.txt"; then
  echo "skipped kiln tune: this CPU does not run x86-64-zen4: $(cat "$T/err.txt")"
  finish
  exit 0
fi
[ $rc = 0 ] && grep -q "^wrote $T/h.tab: [1-9][0-9]* tuning-table entr" "$T/h.txt" && ok ||
  bad "tune --table-out: $(cat "$T/h.txt" "$T/err.txt")"
n=$(grep -c '^znver4 conv\(1d\)\? f32 ' "$T/h.tab")
[ "$n" -ge 2 ] && [ "$n" = "$(grep -vc '^#' "$T/h.tab")" ] && ok || bad "entries: $(cat "$T/h.tab")"
grep -q "^znver4 conv f32 x=1x5x9x10 y=13x9x10 k=1x1 s=1x1 d=1x1 p=0,0,0,0 g=1 nchw : .*lanes=8" \
  "$T/h.tab" && ok || bad "pw1's entry: $(cat "$T/h.tab")"
grep -q "^znver4 conv1d f32 x=1x6x1x37 y=11x1x37 k=1x1 " "$T/h.tab" && ok || bad "pw5 (1-D): $(cat "$T/h.tab")"
schedule_of "$M/model.onnx" "$T/r.sched" $ZEN --tuning "$T/h.tab"
for k in $(sed -n 's/^# kernel \([0-9]*\) .*/\1/p' "$T/h.tab"); do
  [ "$(tile "$T/r.sched" $k)" = "$(tile "$T/h.sched" $k)" ] && ok ||
    bad "kernel $k: read back $(tile "$T/r.sched" $k), tuned $(tile "$T/h.sched" $k)"
done
KILN_TEST_TARGET=x86-64-zen4 check_jit_c "$M" "pointwise with the written table" --tuning "$T/h.tab"
finish
