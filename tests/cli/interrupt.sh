#!/bin/sh
# kiln stopped by a signal while it compiles generated C (the c backend's temporary
# folder, $TMPDIR/kiln-run-*): the compiler is stopped, the folder removed, and kiln
# dies of that signal. The compiler is a stand-in that waits, so the signal always
# arrives mid-compile.
# usage: interrupt.sh KILN SOURCE_DIR
KILN=$1
SRC=$2
. "$2/tests/lib.sh"
M=$SRC/examples/digits/digits.onnx
printf '#!/bin/sh\necho started >"%s/cc.started"\nexec sleep 60\n' "$T" >"$T/slow_cc"
chmod +x "$T/slow_cc"

# (not INT: a background job of a non-interactive shell starts with SIGINT ignored,
# and kiln leaves ignored signals alone)
for sig in TERM HUP; do
  mkdir -p "$T/tmp_$sig"
  rm -f "$T/cc.started"
  TMPDIR="$T/tmp_$sig" CC="$T/slow_cc" "$KILN" run "$M" --backend c --random 1 --dim batch=1 \
    >"$T/out" 2>&1 &
  pid=$!
  i=0
  while [ ! -f "$T/cc.started" ] && [ $i -lt 600 ]; do
    sleep 0.1
    i=$((i + 1))
  done
  made=$(ls "$T/tmp_$sig" | grep -c '^kiln-run-')
  [ -f "$T/cc.started" ] && [ "$made" = 1 ] && ok ||
    bad "$sig: the compiler did not start in a kiln-run folder ($made folders)"
  kill -s "$sig" $pid
  wait $pid
  rc=$?
  left=$(ls "$T/tmp_$sig" | wc -l)
  [ "$left" = 0 ] && ok || bad "$sig: $left entries left in TMPDIR: $(ls "$T/tmp_$sig")"
  [ "$rc" -gt 128 ] && ok || bad "$sig: kiln exited with $rc, not by the signal"
done
finish
