#!/bin/bash
# fw_tiny.sh KILN MODEL_DIR WORK [HARNESS]
#
# docs/firmware.md, "kiln float and int8 on the M4 and the M55": builds every model of
# bench/make_tiny_models.py (MODEL_DIR/<name>.onnx, <name>_in.npy) float and int8
# (--quantize int8 --calibrate <name>_in.npy) for --target cortex-m4 (QEMU mps2-an386) and
# --target cortex-m55 (mps3-an547, .rodata in the board's DDR at 0x70000000: its 512 KB code
# memory is too small for the larger models), with the fw-compare harness (HARNESS, default
# /work/shared/fw-compare: startup.c, main_entry.c, kiln_entry.c), runs each image under
# QEMU with -icount shift=0 and prints one row per model and build:
#   instructions = FPGA counter ticks around the second call of model_run (RUNS=1 after one
#                  warm-up) x instructions per tick (40 on the MPS2 boards' 25 MHz counter,
#                  50 on the an547's 20 MHz one: docs/firmware.md, CTest)
#   flash        = text + data of the model object (code and weights), M4 build
#   arena        = model_ARENA_SIZE (the model object has no other RAM); lower bound as
#                  printed by kiln compile
# Env: MODELS (default: the five), BUILDS (default: float int8), TARGETS (default: cortex-m4
# cortex-m55), QEMU_TIMEOUT (300 s). Writes WORK/results.tsv.
set -uo pipefail
[ $# -ge 3 ] || { sed -n 2,18p "$0"; exit 2; }
KILN=$(readlink -f "$1"); MD=$(readlink -f "$2"); WORK=$3
H=${4:-/work/shared/fw-compare}
MODELS=${MODELS:-"kws_dscnn vww_mbv1_025 ic_resnet8 ad_fcae mbv2_035_96"}
QEMU_TIMEOUT=${QEMU_TIMEOUT:-300}
mkdir -p "$WORK"

# board table: target | machine | cc flags | flash | ram | ddr | counter | instructions per tick
board() {
  case $1 in
  cortex-m4) echo "mps2-an386|-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16|0x00000000|0x20000000||0x40028018u|40" ;;
  cortex-m55) echo "mps3-an547|-mcpu=cortex-m55 -mthumb -mfloat-abi=hard|0x10000000|0x31000000|0x70000000|0x59302018u|50" ;;
  esac
}

linker_script() { # flash ram ddr -> script on stdout
  local rodata='*(.rodata*)' ddr= flen=4M
  if [ -n "$3" ]; then rodata=; flen=512K; ddr="  .rodata : { *(.rodata*) . = ALIGN(4); } > DDR"; fi
  cat <<EOF
MEMORY { FLASH (rx) : ORIGIN = $1, LENGTH = $flen
         RAM (rwx)  : ORIGIN = $2, LENGTH = 4M
${3:+         DDR (rx)   : ORIGIN = $3, LENGTH = 16M}
}
ENTRY(Reset_Handler)
SECTIONS {
  .text : { KEEP(*(.vectors)) *(.text*) $rodata
    KEEP(*(.init)) KEEP(*(.fini)) . = ALIGN(4); } > FLASH
  .ARM.exidx : { *(.ARM.exidx*) } > FLASH
  .eh_frame : { *(.eh_frame*) } > FLASH
  __etext = .;
$ddr
  .data : AT(__etext) { __data_start__ = .; *(.data*) . = ALIGN(4); __data_end__ = .; } > RAM
  .bss (NOLOAD) : AT(ADDR(.bss)) { __bss_start__ = .; *(.bss*) *(COMMON) . = ALIGN(4); __bss_end__ = .; } > RAM
  end = .; __end__ = .;
  __StackTop = ORIGIN(RAM) + LENGTH(RAM);
  __stack = __StackTop;
}
EOF
}

printf "model\tbuild\ttarget\tinstr\tflash\tarena\tlower\tout0\n" > "$WORK/results.tsv"
for m in $MODELS; do
  onnx=$MD/$m.onnx; npy=$MD/${m}_in.npy
  read -r ishape outn _ < <(/usr/bin/python3 "$H/fw_meta.py" "$onnx")
  for build in ${BUILDS:-float int8}; do
    q=; [ $build = int8 ] && q="--quantize int8 --calibrate $npy"
    for t in ${TARGETS:-cortex-m4 cortex-m55}; do
      IFS='|' read -r mach cf fl ram ddr cnt ipt < <(board $t)
      d=$WORK/$m/$build/$t; rm -rf "$d"; mkdir -p "$d"
      if ! "$KILN" compile "$onnx" -o "$d" --name model --emit c --target $t $q > "$d/kiln.log" 2>&1; then
        echo "$m $build $t: kiln failed ($d/kiln.log)"; continue; fi
      lower=$(sed -n 's/.*lower bound \([0-9]*\).*/\1/p' "$d/kiln.log")
      arena=$(awk '/define model_ARENA_SIZE/ {print $3}' "$d/model.h")
      sed "s/0x40028018u/$cnt/" "$H/main_entry.c" > "$d/main_entry.c"
      linker_script "$fl" "$ram" "$ddr" > "$d/board.ld"
      FL="$cf -O2 -ffunction-sections -fdata-sections"
      arm-none-eabi-gcc $FL -c "$d/model.c" -o "$d/model.o" > "$d/cc.log" 2>&1 &&
      arm-none-eabi-gcc $FL --specs=rdimon.specs -nostartfiles -T "$d/board.ld" -Wl,--gc-sections \
        -I"$d" "-DIN_SHAPE=$ishape" -DOUT_N=$outn -DRUNS=1 "$H/startup.c" "$d/main_entry.c" \
        "$H/kiln_entry.c" "$d/model.o" -o "$d/fw.elf" -lm >> "$d/cc.log" 2>&1 ||
        { echo "$m $build $t: cc failed ($d/cc.log)"; continue; }
      flash=$(arm-none-eabi-size "$d/model.o" | awk 'NR == 2 {print $1 + $2}')
      timeout "$QEMU_TIMEOUT" qemu-system-arm -machine $mach -nographic -semihosting \
        -icount shift=0 -kernel "$d/fw.elf" > "$d/run.log" 2>&1
      ticks=$(awk '/^ticks_per_run/ {print $2}' "$d/run.log")
      out0=$(awk '/^ticks_per_run/ {print $4}' "$d/run.log")
      [ -n "$ticks" ] || { echo "$m $build $t: run failed ($d/run.log)"; continue; }
      printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" $m $build $t $((ticks * ipt)) $flash $arena \
        "$lower" "$out0" | tee -a "$WORK/results.tsv"
    done
  done
done
