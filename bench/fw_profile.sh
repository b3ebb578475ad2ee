#!/bin/bash
# fw_profile.sh KILN MODEL.onnx WORK [kiln compile options...]
#
# Per-kernel profile on an emulated Cortex-M4F (docs/firmware.md): kiln compiles MODEL for
# --target cortex-m4 (plus the options, e.g. --quantize int8 --calibrate x.npy), the FPGA
# counter (0x40028018, one tick per 40 instructions under -icount shift=0) is read around
# every kernel call of the generated model_run, and the image (the fw-compare harness's
# startup and input, HARNESS=/work/shared/fw-compare) runs on QEMU mps2-an386: the second
# run's instructions per kernel, and the whole run's, on stdout ("kN instructions").
# The counter's reads add a few instructions per kernel (included in the total).
# TARGET=cortex-m55: --target cortex-m55 on QEMU mps3-an547 instead (its counter at
# 0x59302018 advances once per 50 instructions; .rodata in the board's DDR, as
# bench/fw_tiny.sh links it).
set -euo pipefail
[ $# -ge 3 ] || { sed -n 2,10p "$0"; exit 2; }
KILN=$(readlink -f "$1"); ONNX=$(readlink -f "$2"); WORK=$3; shift 3
H=${HARNESS:-/work/shared/fw-compare}
mkdir -p "$WORK"
TARGET=${TARGET:-cortex-m4}
case $TARGET in
cortex-m4) MACH=mps2-an386 CNT=0x40028018u IPT=40 LD="$H/mps2.ld"
  CF="-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16" ;;
cortex-m55) MACH=mps3-an547 CNT=0x59302018u IPT=50 LD="$WORK/an547.ld"
  CF="-mcpu=cortex-m55 -mthumb -mfloat-abi=hard"
  cat > "$LD" <<'EOL'
MEMORY { FLASH (rx) : ORIGIN = 0x10000000, LENGTH = 512K
         RAM (rwx)  : ORIGIN = 0x31000000, LENGTH = 4M
         DDR (rx)   : ORIGIN = 0x70000000, LENGTH = 16M
}
ENTRY(Reset_Handler)
SECTIONS {
  .text : { KEEP(*(.vectors)) *(.text*) KEEP(*(.init)) KEEP(*(.fini)) . = ALIGN(4); } > FLASH
  .ARM.exidx : { *(.ARM.exidx*) } > FLASH
  .eh_frame : { *(.eh_frame*) } > FLASH
  __etext = .;
  .rodata : { *(.rodata*) . = ALIGN(4); } > DDR
  .data : AT(__etext) { __data_start__ = .; *(.data*) . = ALIGN(4); __data_end__ = .; } > RAM
  .bss (NOLOAD) : AT(ADDR(.bss)) { __bss_start__ = .; *(.bss*) *(COMMON) . = ALIGN(4); __bss_end__ = .; } > RAM
  end = .; __end__ = .;
  __StackTop = ORIGIN(RAM) + LENGTH(RAM);
  __stack = __StackTop;
}
EOL
  ;;
*) echo "TARGET: cortex-m4 or cortex-m55" >&2; exit 2 ;;
esac
"$KILN" compile "$ONNX" -o "$WORK" --name model --emit c --target $TARGET "$@" > "$WORK/kiln.log" 2>&1
read -r ishape outn _ < <(/usr/bin/python3 "$H/fw_meta.py" "$ONNX")
/usr/bin/python3 - "$WORK/model.c" "$CNT" <<'EOF'
import re, sys
p = sys.argv[1]; src = open(p).read()
head, run = src.split("int model_run(const float *in0", 1)
body, tail = run.split("\n}\n", 1)
body = re.sub(r"^(\s*)(model_k(\d+)\(.*\);)$",
              lambda m: f"{m[1]}{{ uint32_t t_ = KN_CNT; {m[2]} kn_prof[{m[3]}] += KN_CNT - t_; }}",
              body, flags=re.M)
prof = ("#define KN_CNT (*(volatile uint32_t *)" + sys.argv[2] + ")\nuint32_t kn_prof[1024];\n")
open(p, "w").write(head + prof + "int model_run(const float *in0" + body + "\n}\n" + tail)
EOF
cat > "$WORK/prof_main.c" <<EOF
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#define FPGA_COUNTER (*(volatile uint32_t *)$CNT)
extern uint32_t kn_prof[1024];
void entry(const float in IN_SHAPE, float out[1][OUT_N]);
static float input IN_SHAPE;
static float output[1][OUT_N];
int main(void) {
  float *p = (float *)input; unsigned n = sizeof(input) / sizeof(float), s = 12345;
  for (unsigned i = 0; i < n; i++) { s = s * 1103515245u + 12345u; p[i] = (float)((s >> 9) & 0xFFFF) / 65536.0f - 0.5f; }
  entry(input, output);
  memset(kn_prof, 0, sizeof kn_prof);
  uint32_t t0 = FPGA_COUNTER;
  entry(input, output);
  uint32_t t1 = FPGA_COUNTER;
  for (int k = 0; k < 1024; k++)
    if (kn_prof[k]) printf("k%d %lu\n", k, ${IPT}ul * kn_prof[k]);
  printf("total %lu out0 %f\n", ${IPT}ul * (t1 - t0), (double)output[0][0]);
  return 0;
}
EOF
FL="$CF -O2 -ffunction-sections -fdata-sections"
arm-none-eabi-gcc $FL --specs=rdimon.specs -nostartfiles -T "$LD" -Wl,--gc-sections -I"$WORK" \
  "-DIN_SHAPE=$ishape" -DOUT_N="$outn" "$H/startup.c" "$WORK/prof_main.c" "$H/kiln_entry.c" \
  "$WORK/model.c" -o "$WORK/prof.elf" -lm
timeout 300 qemu-system-arm -machine $MACH -nographic -semihosting -icount shift=0 \
  -kernel "$WORK/prof.elf"
