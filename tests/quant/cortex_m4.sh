#!/bin/sh
# The quantized models' C for Cortex-M4 (--emit c --target cortex-m4: integer tiles
# with the s16x2 dot, SMLAD through __ARM_FEATURE_DSP) built with arm-none-eabi-gcc into
# an image for QEMU's mps2-an386 board (tests/quant/m4: vector table, reset, linker
# script), run there, and every output byte compared with the reference inside the
# image. With EMIT=obj, the same with the LLVM backend's object (--emit obj --target
# cortex-m4) linked instead of the generated C. Exit 77 (skipped) without
# arm-none-eabi-gcc or qemu-system-arm. With TARGET cortex-m55: the models that take
# Helium's reduction tiles (VMLADAVA.S8, tests/quant/make_red16.py; kt_tile.wide in
# passes/tile.c) and two with 1x1 convolutions of 16 and 32 channels, for
# --target cortex-m55 on QEMU's mps3-an547 (the same startup, its memory map: code at
# 0x10000000, RAM at 0x31000000), each image checked to contain vmlava.s8, and
# quantize_ties (QuantizeLinear's edge values, tests/quant/make_quantize_ties.py). ptq_add
# (and on the M55 ptq_add_tail and ptq_dw, tests/quant/make_ptq_add.py) is quantized by --quantize here (its fixed-point
# residual adds) and compared with the host interpreter's output for it.
# usage: cortex_m4.sh KILN SOURCE_DIR [c|obj] [cortex-m4|cortex-m55]
KILN=$1
S=$2
EMIT=${3:-c}
TARGET=${4:-cortex-m4}
. "$2/tests/lib.sh"
MODELS="qlinear_cnn qlinear_odd integer_ops pw_split_s8 pw_split_u8 pw_pairs_s8 pw_pairs_c8 pw_pairs_c32
  cw_pairs_c16 cw_pairs_c64 cpair_s8 cpair_u8 cpair_c3 stem_words_c3 stem_words_c2 stem_words_b2
  stem_words_s4 mm_split_s8 mm_split_u8 mm_odd_s8 mm_red16_u8 mm_red16_s8 conv_zp0_u8 conv_zp0_s8
  dw_words_s8 dw_words_u8 dw_words_s2 dw_words_s2w dw_words_z1
  fixed/qdq_fixed fixed/qdq_depthwise fixed/qdq_pointwise fixed/qdq_pointwise_part ptq/ptq_add
  quantize_ties qdq_add dq_pool q_planes dynq/dynq_mlp dynq/dynq_cnn"
CFLAGS="-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16"
MACHINE=mps2-an386 LD=$S/tests/quant/m4/link.ld
if [ "$TARGET" = cortex-m55 ]; then
  MODELS="red16_s8 red16_u8 red16_tiles mm_red16_u8 mm_red16_s8 qlinear_pointwise fixed/qdq_pointwise_part
    dw_words_s8 dw_words_u8 dw_words_s2 dw_words_z1 dw_mve_u8 dw_mve_k5 dw_mve_pad dw_mve_n5 dw_mve_s2
    fixed/qdq_depthwise
    fixed/qdq_dw_dot fixed/qdq_block ptq/ptq_add ptq/ptq_add_tail ptq/ptq_dw dq_tail quantize_ties
    dq_pool q_planes"
  CFLAGS="-mcpu=cortex-m55 -mthumb -mfloat-abi=hard"
  MACHINE=mps3-an547 LD=$T/an547.ld
  sed -e 's/ORIGIN = 0x00000000, LENGTH = 4M/ORIGIN = 0x10000000, LENGTH = 512K/' \
    -e 's/ORIGIN = 0x20000000/ORIGIN = 0x31000000/' "$S/tests/quant/m4/link.ld" >"$LD"
fi
for tool in arm-none-eabi-gcc qemu-system-arm; do
  command -v $tool >/dev/null || { echo "$tool missing: skipped"; exit 77; }
