#!/bin/sh
# kiln compile: files written, deterministic output, options, and errors.
# usage: compile.sh KILN SOURCE_DIR
KILN=$1
EX=$2/examples/digits
. "$2/tests/lib.sh"

# deterministic: two folders, compiled at different times, byte-identical
"$KILN" compile "$EX/digits.onnx" -o "$T/a" --name net --shape image=2,1,8,8 >"$T/log1" || bad "compile a"
sleep 1
(cd "$T" && "$KILN" compile "$EX/digits.onnx" -o b --name net --shape image=2,1,8,8 >/dev/null) || bad "compile b"
cmp -s "$T/a/net.c" "$T/b/net.c" && cmp -s "$T/a/net.h" "$T/b/net.h" && ok || bad "output differs between runs"
grep -q "ratio 1.000" "$T/log1" && ok || bad "arena not at its lower bound: $(cat "$T/log1")"
# --emit c is portable by default: the generic target, whatever machine compiles it
"$KILN" compile "$EX/digits.onnx" -o "$T/g" --name net --shape image=2,1,8,8 --target generic >"$T/log2" || bad "compile generic"
cmp -s "$T/a/net.c" "$T/g/net.c" && grep -q "(target generic)" "$T/log1" && ok || bad "--emit c does not default to --target generic"
# --emit h: the same header alone
"$KILN" compile "$EX/digits.onnx" -o "$T/h" --name net --shape image=2,1,8,8 --emit h >/dev/null &&
  cmp -s "$T/a/net.h" "$T/h/net.h" && [ "$(ls "$T/h")" = net.h ] && ok || bad "--emit h"
"$KILN" compile "$EX/digits.onnx" -o "$T/e" --emit opencl --target generic >/dev/null 2>&1
[ $? = 2 ] && ok || bad "--target with --emit opencl is not a usage error"
# --emit opencl: kernels and host code, deterministic too
"$KILN" compile "$EX/digits.onnx" -o "$T/o1" --name net --shape image=2,1,8,8 --emit opencl >/dev/null || bad "emit opencl"
(cd "$T" && "$KILN" compile "$EX/digits.onnx" -o o2 --name net --shape image=2,1,8,8 --emit opencl >/dev/null)
for e in cl h c; do cmp -s "$T/o1/net.$e" "$T/o2/net.$e" && ok || bad "net.$e (opencl) differs between runs"; done
grep -q "__kernel void net_k0" "$T/o1/net.cl" && ok || bad "no kernels in net.cl"
# the header contract
for m in net_ARENA_SIZE net_ARENA_ALIGN net_WEIGHTS_SIZE net_INPUT_0_DIMS net_OUTPUT_0_SIZE; do
  grep -q "#define $m " "$T/a/net.h" && ok || bad "net.h lacks $m"
done
grep -q "int net_run(const float \*in0, float \*out[0-9]*, void \*arena);" "$T/a/net.h" && ok || bad "net_run prototype"
# only the four standard headers, and Arm's <arm_mve.h> only under the Helium guard
# (a compiler-provided header, read only when the compiler targets MVE)
[ "$(grep '^#include <' "$T/a/net.c" | grep -v '<arm_mve.h>' | sort | tr '\n' ' ')" = "#include <math.h> #include <stddef.h> #include <stdint.h> #include <string.h> " ] && ok || bad "includes: $(grep '^#include' "$T/a/net.c")"
! grep -q '^#include <arm_mve.h>' "$T/a/net.c" ||
  grep -B2 '^#include <arm_mve.h>' "$T/a/net.c" | grep -q 'defined(__ARM_FEATURE_MVE)' && ok ||
  bad "<arm_mve.h> outside the __ARM_FEATURE_MVE guard"
# C99 with gcc and clang, warnings as errors
for cc in gcc clang; do
  command -v $cc >/dev/null || continue
  $cc -std=c99 -Wall -Wextra -Wpedantic -Werror -c "$T/a/net.c" -o "$T/net_$cc.o" && ok || bad "$cc rejects net.c"
done
# x86 vectors of 8 and 16 lanes: the multiply-adds are packed instructions at -O2 (GCC 12
# had built the per-lane fmaf of 16 lanes with scalar vfmadd...ss: the C 20x the JIT),
# and <immintrin.h> is read only under its guard
if [ "$(uname -m)" = x86_64 ]; then
  for t in x86-64-avx512 x86-64-avx2; do
    "$KILN" compile "$EX/digits.onnx" -o "$T/$t" --name net --shape image=2,1,8,8 --target $t >/dev/null || bad "compile $t"
    for cc in gcc clang; do
      command -v $cc >/dev/null || continue
      $cc -std=c99 -O2 -march=skylake-avx512 -Wall -Wextra -Wpedantic -Werror -S -o "$T/$t/net_$cc.s" "$T/$t/net.c" &&
        ! grep -q 'vfmadd[0-9]*ss' "$T/$t/net_$cc.s" && grep -q 'vfmadd[0-9]*ps' "$T/$t/net_$cc.s" && ok ||
        bad "$t, $cc -O2: scalar multiply-adds ($(grep -c 'vfmadd[0-9]*ss' "$T/$t/net_$cc.s"))"
    done
    grep -B1 '^#include <immintrin.h>' "$T/$t/net.c" | grep -q '^#if KN_FMA_FUSED && defined(__\(AVX512F\|FMA\)__)$' && ok ||
      bad "$t: <immintrin.h> outside its guard"
  done
