#!/bin/sh
# kiln compile --emit obj writes weights of 1 KiB and more into a section of its own,
# .rodata.NAME_weights, beside the code LLVM wrote (codegen/llvm/elf.c): for an ELF64
# (x86-64, AArch64) and an ELF32 (Cortex-M4) target the section is there, 64-byte
# aligned, its symbol NAME_weights is defined in it (hidden, an object of the section's
# size) and no longer undefined, and lld links the object. (The smaller weights stay
# LLVM constants, which it may fold into the code.) Running such an object is llvm_object's job (the digits model, whose
# three bigger weights go to the section); linking a Cortex-M image, llvm_cortex_m's.
# usage: weights_section.sh KILN SOURCE_DIR
KILN=$1
EX=$2/examples/digits
. "$2/tests/lib.sh"
RE=$(command -v llvm-readelf-19 || command -v llvm-readelf)
LLD=$(command -v ld.lld-19 || command -v ld.lld)
[ -n "$RE" ] || { echo "llvm-readelf missing (llvm-19)"; exit 1; }
for t in x86-64-avx2 aarch64 cortex-m4; do
  o=$T/$t/digits.o
  "$KILN" compile "$EX/digits.onnx" -o "$T/$t" --name digits --shape image=1,1,8,8 --emit obj \
    --target $t -q && ok || bad "$t: compile"
  "$RE" -S -W "$o" >"$T/s" 2>&1 && "$RE" -s -W "$o" >"$T/sym" 2>&1 || bad "$t: readelf: $(cat "$T/s")"
  sec=$(sed -n 's/^ *\[ *\([0-9]*\)\] \.rodata\.digits_weights  *PROGBITS .*/\1/p' "$T/s")
  sed 's/^ *\[ *[0-9]*\] //' "$T/s" >"$T/s2" # Name Type Address Off Size ES Flg Lk Inf Al
  size=$(awk '$1 == ".rodata.digits_weights" { print "0x" $5 }' "$T/s2")
  size=$((${size:-0}))
  al=$(awk '$1 == ".rodata.digits_weights" { print $NF }' "$T/s2")
  [ -n "$sec" ] && [ "$al" = 64 ] && ok || bad "$t: no 64-byte aligned .rodata.digits_weights: $(cat "$T/s")"
  # Num Value Size Type Bind Vis Ndx Name
  awk -v s="$sec" -v n="$size" '$8 == "digits_weights" && $3 == n && $4 == "OBJECT" &&
    $6 == "HIDDEN" && $7 == s { f = 1 } END { exit !f }' "$T/sym" && ok ||
    bad "$t: digits_weights is not the section's ($sec, $size bytes): $(grep weights "$T/sym")"
  grep -q 'UND digits_weights' "$T/sym" && bad "$t: digits_weights still undefined" || ok
  if [ -n "$LLD" ] && [ $t != cortex-m4 ]; then
    "$LLD" -e digits_run --unresolved-symbols=ignore-all "$o" -o "$T/$t.elf" 2>"$T/ld" && ok ||
      bad "$t: lld does not link it: $(head -3 "$T/ld")"
  fi
done
finish
