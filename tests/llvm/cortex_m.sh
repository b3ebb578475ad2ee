#!/bin/sh
# kiln compile --emit obj for every Cortex-M target: an ELF object for that CPU exporting
# NAME_run and needing no allocator; with the hard-float ABI and FPU instructions on the
# M4, M7, M33 and M55 (Helium vectors), soft-float calls on the M3 and M0+.
# Running it on an emulated board is the firmware tests' job. Also: --emit obj, asm
# and llvm give byte-identical files when run twice.
# usage: cortex_m.sh KILN SOURCE_DIR
KILN=$1
EX=$2/examples/digits
. "$2/tests/lib.sh"
if ! command -v arm-none-eabi-readelf >/dev/null; then
  echo "arm-none-eabi binutils missing (tools/setup.sh installs gcc-arm-none-eabi)"
  exit 1
fi
# hard-float targets: linked with the flags `kiln help --cc-flags` gives (ld checks the
# ABI attributes); soft-float ones: Thumb code calling libgcc, no FPU instruction.
printf 'int digits_run(const float *, float *, void *);\nstatic float x[64], y[10];\n_Alignas(64) static unsigned char arena[4096];\nint main(void) { return digits_run(x, y, arena); }\n' >"$T/main.c"
for t in cortex-m4 cortex-m7 cortex-m33 cortex-m55 cortex-m3 cortex-m0plus; do
  o=$T/$t/digits.o
  "$KILN" compile "$EX/digits.onnx" -o "$T/$t" --name digits --shape image=1,1,8,8 \
    --emit obj --target $t >/dev/null && [ -s "$o" ] && ok || bad "$t: compile"
  flags=$("$KILN" help --cc-flags $t)
  case "$flags" in -mcpu=$t\ -mthumb\ *) ok ;; *) bad "$t: cc flags '$flags'" ;; esac
  arm-none-eabi-readelf -h "$o" >"$T/h" 2>&1
  arm-none-eabi-readelf -A "$o" >"$T/a" 2>&1
  arm-none-eabi-nm "$o" >"$T/nm" 2>&1
  # binutils shows Helium instructions only when told the architecture
  arm-none-eabi-objdump -d $([ $t = cortex-m55 ] && echo -m armv8.1-m.main) "$o" >"$T/d" 2>&1
  grep -q 'Machine: *ARM' "$T/h" && ok || bad "$t: not an ARM ELF"
  grep -qi "Tag_CPU_name: \"$t\"" "$T/a" && ok || bad "$t: CPU attribute: $(grep CPU_name "$T/a")"
  grep -q ' T digits_run$' "$T/nm" && ok || bad "$t: digits_run not exported"
  grep -qE ' U (malloc|calloc|realloc|free)$' "$T/nm" && bad "$t: calls the allocator" || ok
  case $t in
  cortex-m0plus | cortex-m3)
    grep -q 'Tag_ABI_VFP_args: VFP registers' "$T/a" && bad "$t: hard-float ABI" || ok
    grep -qE 'vfma|vmla|vadd\.f32|vmul\.f32|vldr' "$T/d" && bad "$t: FPU instructions" || ok
    grep -qE 'bl.*<__(mulsf3|aeabi_fmul)>' "$T/d" && ok || bad "$t: no soft-float multiply"
    isa=$([ $t = cortex-m3 ] && echo Thumb-2 || echo Thumb-1)
    grep -q "Tag_THUMB_ISA_use: $isa" "$T/a" && ok || bad "$t: not $isa"
    ;;
  *)
    grep -q 'Tag_ABI_VFP_args: VFP registers' "$T/a" && ok || bad "$t: not the hard-float ABI"
    grep -qE 'vfma|vmla|vadd\.f32|vmul\.f32' "$T/d" && ok || bad "$t: no FPU instructions"
    # Helium: the 128-bit tiles are MVE vector loads and multiply-adds
    if [ $t = cortex-m55 ]; then
      grep -qE 'vldrw\.u32' "$T/d" && grep -qE 'vfma\.f32\s+q' "$T/d" && ok ||
        bad "cortex-m55: no MVE vector instructions"
    fi
    ;;
  esac
  # every target links, the M0+ too: the Armv6-M libgcc has only the __aeabi_ names of
  # the soft-float helpers, which LLVM uses since kiln normalizes the triple (its EABI
  # environment; before, __mulsf3 and no M0+ link)
  # shellcheck disable=SC2086
  arm-none-eabi-gcc $flags --specs=nosys.specs -O1 "$T/main.c" "$o" -lm -o "$T/$t.elf" \
    2>"$T/ld" && ok || bad "$t: does not link: $(head -3 "$T/ld")"
done
# an int8 model whose requantization is double arithmetic, softened on the single-
# precision FPUs: the helpers must be libgcc's __aeabi_* (base AAPCS) and not the GNU
# names LLVM used when the triple's EABI environment was lost (then libm's nearbyint
# got its double in r0:r1 instead of d0; tests/quant/cortex_m4.sh obj runs it)
# (the M55's FPU has double precision: no helper at all)
for t in cortex-m4 cortex-m33 cortex-m55 cortex-m3; do
  "$KILN" compile "$2/tests/quant/models/qlinear_cnn/model.onnx" -o "$T/q$t" --name q \
    --emit obj --target $t >/dev/null && ok || bad "$t: qlinear_cnn compile"
  arm-none-eabi-nm "$T/q$t/q.o" >"$T/nm" 2>&1
  [ $t = cortex-m55 ] || { grep -q ' U __aeabi_dmul$' "$T/nm" && ok || bad "$t: no __aeabi_dmul"; }
  grep -qE ' U __(muldf3|adddf3|floatsidf)$' "$T/nm" && bad "$t: GNU-named double helpers" || ok
done
# reproducible: the same model compiled twice, in other folders, gives the same bytes
for e in obj asm llvm; do
  "$KILN" compile "$EX/digits.onnx" -o "$T/r1" --name d --shape image=1,1,8,8 --emit $e --target cortex-m4 >/dev/null
  sleep 1
  (cd "$T" && "$KILN" compile "$EX/digits.onnx" -o r2 --name d --shape image=1,1,8,8 --emit $e --target cortex-m4 >/dev/null)
  ext=$([ $e = obj ] && echo o || ([ $e = asm ] && echo s || echo ll))
  cmp -s "$T/r1/d.$ext" "$T/r2/d.$ext" && cmp -s "$T/r1/d.h" "$T/r2/d.h" && ok || bad "--emit $e differs between runs"
done
finish
