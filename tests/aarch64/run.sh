#!/bin/sh
# CTest "aarch64_run": kiln's objects for --target aarch64 run, not only built. The
# example DS-CNN (examples/firmware: float and int8) compiled with --emit obj --target
# aarch64, linked with tests/aarch64/main.c by aarch64-linux-gnu-gcc (static) and run
# under qemu-aarch64 (Debian's gcc-aarch64-linux-gnu and qemu-user; tools/setup.sh
# installs them); main.c checks the outputs against the references. Exits 77 (skipped)
# without them.
# usage: run.sh KILN SOURCE_DIR
KILN=$1
S=$2
for tool in aarch64-linux-gnu-gcc qemu-aarch64; do
  command -v $tool >/dev/null || { echo "skipped: $tool not installed"; exit 77; }
done
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
EX=$S/examples/firmware
for m in kws kws_int8; do
  "$KILN" compile "$EX/$m.onnx" -o "$T" --name $m --emit obj --target aarch64 -q ||
    { echo "FAIL: kiln compile $m.onnx --emit obj --target aarch64"; exit 1; }
done
aarch64-linux-gnu-gcc -O2 -std=c11 -Wall -Werror -static -I"$T" -I"$EX" "$S/tests/aarch64/main.c" \
  "$T/kws.o" "$T/kws_int8.o" -lm -o "$T/app" 2>"$T/cc.log" ||
  { echo "FAIL: link: $(head -5 "$T/cc.log")"; exit 1; }
timeout 120 qemu-aarch64 "$T/app"