fi
# weights in a named section, or in a file
"$KILN" compile "$EX/digits.onnx" -o "$T/s" --name net --shape image=2,1,8,8 --weights-section .kiln_w >/dev/null || bad "weights-section"
gcc -std=c99 -Wall -Wextra -Werror -c "$T/s/net.c" -o "$T/s.o" && objdump -h "$T/s.o" | grep -q "\.kiln_w" && ok || bad "no .kiln_w section"
"$KILN" compile "$EX/digits.onnx" -o "$T/f" --name net --shape image=2,1,8,8 --weights-file >/dev/null || bad "weights-file"
[ -s "$T/f/net.weights" ] && ! grep -q "static const \(float\|union\)" "$T/f/net.c" && grep -q "const void \*weights, void \*arena" "$T/f/net.h" && ok || bad "weights-file layout"
# errors: unfixed dims, bad name, nothing left behind
mkdir "$T/e"
"$KILN" compile "$EX/digits.onnx" -o "$T/e" >"$T/out" 2>&1
[ $? = 1 ] && grep -q "input 'image' has symbolic dimension 'batch': pass --dim batch=N" "$T/out" && [ -z "$(ls -A "$T/e")" ] && ok || bad "unfixed dims: $(cat "$T/out")"
"$KILN" compile "$EX/digits.onnx" -o "$T/e" --name 9bad >/dev/null 2>&1
[ $? = 2 ] && ok || bad "bad --name accepted"
# resource limits: a model within them compiles; a malformed size is a usage error
# (refusals are in tests/malformed)
"$KILN" compile "$EX/digits.onnx" -o "$T/l" --shape image=2,1,8,8 --max-arena 1M --max-weights 64K >/dev/null && ok || bad "limits refuse a model within them"
"$KILN" compile "$EX/digits.onnx" -o "$T/e" --shape image=2,1,8,8 --max-arena 12X >/dev/null 2>&1
[ $? = 2 ] && [ -z "$(ls -A "$T/e")" ] && ok || bad "--max-arena 12X accepted"
# a sequence model (ONNX test data): the input sequence of length 2 and the output
# sequence of length 3 are consecutive tensor parameters; the header states lengths
SEQ=/usr/share/libonnx-testdata/data/node/test_sequence_insert_at_back/model.onnx
if [ -f "$SEQ" ]; then
  "$KILN" compile "$SEQ" -o "$T/q" --name sq --length sequence=2 --shape sequence_0=3 --shape sequence_1=3 >/dev/null || bad "compile a sequence model"
  for m in "sq_sequence_LENGTH 2" "sq_sequence_FIRST_INPUT 0" "sq_output_sequence_LENGTH 3" \
           'sq_INPUT_1_NAME "sequence_1"' 'sq_INPUT_2_NAME "tensor"' 'sq_OUTPUT_2_NAME "output_sequence_2"'; do
    grep -q "#define $m" "$T/q/sq.h" && ok || bad "sq.h lacks '$m'"
  done
  cat >"$T/q/main.c" <<'CEOF'
#include "sq.h"
#include <stdio.h>
int main(void) {
    static _Alignas(64) unsigned char arena[sq_ARENA_SIZE + 1];
    int64_t s0[3] = {1, 2, 3}, s1[3] = {4, 5, 6}, t[3] = {7, 8, 9}, o[3][3];
    if (sq_run(s0, s1, t, o[0], o[1], o[2], arena)) return 1;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            if (o[i][j] != 3 * i + j + 1) return 2;
    return 0;
}
CEOF
  gcc -std=c11 -Wall -Werror -I"$T/q" "$T/q/main.c" "$T/q/sq.c" -lm -o "$T/q/main" && "$T/q/main" && ok || bad "sequence ABI: wrong outputs"
  "$KILN" compile "$SEQ" -o "$T/e" >"$T/out" 2>&1
  [ $? = 1 ] && grep -q "needs its length (kiln compile --length sequence=N)" "$T/out" && [ -z "$(ls -A "$T/e")" ] && ok || bad "sequence without --length: $(cat "$T/out")"
