#!/bin/sh
# Pass 'index' (passes/index.c): on targets whose index_bits is 32 (the Cortex-M cores) the
# generated C declares its loop indices int32_t when every index value provably fits in
# int32, and keeps int64_t when one may not. The firmware CTest runs such C on the boards.
# usage: check.sh KILN SOURCE_DIR
KILN=$1
S=$2
. "$2/tests/lib.sh"
# loops: "N32 N64", the number of for loops with int32_t and with int64_t indices
loops() {
  echo "$(grep -c 'for (int32_t v' "$1") $(grep -c 'for (int64_t v' "$1")"
}
# the firmware example's float and int8 DS-CNN: every loop 32-bit on the M4 and the M0+,
# every loop 64-bit for the generic target (its index_bits is 0)
for m in kws kws_int8; do
  for t in cortex-m4 cortex-m0plus generic; do
    "$KILN" compile "$S/examples/firmware/$m.onnx" --emit c --target $t -o "$T/$m-$t" --name m \
      >"$T/$m-$t.log" 2>&1 || { bad "$m $t: compile: $(cat "$T/$m-$t.log")"; continue; }
    set -- $(loops "$T/$m-$t/m.c")
    if [ $t = generic ]; then
      [ "$1" = 0 ] && [ "$2" -gt 10 ] && ok || bad "$m $t: $1 int32_t and $2 int64_t loops"
    else
      [ "$1" -gt 10 ] && [ "$2" = 0 ] && ok || bad "$m $t: $1 int32_t and $2 int64_t loops"
    fi
  done
done
# y = Relu(x), x of [N, 8]: its flat index v0 * 8 + v1 reaches 8N - 1. N = 268435455: 8N - 1
# = 2147483639 fits in int32; N = 268435456: x has 2^31 elements, more than int32 indexes,
# so the program keeps int64_t (nothing is allocated: compile only)
for c in 1000:32 268435455:32 268435456:64 1000000000:64; do
  n=${c%%:*} want=${c#*:}
  "$KILN" compile "$S/tests/index/dyn_relu.onnx" --emit c --target cortex-m4 --shape x=$n,8 \
    -o "$T/r$n" --name r >"$T/r$n.log" 2>&1 || { bad "relu N=$n: compile: $(cat "$T/r$n.log")"; continue; }
  set -- $(loops "$T/r$n/r.c")
  if [ $want = 32 ]; then
    [ "$1" = 2 ] && [ "$2" = 0 ] && ok || bad "relu N=$n: $1 int32_t and $2 int64_t loops, expected 2 and 0"
  else
    [ "$1" = 0 ] && [ "$2" = 2 ] && ok || bad "relu N=$n: $1 int32_t and $2 int64_t loops, expected 0 and 2"
  fi
done
finish
