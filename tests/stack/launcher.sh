#!/bin/sh
# CTest "stack_launcher": kiln_add_model()'s <NAME>_stack.h when the project builds through
# a compiler launcher that leaves only the object behind, as ccache (4.7) does on a cache
# hit: it does not keep the .ci and .su files GCC writes beside the object. The launcher
# here runs the compiler and then removes them; the build must still make digits_stack.h
# (kiln_add_model compiles the model's C without the launcher) and use it.
# usage: launcher.sh KILN_PACKAGE_DIR SOURCE_DIR
P=$(cd "$1" && pwd)
S=$(cd "$2" && pwd)
. "$S/tests/lib.sh"
command -v gcc >/dev/null || { echo "skipped: gcc not installed"; exit 77; }
cat >"$T/drop.sh" <<'EOS'
#!/bin/sh
"$@" || exit $?
o=
while [ $# -gt 0 ]; do
  [ "$1" = -o ] && o=$2
  shift
done
[ -n "$o" ] && rm -f "${o%.*}.ci" "${o%.*}.su"
exit 0
EOS
chmod +x "$T/drop.sh"
cmake -S "$S/tests/stack/launcher" -B "$T/b" -Dkiln_DIR="$P" -DCMAKE_C_COMPILER=gcc \
  -DCMAKE_C_COMPILER_LAUNCHER="$T/drop.sh" -DKILN_DIGITS="$S/examples/digits/digits.onnx" \
  >"$T/cfg" 2>&1 && ok || bad "configure: $(tail -20 "$T/cfg")"
cmake --build "$T/b" >"$T/build" 2>&1 && ok || bad "build: $(tail -20 "$T/build")"
grep -q "define digits_STACK_BYTES [1-9]" "$T/b/kiln_digits/digits_stack.h" &&
  ok || bad "no digits_STACK_BYTES in kiln_digits/digits_stack.h"
# the launcher ran for the project's own sources (it is not simply ignored)
grep -q "drop.sh" "$T/b/CMakeCache.txt" && ok || bad "the launcher is not in the cache"
finish
