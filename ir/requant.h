/* Fixed-point requantization: the one definition of how kiln's own quantized layers
 * (QLinearConv / QLinearMatMul nodes made by the qdq pass, carrying the attribute
 * KN_FIXED_POINT_ATTR = 1) turn an int32 accumulator into an 8-bit output with no
 * floating point at run time. The interpreter calls these functions; the lowering
 * (ir/lower/quant.c kl_requant_fixed) builds the same arithmetic in kernel IR, which
 * every backend emits (C, LLVM, OpenCL). docs/quantization.md states the contract.
 *
 * The real multiplier M = x_scale * w_scale[c] / y_scale (double, from the stored
 * float32 scales, in that order) is fixed at compile time as M ~ mult * 2^-shift with
 * mult in [2^30, 2^31) (M's mantissa rounded to 31 bits, half away from zero) and
 * shift in [1, 62]; then
 *
 *     acc' = acc saturated to [-2^31, 2^31 - 1]
 *     y    = saturate(round_half_even(acc' * mult / 2^shift) + y_zp)
 *
 * computed exactly in int64 (|acc' * mult| < 2^62). Rounding half to even, as ONNX's
 * float path rounds, makes the result equal the exact one whenever M has at most 31
 * significant bits (power-of-two scales, say). TFLite's MultiplyByQuantizedMultiplier
 * instead rounds twice, half away from zero; gemmlowp likewise. Edge cases: M <= 0 or
 * NaN, or M < 2^-32 (every |acc' * M| < 1/2), give mult 0 (y = y_zp); M >= 2^30
 * (every nonzero accumulator saturates) is stored as 2^29. */
#ifndef KN_IR_REQUANT_H
#define KN_IR_REQUANT_H

#include "ir/graph.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* The node attribute (INT, 1) that selects fixed-point requantization. */
#define KN_FIXED_POINT_ATTR "kiln_fixed_point"

/* Whether node n (QLinearConv, QLinearMatMul) requantizes in fixed point. */
static inline bool kn_fixed_point(const kn_node *n) {
    for (int i = 0; i < n->nattr; i++)
        if (!strcmp(n->attrs[i].name, KN_FIXED_POINT_ATTR))
            return n->attrs[i].kind == KN_ATTR_INT && n->attrs[i].i == 1;
    return false;
}

typedef struct kn_qmul {
    int32_t mult;  /* 0, or in [2^30, 2^31) */
    int32_t shift; /* in [1, 62] */
} kn_qmul;

/* The fixed-point form of multiplier m (see above). */
static inline kn_qmul kn_qmul_make(double m) {
    kn_qmul q = {0, 31};
    if (!(m > 0)) return q;
    int e;
    double f = frexp(m, &e); /* m = f * 2^e, f in [0.5, 1) */
    int64_t mt = (int64_t)llround(ldexp(f, 31));
    if (mt == (INT64_C(1) << 31)) {
        mt >>= 1;
        e++;
    }
    if (e > 30) return (kn_qmul){INT32_C(1) << 30, 1};
    if (31 - e > 62) return q;
    return (kn_qmul){(int32_t)mt, 31 - e};
}

/* The multiplier of scales x_scale, w_scale and y_scale, as the definition computes M. */
static inline kn_qmul kn_qmul_scales(double xs, double ws, double ys) {
    return kn_qmul_make(xs * ws / ys);
}

/* round_half_even(sat32(acc) * q.mult / 2^q.shift), exact. */
static inline int64_t kn_qmul_apply(int64_t acc, kn_qmul q) {
    if (acc > INT32_MAX) acc = INT32_MAX;
    if (acc < INT32_MIN) acc = INT32_MIN;
    int64_t p = acc * (int64_t)q.mult;
    /* floor(p / 2^s) by an arithmetic shift, written so that it needs none */
    int64_t fl = p >= 0 ? p >> q.shift : -((-p - 1) >> q.shift) - 1;
    int64_t half = INT64_C(1) << (q.shift - 1);
    int64_t r = p - fl * (INT64_C(1) << q.shift); /* in [0, 2^s) */
    return fl + (r > half || (r == half && (fl & 1)));
}

/* The same for shifts in [33, 62] (multipliers below 1/4, the usual case) with 32-bit
 * arithmetic after one 32 x 32 -> 64 multiply, for 32-bit microcontrollers (the tile
 * pass's epilogue there, ir/lower/requant32.c, builds this in kernel IR): with
 * t = shift - 32 in [1, 30], p = acc * mult and hi = p >> 32 (the multiply's high word),
 *
 *     (p + 2^(shift-1) - 1 + odd) >> shift
 *       = (((p + odd - 1) >> 32) + 2^(t-1)) >> t,      odd = (hi >> t) & 1
 *
 * (2^(shift-1) is a multiple of 2^32, so it moves out of the floor), where every value
 * after the multiply fits in 32 bits (|hi| < 2^30). acc is already 32 bits. */
static inline bool kn_qmul_32bit(kn_qmul q) {
    return q.mult != 0 && q.shift >= 33 && q.shift <= 62;
}

static inline int32_t kn_qmul_apply32(int32_t acc, kn_qmul q) {
    int64_t p = (int64_t)acc * q.mult;
    int32_t t = q.shift - 32, hi = (int32_t)(p >> 32);
    int32_t odd = (hi >> t) & 1;
    int32_t h = (int32_t)((p + odd - 1) >> 32) + (INT32_C(1) << (t - 1));
    return h >> t;
}

#endif
