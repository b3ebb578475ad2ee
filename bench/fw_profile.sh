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
set -euo pipefail
[ $# -ge 3 ] || { sed -n 2,10p "$0"; exit 2; }
KILN=$(readlink -f "$1"); ONNX=$(readlink -f "$2"); WORK=$3; shift 3
H=${HARNESS:-/work/shared/fw-compare}
mkdir -p "$WORK"
"$KILN" compile "$ONNX" -o "$WORK" --name model --emit c --target cortex-m4 "$@" > "$WORK/kiln.log" 2>&1
read -r ishape outn _ < <(/usr/bin/python3 "$H/fw_meta.py" "$ONNX")
/usr/bin/python3 - "$WORK/model.c" <<'EOF'
import re, sys
p = sys.argv[1]; src = open(p).read()
head, run = src.split("int model_run(const float *in0", 1)
body, tail = run.split("\n}\n", 1)
body = re.sub(r"^(\s*)(model_k(\d+)\(.*\);)$",
              lambda m: f"{m[1]}{{ uint32_t t_ = KN_CNT; {m[2]} kn_prof[{m[3]}] += KN_CNT - t_; }}",
              body, flags=re.M)
prof = ("#define KN_CNT (*(volatile uint32_t *)0x40028018u)\nuint32_t kn_prof[1024];\n")
open(p, "w").write(head + prof + "int model_run(const float *in0" + body + "\n}\n" + tail)
EOF
cat > "$WORK/prof_main.c" <<EOF
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#define FPGA_COUNTER (*(volatile uint32_t *)0x40028018u)
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
    if (kn_prof[k]) printf("k%d %lu\n", k, 40ul * kn_prof[k]);
  printf("total %lu out0 %f\n", 40ul * (t1 - t0), (double)output[0][0]);
  return 0;
}
EOF
FL="-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 -O2 -ffunction-sections -fdata-sections"
arm-none-eabi-gcc $FL --specs=rdimon.specs -nostartfiles -T "$H/mps2.ld" -Wl,--gc-sections -I"$WORK" \
  "-DIN_SHAPE=$ishape" -DOUT_N="$outn" "$H/startup.c" "$WORK/prof_main.c" "$H/kiln_entry.c" \
  "$WORK/model.c" -o "$WORK/prof.elf" -lm
timeout 300 qemu-system-arm -machine mps2-an386 -nographic -semihosting -icount shift=0 \
  -kernel "$WORK/prof.elf"
