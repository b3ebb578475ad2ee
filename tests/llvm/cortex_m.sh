#!/bin/sh
# kiln compile --emit obj for Cortex-M4F and M7: a Thumb-2 ELF object with the
# hard-float ABI, using the FPU, exporting NAME_run, needing no allocator.
# Running it on an emulated board is the firmware tests' job. Also: --emit obj, asm
# and llvm give byte-identical files when run twice.
# usage: cortex_m.sh KILN SOURCE_DIR
KILN=$1
EX=$2/examples/digits
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
if ! command -v arm-none-eabi-readelf >/dev/null; then
  echo "arm-none-eabi binutils missing (tools/setup.sh installs gcc-arm-none-eabi)"
  exit 1
fi
for t in cortex-m4 cortex-m7; do
  o=$T/$t/digits.o
  "$KILN" compile "$EX/digits.onnx" -o "$T/$t" --name digits --shape image=1,1,8,8 \
    --emit obj --target $t >/dev/null && [ -s "$o" ] && ok || bad "$t: compile"
  arm-none-eabi-readelf -h "$o" >"$T/h" 2>&1
  # links into a hard-float firmware image (ld checks the ABI attributes)
  printf 'int digits_run(const float *, float *, void *);\nstatic float x[64], y[10];\n_Alignas(64) static unsigned char arena[4096];\nint main(void) { return digits_run(x, y, arena); }\n' >"$T/main.c"
  arm-none-eabi-gcc -mcpu=$t -mthumb -mfloat-abi=hard -mfpu=$([ $t = cortex-m4 ] && echo fpv4-sp-d16 || echo fpv5-d16) \
    --specs=nosys.specs -O1 "$T/main.c" "$o" -lm -o "$T/$t.elf" 2>"$T/ld" && ok || bad "$t: does not link: $(head -3 "$T/ld")"
  arm-none-eabi-readelf -A "$o" >"$T/a" 2>&1
  arm-none-eabi-nm "$o" >"$T/nm" 2>&1
  arm-none-eabi-objdump -d "$o" >"$T/d" 2>&1
  grep -q 'Machine: *ARM' "$T/h" && ok || bad "$t: not an ARM ELF"
  grep -q 'Tag_ABI_VFP_args: VFP registers' "$T/a" && ok || bad "$t: not the hard-float ABI"
  grep -qi "Tag_CPU_name: \"$t\"" "$T/a" && ok || bad "$t: CPU attribute: $(grep CPU_name "$T/a")"
  grep -q 'Tag_THUMB_ISA_use: Thumb-2' "$T/a" && ok || bad "$t: not Thumb-2"
  grep -q ' T digits_run$' "$T/nm" && ok || bad "$t: digits_run not exported"
  grep -qE ' U (malloc|calloc|realloc|free)$' "$T/nm" && bad "$t: calls the allocator" || ok
  grep -qE 'vfma|vmla|vadd\.f32|vmul\.f32' "$T/d" && ok || bad "$t: no FPU instructions"
done
# reproducible: the same model compiled twice, in other folders, gives the same bytes
for e in obj asm llvm; do
  "$KILN" compile "$EX/digits.onnx" -o "$T/r1" --name d --shape image=1,1,8,8 --emit $e --target cortex-m4 >/dev/null
  sleep 1
  (cd "$T" && "$KILN" compile "$EX/digits.onnx" -o r2 --name d --shape image=1,1,8,8 --emit $e --target cortex-m4 >/dev/null)
  ext=$([ $e = obj ] && echo o || ([ $e = asm ] && echo s || echo ll))
  cmp -s "$T/r1/d.$ext" "$T/r2/d.$ext" && cmp -s "$T/r1/d.h" "$T/r2/d.h" && ok || bad "--emit $e differs between runs"
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
