#!/bin/sh
# cmake --install into a temporary prefix, then use it as a user would:
# 1. a CMake project with find_package(kiln): two models compiled at build time on one
#    shared arena (their accuracy, and the sizes CMake read against the headers), the
#    JIT example linked with kiln::libkiln and kiln::libkiln_static; the project of
#    docs/getting-started.md as written there; a model that cannot compile stopping the
#    configure step with kiln's message;
# 2. pkg-config: the JIT example built with `pkg-config --cflags --libs kiln`;
# 3. a cross-compiling firmware project (arm-none-eabi toolchain file) where kiln is a
#    build-machine tool (skipped without arm-none-eabi-gcc);
# 4. the installed files: man page, docs, version file.
# usage: run.sh BUILD_DIR SOURCE_DIR
B=$(cd "$1" && pwd)
S=$(cd "$2" && pwd)
. "$2/tests/lib.sh"
P=$T/prefix
EX=$P/share/doc/kiln/examples
DIGITS=$S/examples/digits
cmake --install "$B" --prefix "$P" >"$T/install.log" 2>&1 || { cat "$T/install.log"; bad "cmake --install"; }

for f in bin/kiln include/kiln.h lib/libkiln.so lib/libkiln.a lib/cmake/kiln/kilnConfig.cmake \
  lib/cmake/kiln/kilnConfigVersion.cmake lib/cmake/kiln/kiln_add_model.cmake lib/pkgconfig/kiln.pc \
  share/man/man1/kiln.1 share/doc/kiln/README.md share/doc/kiln/docs/cli.md \
  share/doc/kiln/docs/cmake.md share/doc/kiln/docs/getting-started.md; do
  [ -e "$P/$f" ] && ok || bad "not installed: $f"
done

# 1. find_package(kiln)
C=$T/consumer
if cmake -S "$S/tests/install/consumer" -B "$C" -DCMAKE_PREFIX_PATH="$P" -DKILN_EXAMPLES="$EX" \
  >"$T/c.log" 2>&1 && cmake --build "$C" -j2 >>"$T/c.log" 2>&1; then
  ok
  "$C/consumer" "$DIGITS/test_images.npy" "$DIGITS/test_labels.npy" >"$T/out" 2>&1 &&
    grep -q "digits48 accuracy: 48/48" "$T/out" && grep -q "digits1 accuracy: 48/48" "$T/out" &&
    ok || bad "consumer: $(cat "$T/out")"
  for j in jit_shared jit_static; do
    "$C/$j" "$DIGITS/digits.onnx" "$DIGITS/test_images.npy" "$DIGITS/test_labels.npy" \
      --expect "$DIGITS/expected_logits.npy" >"$T/out" 2>&1 &&
      grep -q "accuracy: 48/48" "$T/out" && ok || bad "$j: $(cat "$T/out")"
  done
  # the static one does not need libkiln.so; the shared one finds it by its RUNPATH
  readelf -d "$C/jit_static" | grep -q "libkiln.so" && bad "jit_static links libkiln.so" || ok
  # regenerated when the options change, not otherwise
  cmake --build "$C" >"$T/b.log" 2>&1 && ! grep -q "kiln: compiling" "$T/b.log" && ok ||
    bad "a second build recompiled a model: $(cat "$T/b.log")"
  # an option changed: that model only
  cmake -S "$S/tests/install/consumer" -B "$C" -DDIGITS1_SECTION=.rodata.other >/dev/null 2>&1
  cmake --build "$C" >"$T/b.log" 2>&1 && grep -q "kiln: compiling.*digits1" "$T/b.log" &&
    ! grep -q "kiln: compiling.*digits48" "$T/b.log" && ok ||
    bad "changing an option did not recompile just that model: $(cat "$T/b.log")"
  # the model changed: both
  sleep 1
  touch "$EX/digits/digits.onnx"
  cmake --build "$C" >"$T/b.log" 2>&1 && grep -q "kiln: compiling.*digits48" "$T/b.log" &&
    grep -q "kiln: compiling.*digits1" "$T/b.log" && ok ||
    bad "touching the model did not recompile it: $(cat "$T/b.log")"
else
  cat "$T/c.log"
  bad "consumer project does not build"
fi

# the project of docs/getting-started.md, as written there
G=$T/app
mkdir -p "$G"
awk '/^```cmake$/ {on = 1; next} /^```$/ {if (on) exit} on' "$S/docs/getting-started.md" >"$G/CMakeLists.txt"
awk '/^```c$/ {on = 1; next} /^```$/ {if (on) exit} on' "$S/docs/getting-started.md" >"$G/main.c"
if cmake -S "$G" -B "$G/build" -DCMAKE_PREFIX_PATH="$P" -DKILN_EXAMPLES="$EX" >"$T/g.log" 2>&1 &&
  cmake --build "$G/build" >>"$T/g.log" 2>&1; then
  "$G/build/app" | grep -q "^class 1 (arena" && ok || bad "getting-started app: $("$G/build/app")"
else
  cat "$T/g.log"
  bad "the getting-started project does not build"
