#!/bin/sh
# Schedule files: --dump-schedule writes one line per kernel; --schedule reads them back
# (what it sets is used, and dumping again gives the same values); a file that names
# kernels the model does not have is refused with exit code 1 and nothing written; kernels
# too short for the thread pool are not split; lanes a kernel does not take (wider than the
# target's vectors, 1 on a vector tile, any on a kernel without vector tiles) are refused by
# file, kernel and value, narrower float vectors are taken; the
# compiled code with a hand-edited schedule still matches the reference.
# usage: schedule.sh KILN SOURCE_DIR
KILN=$1
S=$2
M=$S/examples/digits/digits.onnx
. "$2/tests/lib.sh"

"$KILN" compile "$M" --dim batch=48 --target x86-64-avx2 -o "$T/a" --dump-schedule "$T/s1.txt" >/dev/null ||
  bad "compile --dump-schedule"
grep -q "^kernel 0 '/0/Conv' Conv tile_rows=[0-9]* tile_vecs=[0-9]* lanes=8" "$T/s1.txt" && ok ||
  bad "no register tile for the first Conv: $(cat "$T/s1.txt")"
# hand-tuned: 3-row tiles and 2 tasks everywhere a tile or a split exists
sed 's/tile_rows=[0-9]*/tile_rows=3/; s/tasks=[0-9]*/tasks=2/' "$T/s1.txt" >"$T/s2.txt"
"$KILN" compile "$M" --dim batch=48 --target x86-64-avx2 -o "$T/b" --schedule "$T/s2.txt" \
  --dump-schedule "$T/s3.txt" >/dev/null || bad "compile --schedule"
# (the cross-core comment lines differ: the schedules differ)
grep -v '^#' "$T/s2.txt" >"$T/s2k.txt"
grep -v '^#' "$T/s3.txt" >"$T/s3k.txt"
diff "$T/s2k.txt" "$T/s3k.txt" >/dev/null && ok || bad "schedule not applied: $(diff "$T/s2k.txt" "$T/s3k.txt")"
# the parallel split: kernels of microseconds (batch 48) stay on the calling thread, where
# waking the pool would cost more than they take; at batch 1024 some are split
"$KILN" compile "$M" --dim batch=48 --target x86-64-avx2 -o "$T/e" --dump-schedule "$T/s4.txt" >/dev/null &&
  ! grep -q "tasks=\([2-9]\|[1-9][0-9]\)" "$T/s4.txt" && ok || bad "small kernels split: $(cat "$T/s4.txt")"
KILN_XCORE=2 "$KILN" compile "$M" --dim batch=1024 --target x86-64-avx2 -o "$T/f" --dump-schedule "$T/s5.txt" >/dev/null &&
  grep -q "tasks=\([2-9]\|[1-9][0-9]\)" "$T/s5.txt" && ok || bad "large kernels not split: $(cat "$T/s5.txt")"
# the cross-core bytes (passes/xcore.c): some where kernels are split; none when the same
# kernels are not (every statement then runs on the calling thread)
grep -q "^# cross-core bytes at 2 threads.*: read [1-9][0-9]* write" "$T/s5.txt" && ok ||
  bad "no cross-core bytes with split kernels: $(grep '^#' "$T/s5.txt")"
sed 's/tasks=[0-9]*/tasks=1/' "$T/s5.txt" >"$T/s6.txt"
KILN_XCORE=2 "$KILN" compile "$M" --dim batch=1024 --target x86-64-avx2 -o "$T/g" --schedule "$T/s6.txt" \
  --dump-schedule "$T/s7.txt" >/dev/null &&
  grep -q "^# cross-core bytes at 2 threads.*: read 0 write 0$" "$T/s7.txt" && ok ||
  bad "cross-core bytes without a split: $(grep '^#' "$T/s7.txt")"
# a schedule for another model
printf "kernel 0 'nope' Conv tile_rows=2\n" >"$T/bad.txt"
"$KILN" compile "$M" --dim batch=48 -o "$T/c" --schedule "$T/bad.txt" 2>"$T/err.txt"
[ $? = 1 ] && grep -q "schedule's kernel 0 is 'nope' Conv" "$T/err.txt" && [ ! -e "$T/c/model.c" ] && ok ||
  bad "foreign schedule: $(cat "$T/err.txt")"
printf "kernel 0 '/0/Conv' Conv tile_rows=x\n" >"$T/bad2.txt"
"$KILN" compile "$M" --dim batch=48 -o "$T/d" --schedule "$T/bad2.txt" 2>"$T/err2.txt"
[ $? = 1 ] && grep -q "bad2.txt' line 1: bad value" "$T/err2.txt" && ok || bad "malformed schedule: $(cat "$T/err2.txt")"
# lanes: x86-64-avx2's vectors are 8 lanes; 16 is wider, 1 would make the tile scalar, and
# the Flatten (kernel 4) has no vector tiles; each refused with exit code 1, nothing written
lanes_refused() { # KERNEL-LINE-SED EXPECTED-MESSAGE
  sed "$1" "$T/s1.txt" >"$T/l.txt"
  rm -rf "$T/l"
  "$KILN" compile "$M" --dim batch=48 --target x86-64-avx2 -o "$T/l" --schedule "$T/l.txt" 2>"$T/lerr.txt"
  [ $? = 1 ] && grep -qF "$2" "$T/lerr.txt" && [ "$(wc -l <"$T/lerr.txt")" = 1 ] && [ ! -e "$T/l/model.c" ] &&
    ok || bad "lanes ($1): $(cat "$T/lerr.txt")"
}
lanes_refused "/^kernel 0 /s/lanes=8/lanes=16/" \
  "node '/0/Conv' (Conv): schedule '$T/l.txt': kernel 0: lanes=16 not taken: its tiles have vectors of 8 lanes"
lanes_refused "/^kernel 5 /s/lanes=8/lanes=1/" \
  "node '/7/Gemm' (Gemm): schedule '$T/l.txt': kernel 5: lanes=1 not taken: its tiles have vectors of 8 lanes"
lanes_refused "/^kernel 4 /s/\$/ lanes=8/" \
  "node '/6/Flatten' (Flatten): schedule '$T/l.txt': kernel 4: lanes=8 not taken: with this schedule the kernel has no vector tiles"
lanes_refused "/^kernel 1 /s/lanes=4/lanes=8/" "node '/2/MaxPool' (MaxPool): schedule '$T/l.txt': kernel 1: lanes=8 not taken"
# narrower: the Gemm's tiles in vectors of 4 lanes, read back as such
sed "/^kernel 5 /s/lanes=8/lanes=4/" "$T/s1.txt" >"$T/l4.txt"
"$KILN" compile "$M" --dim batch=48 --target x86-64-avx2 -o "$T/l4" --schedule "$T/l4.txt" \
  --dump-schedule "$T/l4d.txt" >/dev/null && grep -q "^kernel 5 '/7/Gemm' Gemm .*lanes=4 " "$T/l4d.txt" &&
  ok || bad "lanes=4 on the Gemm not taken: $(cat "$T/l4d.txt")"
finish