done
esize() { case $1 in i8 | u8 | bool) echo 1 ;; i16 | u16 | f16 | bf16) echo 2 ;; i64 | u64 | f64) echo 8 ;; *) echo 4 ;; esac; }
macro() { sed -n "s/^#define m_$1 \"*\([^\"]*\)\"*$/\1/p" "$2"; }
# bytes: the last N bytes of a TensorProto written by numpy_helper (raw_data, its last field)
carray() { # name, file, bytes
  printf 'static _Alignas(8) const unsigned char %s[%d] = {' "$1" "$3"
  tail -c "$3" "$2" | od -An -v -tu1 | tr -s ' \n' '\n\n' | grep . | paste -sd, -
  printf '};\n'
}
# pw_split_*, pw_pairs_s8: 1x1 convolutions in split-word tiles (SXTB16 for int8 input, UXTB16 for
# uint8, then SMLAD; tests/quant/make_pw_split.py; on the M4 the stride-1 ones split once
# into i64 pairs per tile of pixels, 2 x 2 or 2 x 3 tiles with weight pairs, split=4 in
# the schedule); cpair_*: one- and three-channel convolutions in
# column-pair tiles (split=3 in the schedule; tests/quant/make_cpair.py); mm_split_*:
# QLinearMatMul in split-word tiles, each row's 4 inputs one (unaligned) word load, then
# SXTB16/UXTB16 (split=1; tests/quant/make_mm_split.py; on the M4 the words split once
# into i64 pairs and the weights packed as pairs, both read by LDRD; mm_red16_*: on the
# M55 reduction words, VMLADAVA.S8); qlinear_cnn's conv2 (3x3, 2 groups of 4 channels,
# stride 2) and integer_ops' conv (3x3, 4 channels): split words over a window, 2 x 3
# tiles with unrolled kernel columns; conv_zp0_*: channel-pair
# tiles with unrolled kernel columns and no padding taps (input zero point 0;
# tests/quant/make_conv_zp0.py); dw_words_*: depthwise 3-tap rows in row-word SMLAD
# tiles (a word of 4 row bytes split by SXTB16/UXTB16; split=1 in the schedule;
# tests/quant/make_dw_words.py); fixed/*: the qdq
# pass's fixed-point QLinear nodes (tests/quant/make_qdq_fixed.py), requantized in 32-bit
# arithmetic and saturated by SSAT (int8 outputs) and USAT (uint8)
for m in $MODELS; do
  M=$S/tests/quant/models/$m
  # ptq/*: a float model quantized by --quantize (its fixed-point adds, ir/requant.h
  # kn_qadd), the reference the host interpreter's output for the same quantization
  Q= REF=
  case $m in fixed/* | dynq/*) M=$S/tests/quant/$m ;; ptq/*) M=$S/tests/quant/${m#ptq/} ;; esac
  case $m in ptq/*) Q="--quantize int8 --calibrate $M/calib.npy" ;; esac
  m=${m#fixed/} m=${m#ptq/} m=${m#dynq/}
  D=$T/$m
  # qdq_block's 96 -> 24 projection (int8 out) kept in the 2 x 4 reduction tile whose
  # 4-channel vector requantization and int8 clamp the checks below look for (by default
  # a 2 x 3 tile since passes/tile.c red16_narrow; red16_tiles checks those shapes)
  SC=
  [ $m = qdq_block ] && [ "$TARGET" = cortex-m55 ] && {
    printf "kernel 5 'b2p_conv' QLinearConv tile_rows=2 tile_vecs=4\n" >"$T/$m.in.sched"
    SC="--schedule $T/$m.in.sched"
  }
  "$KILN" compile "$M/model.onnx" -o "$D" --name m --emit $EMIT --target $TARGET $Q $SC \
    --dump-schedule "$T/$m.sched" >/dev/null 2>"$T/$m.log" || { bad "$m: compile"; continue; }
  if [ -n "$Q" ]; then
    "$KILN" run "$M/model.onnx" $Q --input "x=$M/test_data_set_0/input_0.pb" --backend interp \
      --output-dir "$D/ref" -q || { bad "$m: reference"; continue; }
    REF=$(ls "$D"/ref/*.npy)
  fi
  case $m in
  cpair_c3) # 3 channels over a window: split words of 3 channels and a 0, pre-split
    grep -q "'stem' QLinearConv .* split=4" "$T/$m.sched" && ok ||
      bad "$m: no split-word tile: $(cat "$T/$m.sched")" ;;
  cw_pairs_*) # 3x3 windows over pre-split pairs, their 4, 8 and 16 channel groups in one trip
    [ "$TARGET" = cortex-m55 ] || { grep -q "'cw' QLinearConv .* split=4" "$T/$m.sched" && ok ||
      bad "$m: no pre-split pairs: $(cat "$T/$m.sched")"; } ;;
  stem_words_s4) # the merged pairs, the kept kernel rows moved by one copy (passes/tile.c,
    # sp_keeps)
    grep -q "'stem' QLinearConv .* split=5" "$T/$m.sched" && ok ||
      bad "$m: no merged pairs: $(cat "$T/$m.sched")"
    [ $EMIT = obj ] || { grep -q "memmove(s[0-9]* + 0, s" "$D/m.c" && ok ||
      bad "$m: the kept kernel rows not moved"
      # its 3 blocks of 2 channels unrolled inside the tiles of pixels, the weights through
      # the kept pointer and the scratch's words as kept loads (sp_blocks_inside)
      grep -q "KN_UNROLL(3)" "$D/m.c" && grep -q "(const int64_t \*)kn_keep(c" "$D/m.c" &&
        grep -q "(const int32_t \*)kn_keep(s[0-9]* + v" "$D/m.c" && ok ||
        bad "$m: the blocks of channels not unrolled over the tiles"; } ;;
  cpair_*) grep -q "'stem' QLinearConv .* split=3" "$T/$m.sched" && ok ||
    bad "$m: no column-pair tile: $(cat "$T/$m.sched")" ;;
  pw_split_* | pw_pairs_*) # the M4: stride-1 1x1 in pointwise pairs (2 x 2 or 2 x 3 tiles over widened pairs)
    [ "$TARGET" = cortex-m55 ] || {
      grep -q "'pw1\{0,1\}\(band0\)\{0,1\}' QLinearConv .* tile_vecs=[23] .* split=4" "$T/$m.sched" && ok ||
        bad "$m: no pointwise-pair tile: $(cat "$T/$m.sched")"
    } ;;
  mm_split_* | mm_odd_s8) grep -q "'mm' QLinearMatMul .* split=1" "$T/$m.sched" && ok ||
    bad "$m: no split-word tile: $(cat "$T/$m.sched")" ;;
  dw_words_s8 | dw_words_z1 | dw_words_s2 | dw_words_u8 | dw_mve_*) # Helium's i32 vector
    # tiles on the M55 (stride 2 along the row: rows of 16 outputs or more through the
    # padded plane's two phases, shorter ones as strided loads, dw_words_u8's rows of 5);
    # 3 output rows a tile where they read x in place (tile_vecs=3), 1 in the plane
    if [ "$TARGET" = cortex-m55 ]; then
      grep -q "'dw' QLinearConv tile_rows=1 tile_vecs=[13] lanes=4 tasks=1 pad=1$" "$T/$m.sched" &&
        ok || bad "$m: no Helium vector tile: $(cat "$T/$m.sched")"
    else
      case $m in dw_mve_*) ;; *) grep -q "'dw' QLinearConv .* split=1" "$T/$m.sched" && ok ||
        bad "$m: no row-word tile: $(cat "$T/$m.sched")" ;; esac
    fi ;;
  dw_words_*) grep -q "'dw' QLinearConv .* split=1" "$T/$m.sched" && ok ||
    bad "$m: no row-word tile: $(cat "$T/$m.sched")" # dw_words_u8: stride 2, rows of 5
    # stride 2, rows of 13 outputs: tiles of 8 words (passes/depthwise.c DW_WORDS_NU8_MIN)
    [ $m != dw_words_s2w ] || [ "$TARGET" = cortex-m55 ] ||
      { grep -q "'dw' QLinearConv tile_rows=8 " "$T/$m.sched" && ok ||
        bad "$m: not in tiles of 8 words: $(cat "$T/$m.sched")"; } ;;
  qdq_depthwise | qdq_dw_dot) # the M55: dw1 (stride 1) in Helium's vector tiles
    [ "$TARGET" = cortex-m55 ] && {
      grep -q "'dw1' QLinearConv tile_rows=1 tile_vecs=[13] lanes=4 tasks=1 pad=1$" "$T/$m.sched" &&
        ok || bad "$m: dw1 not in Helium's vector tiles: $(cat "$T/$m.sched")"
    } ;;
  q_planes) # QuantizeLinear's steps of 4 a loop over the 3 planes and one over a plane's 6
    # (ir/lower/quant.c quant_steps: the accesses inside their plane, for the band views)
    [ $EMIT = c ] && { grep -qE "for \(int32_t v[0-9]+ = 0; v[0-9]+ < 6; v[0-9]+\+\+\)" "$D/m.c" &&
      ok || bad "$m: the quantization's steps not a plane's"; } ;;
  dq_pool) # the whole-input average pools as one unrolled loop a channel (passes/pool.c
    # gap_rewrite): 35 elements by 16, 9 whole; every float output bit equal to numpy's
    [ $EMIT = c ] && { grep -q "KN_UNROLL(16)" "$D/m.c" && grep -q "KN_UNROLL(9)" "$D/m.c" &&
      grep -q " / 35.0f)" "$D/m.c" && ok || bad "$m: the pools not unrolled sums a channel"; } ;;
  red16_tiles) # the reduction tiles' shapes (passes/tile.c red16_narrow): rows x columns
    for t in c1:1:4 c2:1:2 c3:2:3 c4:1:4; do
      n=${t%%:*} rv=${t#*:}
      grep -q "'$n' QLinearConv tile_rows=${rv%:*} tile_vecs=${rv#*:} .*dot=4" "$T/$m.sched" &&
        ok || bad "$m: $n not a ${rv%:*} x ${rv#*:} reduction tile: $(cat "$T/$m.sched")"
    done ;;
  mm_red16_*) # the M4: split words; Helium: reduction words (dot=4: s8x16)
    want=split=1; [ "$TARGET" = cortex-m55 ] && want=dot=4
    grep -q "'mm' QLinearMatMul .* $want" "$T/$m.sched" && ok ||
      bad "$m: no $want tile: $(cat "$T/$m.sched")" ;;
  dynq_*) # dynamically quantized layers (tests/quant/make_dynq_models.py): the float tail
    # fused (passes/dynq.c) into the integer contractions, which run in split-word tiles
    [ "$(grep -c "Integer tile_rows=.* split=" "$T/$m.sched")" = "$(grep -c Integer "$T/$m.sched")" ] &&
      ok || bad "$m: an integer contraction not in split-word tiles: $(cat "$T/$m.sched")" ;;
  qlinear_cnn | integer_ops)
    # over a window: the grouped, strided 3x3 of qlinear_cnn reads the words (split=1),
    # the stride-1 3x3 of integer_ops their pre-split pairs (split=4, kt_tile.xpre)
    want=split=1; [ $m = integer_ops ] && want=split=4
    [ "$TARGET" = cortex-m55 ] || {
      grep -q "'conv2\{0,1\}' .*Conv.* tile_vecs=3 .* $want" "$T/$m.sched" && ok ||
        bad "$m: no split-word tile over a window ($want): $(cat "$T/$m.sched")"
    } ;;
  esac
  H=$D/m.h
  nin=$(macro NUM_INPUTS "$H")
  nout=$(macro NUM_OUTPUTS "$H")
  {
    ins="" wants="" sizes="" max=1
    k=0
    while [ $k -lt "$nin" ]; do
      b=$(($(macro INPUT_${k}_SIZE "$H") * $(esize "$(macro INPUT_${k}_DTYPE "$H")")))
      carray in$k "$M/test_data_set_0/input_$k.pb" $b
      ins="$ins in$k,"
      k=$((k + 1))
    done
    k=0
    while [ $k -lt "$nout" ]; do
      b=$(($(macro OUTPUT_${k}_SIZE "$H") * $(esize "$(macro OUTPUT_${k}_DTYPE "$H")")))
      carray want$k "${REF:-$M/test_data_set_0/output_$k.pb}" $b
      wants="$wants want$k," sizes="$sizes $b,"
      [ $b -gt $max ] && max=$b
      k=$((k + 1))
    done
    printf 'static const void *const inputs[] = {%s};\n' "$ins"
    printf 'static const unsigned char *const wants[] = {%s};\n' "$wants"
    printf 'static const long want_size[] = {%s};\n#define OUT_MAX %d\n' "$sizes" $max
  } >"$D/data.h"
  arm-none-eabi-gcc $CFLAGS -O2 -std=c11 \
    -Wall -Werror --specs=rdimon.specs -nostartfiles -T "$LD" \
    -I"$D" "$S/tests/quant/m4/startup.s" "$S/tests/quant/m4/main.c" "$D/m.$([ $EMIT = obj ] && echo o || echo c)" -lm \
    -o "$D/app.elf" 2>"$D/cc.log" && ok || { bad "$m: build: $(head -5 "$D/cc.log")"; continue; }
  # the object built for the EABI environment (the normalized triple): its soft-float
  # double helpers are libgcc's __aeabi_* (hard-float ABI calls for libm's nearbyint)
  if [ $EMIT = obj ]; then
    arm-none-eabi-nm "$D/m.o" | grep -qE ' U __(muldf3|adddf3|floatsidf)$' &&
      bad "$m: GNU-named double helpers (triple without its EABI environment)" || ok
  fi
  arm-none-eabi-objdump -d $([ "$TARGET" = cortex-m55 ] && echo -m armv8.1-m.main) "$D/app.elf" \
    >"$D/app.dis"
  # the M55's kernels are functions of their own (kn_target.kernel_noinline)
  if [ "$TARGET" = cortex-m55 ] && [ $EMIT = c ]; then
    grep -q 'define KN_KERNEL __attribute__((noinline))' "$D/m.c" &&
      grep -q '^static KN_KERNEL .*void m_k0(' "$D/m.c" && ok || bad "$m: kernels not noinline"
  fi
  # (depthwise convolutions run in the depthwise pass's f32 tiles on exact integers,
  # their interior in row-word SMLAD tiles where the kernel rows have 3 taps: dw_words_*;
  # on the M55 in i32 vector tiles)
  if [ "$TARGET" = cortex-m55 ] && [ $m = dq_pool ]; then
    # dq_pool's pools 4 channels a vector, each step one gather of their elements h*w
    # apart (KN_LD4FG: VLDRW.U32 Qd, [Rn, Qm, UXTW #2]); the last 1 and 2 channels alone
    [ $EMIT = obj ] || { grep -q "KN_LD4FG(.*, 35)" "$D/m.c" &&
      grep -q "KN_LD4FG(.*, 9)" "$D/m.c" &&
      grep -qE "vldrw\.u32[[:space:]]+q[0-7], \[(r[0-9]+|ip|lr|fp|sl), q[0-7], uxtw #2\]" "$D/app.dis" &&
      ok || bad "$m: no gathered pool sums (KN_LD4FG, vldrw.u32 gather)"; }
  elif [ "$TARGET" = cortex-m55 ] && [ $m = dq_tail ]; then
    # DequantizeLinear 4 elements a step (ir/lower/quant.c: KN_DQ4FU / KN_DQ4FS, VCVT)
    [ $EMIT = obj ] || { grep -q "KN_DQ4FU(o" "$D/m.c" && grep -q "KN_DQ4FS(o" "$D/m.c" &&
      grep -q "vcvt\.f32\.s32\s*q" "$D/app.dis" && ok || bad "$m: no vector dequantization"; }
  elif [ "$TARGET" = cortex-m55 ] && [ "${m#ptq_add}" != "$m" ]; then
    # 8 (5) channels: the M55's 4-lane tiles, neither VMLADAVA nor SMLAD; the fixed-point
    # adds in 4-lane vectors (ir/lower/quant.c qadd_fixed_vec: the high-word form with
    # mult 2^30), ptq_add_tail's 245 elements with a scalar tail of one
    [ $EMIT = c ] && { grep -q "KN_DUP4I(1073741824)" "$D/m.c" && ok ||
      bad "$m: the residual add not in vectors"; }
  elif [ "$TARGET" = cortex-m55 ] && [ "${m#dw_}" != "$m" -o "${m#qdq_d}" != "$m" -o $m = qdq_block -o $m = ptq_dw ]; then
    # depthwise on the M55 (dw_*, qdq_depthwise, qdq_dw_dot, qdq_block's, ptq_dw): the i32 vector
    # tiles' widening byte loads (generated C: VLDRB.U32 / VLDRB.S32)
    # and their vector requantization (VMULH.S32, VSTRB.32) where it is fixed point
    [ $EMIT = obj ] || { grep -q "vldrb\.[su]32" "$D/app.dis" && ok ||
      bad "$m: no vldrb.s32/u32 in the image"; }
    # dw_words_u8's stride 2 along rows of 5: strided loads, a gather of 4 bytes (VLDRB.U32
    # with an offset vector) a tap
    [ $m = dw_words_u8 ] && [ $EMIT = c ] && {
      grep -qE "vldrb\.u32[[:space:]]+q[0-7], \[(r[0-9]+|ip|lr|fp|sl), q[0-7]\]" "$D/app.dis" && ok ||
        bad "$m: no vldrb.u32 gather in the image"; }
    # dw_mve_pad's plane (rows of 14): each kernel row's first tap at a constant distance
    # from the first row's (passes/depthwise.c dw_tile: one pointer, immediate offsets)
    [ $m = dw_mve_pad ] && [ $EMIT = c ] && {
      grep -qE "int64_t v[0-9]+ = \(v[0-9]+ \+ 28\);" "$D/m.c" && ok ||
        bad "$m: the plane's rows not at constant offsets"; }
    # ptq_dw's depthwise outputs (no activation, u8) clamped by a saturating shift
    # (KN_RQ4B: KN_CLAMP4), its test input 3 times its first calibration sample
    [ $m = ptq_dw ] && [ $EMIT = c ] && {
      grep -q "vqshlu\.s32[[:space:]]*q[0-7], q[0-7], #24" "$D/app.dis" && ok ||
        bad "$m: no vqshlu.s32 clamp in the image"; }
    # dw_mve_s2's 16 column pairs a chunk into the plane's two phases: VLD20/VLD21
    [ $m = dw_mve_s2 ] && [ $EMIT = c ] && { grep -q "vld21\.8" "$D/app.dis" && ok ||
      bad "$m: no vld21.8 in the image"; }
    case $m in qdq_*) [ $EMIT = obj ] || { grep -q "vmulh\.s32" "$D/app.dis" &&
      grep -q "vstrb\.32" "$D/app.dis" && ok || bad "$m: no vmulh.s32 and vstrb.32 in the image"; } ;; esac
    # qdq_block's 1x1 convolutions in the 4-lane tiles: 4 channels requantized a vector,
    # its lanes stored to their channels' planes (passes/tile.c conv_store_lanes)
    [ $m = qdq_block ] && [ $EMIT = c ] && { grep -q "= KN_RQ4IVN(v" "$D/m.c" && ok ||
      bad "$m: no vector requantization of 4 channels (KN_RQ4IVN)"; }
    # ... its 3 table vectors from one table of groups of 4 channels, at +4 and +8 words
    # from the multipliers (passes/tile_int.c kt_int_tables_vrec), the shift stored
    # negated (KN_RQ4IVN: VSHL by it as it is, no VNEG)
    [ $m = qdq_block ] && [ $EMIT = c ] && {
      grep -qE "kn_rq[0-9]+ = KN_LD4I\(c[0-9]+ \+ \(\(.*\* 3\) \+ 8\)\);" "$D/m.c" && ok ||
        bad "$m: the requantization tables not one table of groups"; }
    # ... from its 3 table vectors loaded once a tile and channel group into locals
    # (codegen/c/cprint.c mve_rq_decl), not reloaded for each pixel after the byte stores
    [ $m = qdq_block ] && [ $EMIT = c ] && {
      grep -q "kn_v4i kn_rq[0-9]* = KN_LD4I(" "$D/m.c" &&
        grep -q "= KN_RQ4IVN(v[0-9]*, kn_rq[0-9]*, kn_rq[0-9]*, kn_rq[0-9]*," "$D/m.c" &&
        ! grep -q "KN_RQ4IVN*(v[0-9]*, KN_LD4I(" "$D/m.c" && ok ||
        bad "$m: KN_RQ4IV's tables not loaded once into locals"; }
    # ... clamped to the whole u8 (i8) range by a saturating shift left by 24 and back
    # (codegen/c/cprint.c KN_CLAMP4: VQSHLU.S32 / VQSHL.S32, then VSHR), to narrower
    # ranges (the fused ReLUs' 0..194, 57..251) by VMAX and VMIN
    [ $m = qdq_block ] && [ $EMIT = c ] && {
      grep -q "KN_RQ4IVN(.*, 0, 255)" "$D/m.c" && grep -q "KN_RQ4IVN(.*, -128, 127)" "$D/m.c" &&
        grep -q "vqshlu\.s32[[:space:]]*q[0-7], q[0-7], #24" "$D/app.dis" &&
        grep -q "vqshl\.s32[[:space:]]*q[0-7], q[0-7], #24" "$D/app.dis" &&
        grep -q "vmin\.s32" "$D/app.dis" && ok ||
        bad "$m: no saturating-shift clamp (KN_CLAMP4) or no VMIN clamp"; }
    # ... its 4 lanes as one strided store (kl_store_strided): a VSTRB.32 scatter
    [ $m = qdq_block ] && [ $EMIT = c ] && { grep -q "KN_ST4BSS(" "$D/m.c" &&
      grep -qE "vstrb\.32[[:space:]]+q[0-7], \[(r[0-9]+|ip|lr|fp|sl), q[0-7]\]" "$D/app.dis" && ok ||
      bad "$m: no strided store of 4 channels (KN_ST4BSS, a vstrb.32 scatter)"; }
  elif [ "$TARGET" = cortex-m55 ] && { [ $m = quantize_ties ] || [ $m = dq_pool ] || [ $m = q_planes ]; }; then
    : # no contraction (its checks below)
  elif [ "$TARGET" = cortex-m55 ]; then
    # VMLADAVA without exchange disassembles as its alias VMLAVA; the generated C's
    # KN_DOT16 is .s8, LLVM picks its own element size where it keeps fewer live vectors
    v='vmlava\.s8'; [ $EMIT = obj ] && v='vmlava\.'
    grep -q "$v" "$D/app.dis" && ok || bad "$m: no $v in the image"
    # red16_s8 (whole 16-channel groups): the channels-last words built 4 a vector from
    # byte gathers (passes/tile.c conv_words_wide: KN_GW4, VLDRB.U32 gathers and VSLI)
    case $m in red16_s8) [ $EMIT = obj ] || { grep -q "KN_GW4(" "$D/m.c" &&
      grep -q "vsli\.32" "$D/app.dis" && ok || bad "$m: no gathered words (KN_GW4)"; } ;; esac
    # qdq_pointwise_part (fixed point): the reduction tiles' outputs requantized 4
    # channels a vector (passes/tile.c conv_store_red: the tile scratch, KN_RQ4IV)
    case $m in qdq_pointwise_part) [ $EMIT = obj ] || {
      grep -q "KN_RQ4IVN(v" "$D/m.c" && grep -q "vmulh\.s32" "$D/app.dis" && ok ||
        bad "$m: no vector requantization (KN_RQ4IVN)"
      # its 4 channels' bytes as one scatter store (kl_store_strided: VSTRB.32 [Rn, Qm])
      grep -q "KN_ST4BSS(" "$D/m.c" && grep -q "vstrb\.32.*\[r[0-9]*, q[0-9]\]" "$D/app.dis" && ok ||
        bad "$m: no scatter store (KN_ST4BSS)"; } ;; esac
  else
    # (quantize_ties, qdq_add, dq_pool and q_planes have no contraction)
    case $m in qdq_depthwise | quantize_ties | qdq_add | dq_pool | q_planes) ;;
    *) grep -q "smlad" "$D/app.dis" && ok || bad "$m: no smlad in the image" ;; esac
    # the row words' odd outputs: SMLADX with the weight word (w1, 0) (passes/depthwise.c);
    # at stride 2 (dw_words_s2, dw_words_u8's rows) the odd words' b1 w1 from the even
    # word's odd half, SMLADX too
    case $m in dw_words_s8 | dw_words_z1 | dw_words_s2 | dw_words_u8) grep -q "smladx" "$D/app.dis" && ok ||
      bad "$m: no smladx in the image" ;; esac
    # the fixed-point models' high-word requantization (multiply and add): kn_mmla in the
    # generated C, SMMLA in the image; its shift (in [1, 30]) a plain >>, not masked
    # (kx_shr_inrange: no kn_shr_i32 guard, no & 31)
    case $m in qdq_fixed | qdq_depthwise | qdq_pointwise | qdq_pointwise_part)
      [ $EMIT = obj ] || { grep -q "kn_mmla(" "$D/m.c" && grep -q "smmla" "$D/app.dis" && ok ||
        bad "$m: no kn_mmla in the C or no smmla in the image"
        grep -q "kn_mmla([^;]*) >> " "$D/m.c" && ! grep -q "kn_shr_i32(kn_mmla" "$D/m.c" && ok ||
        bad "$m: the requantization's shift is guarded or masked"; } ;; esac
  fi
  case $m in
  pw_split_s8) grep -q "sxtb16.*ror #8" "$D/app.dis" && ok || bad "$m: no sxtb16 ror #8 in the image" ;;
  pw_split_u8) # on the M4 the pairs' u8 halves come straight from the bytes (no UXTB16),
    # pairs read by LDRD (generated C)
    [ $EMIT = obj ] || { grep -q "ldrd" "$D/app.dis" && ok || bad "$m: no ldrd in the image"; } ;;
  mm_split_s8) grep -q "sxtb16.*ror #8" "$D/app.dis" && ok || bad "$m: no sxtb16 ror #8 in the image" ;;
  mm_split_u8) grep -q "uxtb16.*ror #8" "$D/app.dis" && ok || bad "$m: no uxtb16 ror #8 in the image" ;;
  dw_words_s2) [ $EMIT = obj ] || [ "$TARGET" = cortex-m55 ] || { grep -q "sxtb16.*ror #8" "$D/app.dis" && ok ||
    bad "$m: no sxtb16 ror #8 in the image"; } ;;
  dw_words_s8) [ $EMIT = obj ] || [ "$TARGET" = cortex-m55 ] || {
    grep -q "sxtb16.*ror #8" "$D/app.dis" && ok || bad "$m: no sxtb16 ror #8 in the image"; } ;;
  dw_words_u8) [ $EMIT = obj ] || [ "$TARGET" = cortex-m55 ] || { grep -q "uxtb16.*ror #8" "$D/app.dis" && ok ||
    bad "$m: no uxtb16 ror #8 in the image"; } ;;
  quantize_ties) # generated C: the float input's quantization (ir/lower/quant.c
    # quantize_mcu): VCVTR and USAT/SSAT, no libm rounding call; on the M55 the vector form
    # (KN_Q4F: VCVTN of 4 lanes, the division as VMUL and VFMA/VFMS)
    [ $EMIT = obj ] || { grep -q "usat.*#8" "$D/app.dis" && grep -q "ssat.*#8" "$D/app.dis" &&
      grep -q "vcvtr.s32.f32" "$D/app.dis" &&
      ! grep -q "<nearbyintf>:" "$D/app.dis" && ok || bad "$m: no usat/ssat/vcvtr, or nearbyintf"; }
    [ $EMIT = obj ] || [ "$TARGET" != cortex-m55 ] || { grep -q "KN_Q4F[SU](" "$D/m.c" &&
      grep -q "vcvtn.s32.f32.*q" "$D/app.dis" && grep -q "vfms.f32.*q" "$D/app.dis" && ok ||
      bad "$m: no vector quantization (KN_Q4F, vcvtn, vfms)"; }
    # on the M4, 16 elements a trip from one register block (QUANT_BLOCK: VLDM into s16-s31)
    [ $EMIT = obj ] || [ "$TARGET" = cortex-m55 ] || { grep -q "KN_LDM16F(in0 + " "$D/m.c" &&
      grep -q "vldmia.*{s16-s31}" "$D/app.dis" && ok || bad "$m: no register block (KN_LDM16F)"; } ;;
  pw_pairs_c8) # 4 and 8 input channels: the tile's widened words as kept loads (generated C)
    [ $EMIT = obj ] || [ "$TARGET" = cortex-m55 ] || {
      grep -q "(const int64_t \*)kn_keep(s" "$D/m.c" && ok || bad "$m: no kept loads of the widened words"
      # their reduction one trip: the blocks of output channels unrolled whole (passes/tile.c
      # pw_pairs_unroll: GCC's unroll pragma)
      grep -q "KN_UNROLL([48])" "$D/m.c" && ok || bad "$m: the blocks of output channels not unrolled"
      # and their weights read through the kept pointer (kx_load_kept_base), the index after it
      grep -q "(const int64_t \*)kn_keep(c[0-9]*))\[v" "$D/m.c" && ok ||
        bad "$m: the unrolled blocks' weights not through kn_keep"; } ;;
  pw_pairs_c32) # 32 input channels: 2 x 2 tiles, the 8 groups one trip (kept widened words),
    # the 16 blocks of output channels unrolled (generated C)
    [ $EMIT = obj ] || [ "$TARGET" = cortex-m55 ] || {
      grep -q "KN_UNROLL(16)" "$D/m.c" && grep -q "(const int64_t \*)kn_keep(s[0-9]*))\[7\]" "$D/m.c" &&
        ok || bad "$m: the 32-channel pairs not one unrolled trip"; } ;;
  mm_odd_s8) # the pre-split pairs and the paired weights: LDRD (generated C)
    [ $EMIT = obj ] || { grep -q "ldrd" "$D/app.dis" && ok || bad "$m: no ldrd in the image"; } ;;
  qdq_pointwise) # generated C on the M4: the high-word requantization's product and add as
    # one SMMLA (codegen/c/cprint.c kn_mmla), its 1x1 convolutions in pointwise pairs
    [ $EMIT = obj ] || [ "$TARGET" = cortex-m55 ] || { grep -q "smmla" "$D/app.dis" && ok ||
      bad "$m: no smmla in the image"; } ;;
  qdq_depthwise) # generated C on the M4: the row words' u8 outputs 4 at a time as one word
    # store (passes/depthwise.c dw_wtile: kn_stw; ORRs of the USATs' results joined last
    # first, (word << 8) | r, one STR)
    [ $EMIT = obj ] || [ "$TARGET" = cortex-m55 ] || { grep -q "kn_stw(" "$D/m.c" &&
      grep -q "orr.*lsl #8" "$D/app.dis" && ok || bad "$m: no word store of the row words' outputs"; } ;;
  qdq_fixed | qdq_pointwise_part) # generated C: both kinds (LLVM picks its own instructions;
    # on cortex-m55 the high-word requantization's clamp, kt_int_tables_red)
    [ $EMIT = obj ] || [ "$TARGET" = cortex-m55 ] || { grep -q "usat.*#8" "$D/app.dis" && grep -q "ssat.*#8" "$D/app.dis" && ok ||
      bad "$m: no ssat and usat in the image"; } ;;
  esac
  timeout 120 qemu-system-arm -machine $MACHINE -nographic -semihosting -monitor none \
    -kernel "$D/app.elf" >"$D/out.txt" 2>&1
  grep -q "^ok [0-9]* bytes" "$D/out.txt" && ok || bad "$m: on the board: $(head -8 "$D/out.txt")"
done
finish