fi
# strings (docs/generated-c.md): float <-> string and a case change through the C ABI,
# strict C99; a string longer than --max-string-bytes makes st_run return 2
"$KILN" compile "$2/tests/c/strings.onnx" -o "$T/str" --name st --max-string-bytes 8 >/dev/null || bad "compile the string model"
grep -q "int st_run(const float \*in0, const char \*const \*in1, const char \*\*out2, const char \*\*out3, float \*out4, void \*arena);" "$T/str/st.h" && ok || bad "string st_run prototype"
cat >"$T/str/main.c" <<'CEOF'
#include "st.h"
#include <stdio.h>
#include <stdint.h>
#include <string.h>
static unsigned char buf[st_ARENA_SIZE + st_ARENA_ALIGN];
int main(void) {
    unsigned char *arena = buf + (st_ARENA_ALIGN - (uintptr_t)buf % st_ARENA_ALIGN) % st_ARENA_ALIGN;
    const float x[3] = {0.1f, -2.5f, 1e-5f};
    const char *s[2] = {"hello", " 1.5e3"}, *xs[3], *su[2];
    float sf[2];
    if (st_run(x, s, xs, su, sf, arena) != 0) return 1;
    if (strcmp(xs[0], "0.1") || strcmp(xs[1], "-2.5") || strcmp(xs[2], "1e-05")) return 2;
    if (strcmp(su[0], "HELLO") || strcmp(su[1], " 1.5E3")) return 3;
    if (sf[0] != 0.0f || sf[1] != 1500.0f) return 4;
    s[0] = "1234567"; /* 7 bytes and the NUL: fits */
    if (st_run(x, s, xs, su, sf, arena) != 0 || strcmp(su[0], "1234567")) return 5;
    s[0] = "12345678"; /* one byte too many */
    if (st_run(x, s, xs, su, sf, arena) != 2) return 6;
    return 0;
}
CEOF
gcc -std=c99 -Wall -Wextra -Wpedantic -Werror -c "$T/str/st.c" -o "$T/str/st.o" && ok || bad "gcc rejects st.c"
gcc -std=c99 -Wall -Wextra -Wpedantic -Werror -I"$T/str" "$T/str/main.c" "$T/str/st.o" -lm -o "$T/str/main" && "$T/str/main" && ok || bad "string ABI (C): wrong outputs or status"
# the same ABI from an LLVM object
"$KILN" compile "$2/tests/c/strings.onnx" -o "$T/stro" --name st --max-string-bytes 8 --emit obj >/dev/null &&
  gcc -std=c99 -Wall -Wextra -Wpedantic -Werror -I"$T/stro" "$T/str/main.c" "$T/stro/st.o" -lm -o "$T/stro/main" && "$T/stro/main" && ok || bad "string ABI (LLVM object): wrong outputs or status"
# OpenCL runs the string kernels on the host, in its host code (tests/opencl/test_strings.c
# runs them): that code compiles as C99 without warnings
"$KILN" compile "$2/tests/c/strings.onnx" -o "$T/e" --name st --emit opencl >"$T/out" 2>&1 &&
  grep -q "^static void st_h0(void \*arena" "$T/e/st.c" &&
  { [ ! -f /usr/include/halide14/HalideRuntime.h ] || # (kiln built without the OpenCL runtime)
    gcc -std=c99 -Wall -Wextra -Wpedantic -Werror -I"$2/runtime" -I/usr/include/halide14 -c "$T/e/st.c" -o "$T/e/st.o"; } &&
  ok || bad "opencl strings: $(cat "$T/out")"
# warnings: one line each on stderr, silenced by --no-warnings and -q; -v times the
# stages; no progress when stderr is not a terminal
"$KILN" compile "$2/tests/c/strings.onnx" -o "$T/w" --name st >"$T/wout" 2>"$T/werr"
[ "$(wc -l <"$T/werr")" = 1 ] && grep -q "^kiln: warning: .*strings.onnx: node '<unnamed>' (StringNormalizer): strings are stored in 256 bytes" "$T/werr" && ok ||
  bad "warning: $(cat "$T/werr")"
"$KILN" compile "$2/tests/c/strings.onnx" -o "$T/w" --name st --no-warnings >/dev/null 2>"$T/werr"
[ ! -s "$T/werr" ] && ok || bad "--no-warnings: $(cat "$T/werr")"
"$KILN" compile "$2/tests/c/strings.onnx" -o "$T/w" --name st -q >"$T/wout" 2>"$T/werr"
[ ! -s "$T/werr" ] && [ ! -s "$T/wout" ] && [ -s "$T/w/st.c" ] && ok || bad "-q printed something"
"$KILN" compile "$EX/digits.onnx" -o "$T/v" --dim batch=1 -v >/dev/null 2>"$T/verr"
grep -q "^kiln: emitting C" "$T/verr" && grep -q "^kiln: wrote .*/model.c, [0-9]* bytes" "$T/verr" &&
  ! grep -q "$(printf '\033')" "$T/verr" && ok || bad "-v: $(cat "$T/verr")"
finish