fi

# a model that cannot compile stops the configure step with kiln's message
B2=$T/bad
mkdir -p "$B2"
cat >"$B2/CMakeLists.txt" <<EOC
cmake_minimum_required(VERSION 3.20)
project(bad C)
find_package(kiln REQUIRED)
kiln_add_model(digits MODEL $EX/digits/digits.onnx)
EOC
if cmake -S "$B2" -B "$B2/build" -DCMAKE_PREFIX_PATH="$P" >"$T/bad.log" 2>&1; then
  bad "a model with a symbolic dimension configured without DIM"
else
  grep -q "has symbolic dimension 'batch': pass --dim batch=N" "$T/bad.log" &&
    grep -q "DIM as" "$T/bad.log" && ok || bad "configure message: $(cat "$T/bad.log")"
fi

# QUANTIZE/CALIBRATE reach kiln as --quantize int8 --calibrate PATH: a kiln without
# quantization refuses that option by name; one with it compiles
Q=$T/quant
mkdir -p "$Q"
cat >"$Q/CMakeLists.txt" <<EOC
cmake_minimum_required(VERSION 3.20)
project(quant C)
find_package(kiln REQUIRED)
kiln_add_model(digits MODEL $EX/digits/digits.onnx DIM batch=1 QUANTIZE int8 CALIBRATE $EX/digits/test_images.npy)
EOC
if cmake -S "$Q" -B "$Q/build" -DCMAKE_PREFIX_PATH="$P" >"$T/q.log" 2>&1; then
  grep -q -- "--quantize;int8;--calibrate" "$Q/build/kiln_digits/options.txt" 2>/dev/null ||
    grep -q -- "--quantize" "$Q/build/kiln_digits/options.txt" && ok || bad "QUANTIZE not forwarded"
else
  grep -q "unknown option '--quantize'" "$T/q.log" && ok || bad "QUANTIZE: $(cat "$T/q.log")"
fi

# 2. pkg-config
if command -v pkg-config >/dev/null; then
  export PKG_CONFIG_PATH="$P/lib/pkgconfig"
  # shellcheck disable=SC2046
  if ${CC:-cc} -std=c99 -o "$T/jit_pc" "$EX/jit/main.c" $(pkg-config --cflags --libs kiln) -lm \
    2>"$T/pc.log"; then
    LD_LIBRARY_PATH="$P/lib" "$T/jit_pc" "$DIGITS/digits.onnx" "$DIGITS/test_images.npy" \
      "$DIGITS/test_labels.npy" >"$T/out" 2>&1 && grep -q "accuracy: 48/48" "$T/out" && ok ||
      bad "pkg-config build: $(cat "$T/out")"
  else
    bad "pkg-config build does not compile: $(cat "$T/pc.log")"
  fi
  [ "$(pkg-config --modversion kiln)" = "$("$P/bin/kiln" --version | cut -d' ' -f2)" ] && ok ||
    bad "kiln.pc version"
fi

# 3. cross-compiling firmware project
if command -v arm-none-eabi-gcc >/dev/null; then
  X=$T/cross
  if cmake -S "$S/tests/install/cross" -B "$X" -Dkiln_DIR="$P/lib/cmake/kiln" \
    -DCMAKE_TOOLCHAIN_FILE="$S/tests/install/cross/arm-none-eabi.cmake" -DKILN_EXAMPLES="$EX" \
    >"$T/x.log" 2>&1 && cmake --build "$X" -j2 >>"$T/x.log" 2>&1; then
    ok
    readelf -h "$X/firmware" | grep -q "Machine: *ARM" && ok || bad "firmware is not an Arm ELF"
    nm=$(arm-none-eabi-nm -S "$X/firmware")
    for s in digits_run digits_obj_run fw_arena; do
      echo "$nm" | grep -q " $s\$" && ok || bad "firmware lacks $s"
    done
    # the shared arena: as large as the larger of the two models', in its section
    want=$(sed -n 's/^arena //p' "$X/sizes.txt")
    got=$(echo "$nm" | sed -n 's/^[0-9a-f]* \([0-9a-f]*\) [bB] fw_arena$/\1/p')
    [ -n "$want" ] && [ "$((0x$got))" = "$want" ] && ok || bad "arena size $got, CMake says $want"
    arm-none-eabi-objdump -h "$X/libarena.a" | grep -q " \.bss\.fw_arena " && ok ||
      bad "the arena is not in section .bss.fw_arena"
  else
    cat "$T/x.log"
    bad "cross-compiled firmware project does not build"
  fi
fi

# 4. the installed man page renders without warnings and is kiln's own
"$P/bin/kiln" help --man >"$T/kiln.1" && cmp -s "$P/share/man/man1/kiln.1" "$T/kiln.1" && ok ||
  bad "the installed kiln.1 is not kiln help --man"
if command -v groff >/dev/null; then
  w=$(groff -man -Tutf8 -ww -z "$P/share/man/man1/kiln.1" 2>&1)
  [ -z "$w" ] && ok || bad "man page: $w"
fi
finish
