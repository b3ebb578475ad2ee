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

/* The node attribute (INT, 1) of a QLinearAdd that computes in double instead of
 * float32: (double(a - az) as + double(b - bz) bs) / cs, rounded half to even (the two
 * products exact, so within 2^-52 of the real-number value). The loader gives it to
 * ONNX Runtime's contrib QLinearAdd (frontend/onnx_contrib.c), whose documented formula
 * is that real-number value; a QDQ graph's add keeps the graph's float32 arithmetic. */
#define KN_QADD_F64_ATTR "kiln_f64"

/* Whether node n carries the INT attribute `name` = 1. */
static inline bool kn_attr_flag(const kn_node *n, const char *name) {
    for (int i = 0; i < n->nattr; i++)
        if (!strcmp(n->attrs[i].name, name))
            return n->attrs[i].kind == KN_ATTR_INT && n->attrs[i].i == 1;
    return false;
}

/* The node attribute (INT, 1) of the QuantizeLinear nodes `--quantize` inserts
 * (passes/ptq.c): a residual add the qdq pass rewrites into a QLinearAdd ending at one is
 * kiln's own, and computed in fixed point (kn_qadd below); one of an imported QDQ graph
 * keeps the graph's float32 arithmetic. */
#define KN_PTQ_ATTR "kiln_ptq"

/* The node attribute (INTS, [lo, hi]) of a fixed-point node whose outputs are clamped
 * to [lo, hi] after requantization: a Relu or Clip the qdq pass folded into it
 * (max(sat(v), lo) and min(., hi) are the clamp; lo and hi lie in y's type). */
#define KN_CLAMP_ATTR "kiln_clamp"

/* The range node n's outputs of integer type [tlo, thi] are stored in: the type's,
 * narrowed by KN_CLAMP_ATTR where n has it. */
static inline void kn_fixed_clamp(const kn_node *n, int64_t tlo, int64_t thi, int64_t *lo,
                                  int64_t *hi) {
    *lo = tlo, *hi = thi;
    for (int i = 0; i < n->nattr; i++)
        if (!strcmp(n->attrs[i].name, KN_CLAMP_ATTR) && n->attrs[i].kind == KN_ATTR_INTS &&
            n->attrs[i].n == 2) {
            *lo = n->attrs[i].ints[0] > tlo ? n->attrs[i].ints[0] : tlo;
            *hi = n->attrs[i].ints[1] < thi ? n->attrs[i].ints[1] : thi;
        }
}

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

/* The high-word form: one 32 x 32 -> 64 multiply, its high word, one add and one
 * shift, for the register tiles' vector requantization (ir/lower/requant32.c
 * kl_requant_hi32). Where no accumulator |acc| <= bound can make acc * mult / 2^shift a
 * tie, rounding half to even is rounding half up, and with t = shift - 32 in [1, 30]
 * and hi = floor(acc * mult / 2^32),
 *
 *     round_half_even(acc * mult / 2^shift) + zp = (hi + 2^(t-1) + zp * 2^t) >> t
 *
 * (the low word of the product moves out of the floor; zp * 2^t, a multiple of 2^t,
 * comes out of it exactly). A tie needs 2^(shift-1) to divide acc * mult, so 2^(shift-1-v)
 * to divide acc, v the trailing zero bits of mult: none when 0 < bound < 2^(shift-1-v)
 * (acc = 0 is no tie). kn_qmul_hi32 checks that and that hi plus the constant stays in
 * int32, and gives *t and *round (2^(t-1) + zp * 2^t); mult 0 gives t 1 and round
 * 2 zp + 1 (y = zp). False where the form does not apply (shift < 33: multipliers of
 * 1/4 or more; possible ties; overflow). */
