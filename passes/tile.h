/* Shared between the tile pass's schedules (passes/tile.c: register tiles for CPUs and
 * microcontrollers; passes/tile_gpu.c: work-item tiles for OpenCL devices). */
#ifndef KN_PASSES_TILE_H
#define KN_PASSES_TILE_H

#include "ir/kir.h"

/* A constant f32 buffer with its data. */
bool kt_f32_const(const kn_kbuf *b);
/* Whether every epilogue operand of convolution d can be read at y's coordinates. */
bool kt_conv_operands_ok(const kn_contract *d);
/* Whether every epilogue operand of matrix product d is y-shaped or one row of N. */
bool kt_mm_operands_ok(const kn_contract *d);

/* The work-item schedules of passes/tile_gpu.c: d rebuilt into kernel L (a
 * kl_builder_rewrite builder), its choices recorded in *out; false when d does not
 * suit them (the plain nest stays). ov: the schedule file's overrides, or NULL. */
bool kt_gpu_conv(kn_lower *L, const kn_contract *d, const kn_sched *ov, kn_sched *out);
bool kt_gpu_matmul(kn_lower *L, const kn_contract *d, const kn_sched *ov, kn_sched *out);

#endif
