#!/bin/sh
# CTest "firmware": builds examples/firmware (a cross-compiled CMake project using
# find_package(kiln) and kiln_add_model()) for each QEMU board, runs the image under
# qemu-system-arm with -icount shift=0 and a time limit, and checks that the firmware's
# outputs match the reference torch computed (the firmware compares them and prints PASS
# or FAIL; a fault ends QEMU with status 1), that it printed an instruction count, and that
# the FPU boards' images use fused multiply-adds. The image also runs the int8 build of the
# model (kws_int8.onnx, QDQ, rewritten into QLinearConv by kiln's qdq pass), whose outputs
# must equal the reference inside the image (numpy, make_qdq.py) and, here, the output of
# kiln's interpreter on the host (env KILN: the kiln executable) byte for byte. Each model's
# stack, measured on a painted stack, is at most its <name>_STACK_BYTES plus its library
# calls' stack. The float model compiled with --arena-in-place-io gives the same bytes, and
# so does the int8 one compiled with --memory (two arena regions: the fast one in a bank
# of its own on the AN386, the FPGA block RAM, and on the AN547, the M55's DTCM).
# Boards: mps2-an385 (Cortex-M3, soft float), mps2-an386 (M4F), mps2-an500 (M7), mps2-an505 (M33),
# mps3-an547 (M55, Helium). Exits 77 (skipped) without arm-none-eabi-gcc or qemu-system-arm.
# usage: run.sh KILN_PACKAGE_DIR SOURCE_DIR [BOARD...]
#   KILN_PACKAGE_DIR: a folder with kilnConfig.cmake (the build tree's kiln-build-tree)
P=$(cd "$1" && pwd)
S=$(cd "$2" && pwd)
shift 2
BOARDS=${*:-"mps2-an386 mps2-an385 mps2-an500 mps2-an505 mps3-an547"}
for tool in arm-none-eabi-gcc qemu-system-arm; do
  command -v $tool >/dev/null || { echo "skipped: $tool not installed"; exit 77; }
done
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# the host's int8 output: kiln's interpreter on the same model and input (int8 .npy: the
# last 12 bytes are the data)
[ -x "$KILN" ] || { echo "FAIL: KILN (the kiln executable) not set"; exit 1; }
"$KILN" run "$S/examples/firmware/kws_int8.onnx" --backend interp -q \
  --input input="$S/examples/firmware/kws_input.npy" --output-dir "$T/interp" >"$T/interp.log" 2>&1 ||
  { echo "FAIL: kiln run --backend interp: $(cat "$T/interp.log")"; exit 1; }