static inline bool kn_qmul_hi32(kn_qmul q, int64_t bound, int32_t zp, int32_t *t, int32_t *round) {
    if (q.mult == 0) {
        *t = 1;
        *round = 2 * zp + 1;
        return true;
    }
    if (q.shift < 33 || q.shift > 62 || bound < 0 || bound > INT32_MAX) return false;
    int v = 0;
    while (!((q.mult >> v) & 1)) v++;
    if (bound >= (INT64_C(1) << (q.shift - 1 - v))) return false;
    int32_t tt = q.shift - 32;
    int64_t c = (INT64_C(1) << (tt - 1)) + (int64_t)zp * (INT64_C(1) << tt);
    int64_t hmax = ((bound * (int64_t)q.mult) >> 32) + 1; /* |hi| <= hmax */
    if (hmax + (c < 0 ? -c : c) > INT32_MAX) return false;
    *t = tt;
    *round = (int32_t)c;
    return true;
}

/* The high-word form's value (zp included) for the *t and *round of kn_qmul_hi32. */
static inline int32_t kn_qmul_apply_hi32(int32_t acc, int32_t mult, int32_t round, int32_t t) {
    int32_t hi = (int32_t)(((int64_t)acc * mult) >> 32);
    return (hi + round) >> t;
}

/* kiln's own residual adds (QLinearAdd with KN_FIXED_POINT_ATTR: the adds of
 * `--quantize`'s graphs, passes/ptq.c and passes/qdq.c; a QDQ add of an imported model
 * keeps the float32 arithmetic of the graph it replaces, ir/ops/quant.c) in 32-bit
 * integers: with Ma = as / cs and Mb = bs / cs (double, from the float32 scales),
 *
 *     y = clamp(sat(((a * ma + b * mb + round) >> shift) + cz))
 *     ma = llround(Ma * 2^shift), mb = llround(Mb * 2^shift)
 *     round = 2^(shift-1) - az * ma - bz * mb
 *
 * so y = floor(((a - az) * ma + (b - bz) * mb) / 2^shift + 1/2) + cz: the fixed-point sum
 * rounded half up (TFLite's integer add rounds its own fixed-point sum too, differently).
 * shift is the largest in [1, 30] that keeps max(ma, mb) below 2^20, so for 8-bit a, b
 * and zero points every term and every partial sum stays below 2^31 in magnitude (on a
 * Cortex-M4: two loads, a MUL and an MLA, an add, a shift, an add and a USAT an element,
 * where the float32 form divided). Each multiplier is within 1/2 of its exact value, so
 * the result is the exact value rounded half up except where that lies within
 * (|a - az| + |b - bz|) / 2^(shift+1) of a rounding boundary (at most 2^-10 for scales
 * whose ratios are below 1: a residual add's); the float32 graph's differs there too,
 * by its own roundings. A scale that is not positive and finite gives ma = mb = 0
 * (y = cz). */
typedef struct kn_qadd {
    int32_t ma, mb; /* in [0, 2^20) */
    int32_t shift;  /* in [1, 30] */
    int32_t round;  /* 2^(shift-1) - az * ma - bz * mb */
} kn_qadd;

static inline kn_qadd kn_qadd_make(double as, double bs, double cs, int64_t az, int64_t bz) {
    double ma = as / cs, mb = bs / cs, m = ma > mb ? ma : mb;
    kn_qadd q = {0, 0, 1, 1};
    if (!(m > 0) || !isfinite(m) || !(ma >= 0) || !(mb >= 0)) return q;
    int s = 30;
    while (s > 1 && llround(ldexp(m, s)) >= (1 << 20)) s--;
    int64_t a = llround(ldexp(ma, s)), b = llround(ldexp(mb, s));
    q.ma = (int32_t)(a < (1 << 20) ? a : (1 << 20) - 1);
    q.mb = (int32_t)(b < (1 << 20) ? b : (1 << 20) - 1);
    q.shift = s;
    q.round = (int32_t)((INT64_C(1) << (s - 1)) - az * q.ma - bz * q.mb);
    return q;
}

/* floor((a * ma + b * mb + round) / 2^shift) + cz, before the saturation and clamp;
 * a, b and the zero points 8-bit. */
static inline int64_t kn_qadd_apply(kn_qadd q, int64_t a, int64_t b, int64_t cz) {
    int64_t v = a * q.ma + b * q.mb + q.round;
    int64_t fl = v >= 0 ? v >> q.shift : -((-v - 1) >> q.shift) - 1;
    return fl + cz;
}

#endif
