#!/bin/sh
# CTest "stack_script": cmake/kiln_stack.cmake (<NAME>_STACK_BYTES from GCC's call graph) on
# hand-written call graphs, whose heaviest paths are summed here by hand: a diamond with a
# library call, a recursive graph and a dynamic frame (both refused with a message), a graph
# without <NAME>_run. The real graphs (GCC's, with folded aliases) are checked on the board
# by the firmware test (a painted stack against kws_STACK_BYTES).
# usage: script.sh KILN SOURCE_DIR
. "$2/tests/lib.sh"
S=$(cd "$2" && pwd)
run() { # NAME CI-TEXT: writes $T/m.c.ci, runs the script; its output in $T/out
  printf '%s\n' "$2" >"$T/m.c.ci"
  : >"$T/m.c.obj"
  rm -f "$T/m_stack.h"
  cmake -DOBJECT="$T/m.c.obj" -DNAME="$1" -DOUT="$T/m_stack.h" -P "$S/cmake/kiln_stack.cmake" \
    >"$T/out.raw" 2>&1
  rc=$?
  tr -s ' \n' '  ' <"$T/out.raw" >"$T/out" # CMake wraps its messages
  return $rc
}
# m_run 8 -> a 16 -> c 40; m_run -> b 24 -> c, memcpy; m_run_array 0 -> m_run:
# heaviest 8 + 24 + 40 = 72 (through b), not 8 + 16 + 40 = 64
diamond='graph: { title: "m.c"
node: { title: "m.c:a" label: "a\nm.c:1:1\n16 bytes (static)" }
node: { title: "m.c:b" label: "b\nm.c:2:1\n24 bytes (static)" }
node: { title: "m.c:c" label: "c\nm.c:3:1\n40 bytes (static)" }
node: { title: "memcpy" label: "__builtin_memcpy\n<built-in>" shape : ellipse }
node: { title: "m_run" label: "m_run\nm.c:4:5\n8 bytes (static)" }
edge: { sourcename: "m_run" targetname: "m.c:a" label: "m.c:5:5" }
edge: { sourcename: "m_run" targetname: "m.c:b" label: "m.c:6:5" }
edge: { sourcename: "m.c:a" targetname: "m.c:c" label: "m.c:1:9" }
edge: { sourcename: "m.c:b" targetname: "m.c:c" label: "m.c:2:9" }
edge: { sourcename: "m.c:b" targetname: "memcpy" }
node: { title: "m_run_array" label: "m_run_array\nm.c:9:5\n0 bytes (static)" }
edge: { sourcename: "m_run_array" targetname: "m_run" }
}'
if run m "$diamond" && grep -q '^#define m_STACK_BYTES 72$' "$T/m_stack.h" &&
  grep -q '^#define m_STACK_CALLS "memcpy"$' "$T/m_stack.h"; then ok; else
  bad "diamond: $(cat "$T/out" "$T/m_stack.h" 2>/dev/null)"; fi
# the array entry heavier than m_run: 32 + 72
if run m "$(printf '%s\n' "$diamond" | sed 's/m_run_array\\nm.c:9:5\\n0 bytes/m_run_array\\nm.c:9:5\\n32 bytes/')" &&
  grep -q '^#define m_STACK_BYTES 104$' "$T/m_stack.h"; then ok; else
  bad "array entry: $(cat "$T/out" "$T/m_stack.h" 2>/dev/null)"; fi
rec='graph: { title: "m.c"
node: { title: "m.c:a" label: "a\nm.c:1:1\n16 bytes (static)" }
node: { title: "m_run" label: "m_run\nm.c:4:5\n8 bytes (static)" }
edge: { sourcename: "m_run" targetname: "m.c:a" }
edge: { sourcename: "m.c:a" targetname: "m_run" }
}'
if ! run m "$rec" && grep -q "is recursive: no bound" "$T/out" && [ ! -f "$T/m_stack.h" ]; then ok; else
  bad "recursion not refused: $(cat "$T/out")"; fi
dyn='graph: { title: "m.c"
node: { title: "m_run" label: "m_run\nm.c:4:5\n8 bytes (dynamic)" }
}'
if ! run m "$dyn" && grep -q "has a dynamic frame: no static bound" "$T/out"; then ok; else
  bad "dynamic frame not refused: $(cat "$T/out")"; fi
if ! run other "$diamond" && grep -q "no function other_run" "$T/out"; then ok; else
  bad "missing entry not refused: $(cat "$T/out")"; fi
finish