host=$(tail -c 12 "$T/interp/output.npy" | od -An -v -td1 | tr -s ' \n' ' ' | sed 's/^ //; s/ $//')
# one board: configure, build, run; its checks go to $T/$b.res as "ok" or "FAIL ..." lines
board() {
  b=$1
  B=$T/$b
  R=$T/$b.res
  if ! cmake -S "$S/examples/firmware" -B "$B" -DBOARD=$b -Dkiln_DIR="$P" >"$T/$b.cfg" 2>&1; then
    echo "FAIL $b: configure: $(tail -5 "$T/$b.cfg")" >>"$R"
    return
  fi
  if ! cmake --build "$B" -j1 >"$T/$b.build" 2>&1; then
    echo "FAIL $b: build: $(grep -m5 -E 'error|Error' "$T/$b.build")" >>"$R"
    return
  fi
  # the tiles' multiply-adds are fused (KN_FMAF on targets with FMA: under the -std=c99 of
  # kiln_add_model GCC would not contract a * b + c); the soft-float M3 has no such
  # instruction; on the M55 they are Helium's vector-by-scalar VFMA (Qd, Qn, Rm)
  fma='vfma\.f32'
  [ $b = mps3-an547 ] && fma='vfma\.f32[[:space:]]*q[0-7], q[0-7], [a-z]'
  if [ $b != mps2-an385 ]; then
    arm-none-eabi-objdump -d $([ $b = mps3-an547 ] && echo -m armv8.1-m.main) \
      "$B/kws_firmware.elf" | grep -q "$fma" && echo ok >>"$R" ||
      echo "FAIL $b: no fused multiply-add ($fma) in the image" >>"$R"
  fi
  timeout 60 qemu-system-arm -machine $b -nographic -semihosting -icount shift=0 \
    -kernel "$B/kws_firmware.elf" >"$T/$b.out" 2>&1
  rc=$?
  [ $rc = 0 ] && echo ok >>"$R" || echo "FAIL $b: QEMU exited with $rc (124: timeout)" >>"$R"
  grep -q "^PASS: max |output - reference|" "$T/$b.out" && echo ok >>"$R" ||
    echo "FAIL $b: outputs: $(cat "$T/$b.out")" >>"$R"
  [ "$(grep -c '^output ' "$T/$b.out")" = 12 ] && echo ok >>"$R" ||
    echo "FAIL $b: not 12 outputs printed" >>"$R"
  n=$(sed -n 's/^instructions per inference: \([0-9]*\) .*/\1/p' "$T/$b.out")
  [ -n "$n" ] && [ "$n" -gt 100000 ] && echo ok >>"$R" || echo "FAIL $b: instruction count '$n'" >>"$R"
  # int8: equal to numpy's reference in the image, and to the host interpreter's output
  grep -q "^PASS: int8 outputs equal to the reference: 12 of 12" "$T/$b.out" && echo ok >>"$R" ||
    echo "FAIL $b: int8 outputs differ from the reference" >>"$R"
  got=$(sed -n 's/^int8 output *[0-9]* *\(-*[0-9]*\) .*/\1/p' "$T/$b.out" | tr '\n' ' ' | sed 's/ $//')
  [ "$got" = "$host" ] && echo ok >>"$R" ||
    echo "FAIL $b: int8 outputs '$got', the host interpreter's '$host'" >>"$R"
  n8=$(sed -n 's/^int8 instructions per inference: \([0-9]*\) .*/\1/p' "$T/$b.out")
  [ -n "$n8" ] && [ "$n8" -gt 100000 ] && echo ok >>"$R" ||
    echo "FAIL $b: int8 instruction count '$n8'" >>"$R"
  # the float model with --arena-in-place-io (kws_io): output equal to kws_run's
  grep -q "^PASS: in-place inputs and outputs .* output equal to kws_run's" "$T/$b.out" &&
    echo ok >>"$R" || echo "FAIL $b: in-place inputs and outputs: $(grep in-place "$T/$b.out")" >>"$R"
  # the int8 model with --memory fast=16K,slow=64K (kws_int8_mem): output equal to
  # kws_int8_run's; on the AN386 the fast region is in the FPGA block RAM (0x01000000)
  line=$(grep "two arena regions" "$T/$b.out")
  echo "$line" | grep -q "^PASS: two arena regions: .* output equal to kws_int8_run's" &&
    echo ok >>"$R" || echo "FAIL $b: two arena regions: '$line'" >>"$R"
  if [ $b = mps2-an386 ]; then
    echo "$line" | grep -q "fast [0-9]* bytes at 0x0100[0-3][0-9a-f]*, slow [0-9]* bytes at 0x20" &&
      echo ok >>"$R" || echo "FAIL $b: fast region not in the block RAM: '$line'" >>"$R"
  fi
  if [ $b = mps3-an547 ]; then # the M55's DTCM (Secure alias)
    echo "$line" | grep -q "fast [0-9]* bytes at 0x300[0-7][0-9a-f]*, slow [0-9]* bytes at 0x31" &&
      echo ok >>"$R" || echo "FAIL $b: fast region not in the DTCM: '$line'" >>"$R"
  fi
  # stack: each model on a painted stack used at most <name>_STACK_BYTES (GCC's call graph,
  # kiln_add_model) plus the most one of the library functions it calls takes (measured in
  # the image the same way), and at least 3/4 of <name>_STACK_BYTES (the bound is the heaviest path's frames, which
  # the run takes: not a loose bound)
  for m in kws kws_int8; do
    line=$(grep "^[A-Z]*: $m stack " "$T/$b.out")
    used=$(echo "$line" | sed -n 's/.* stack \([0-9]*\) bytes, .*/\1/p')
    bound=$(echo "$line" | sed -n 's/.*_STACK_BYTES \([0-9]*\) .*/\1/p')
    lib=$(echo "$line" | sed -n 's/.* + library calls \([0-9]*\) .*/\1/p')
    if [ -n "$used" ] && [ -n "$bound" ] && [ -n "$lib" ] && [ "$used" -le $((bound + lib)) ] &&
      [ $((used * 4)) -ge $((bound * 3)) ]; then echo ok >>"$R"; else
      echo "FAIL $b: $m stack: '$line'" >>"$R"; fi
    eval "stack_$m=\"$used of $bound + $lib\""
  done
  echo "$b: $(grep '^kiln firmware' "$T/$b.out" | cut -d: -f2-); instructions per inference: \
$n float, $n8 int8; stack $stack_kws (float), $stack_kws_int8 (int8) bytes" >"$T/$b.summary"
}
# two boards at a time (the machine's share of cores for a test)
set -- $BOARDS
while [ $# -gt 0 ]; do
  board "$1" &
  [ $# -gt 1 ] && board "$2" &
  wait
  shift $(($# > 1 ? 2 : 1))
done
pass=0
fail=0
for b in $BOARDS; do
  [ -f "$T/$b.summary" ] && cat "$T/$b.summary"
  [ -f "$T/$b.res" ] || { echo "FAIL $b: no result"; fail=$((fail + 1)); continue; }
  pass=$((pass + $(grep -c '^ok$' "$T/$b.res")))
  fail=$((fail + $(grep -c '^FAIL' "$T/$b.res")))
  grep '^FAIL' "$T/$b.res"
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
