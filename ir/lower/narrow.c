/* Conversions of the narrow types (ir/dtype.h) as kernel IR, shared by Cast/CastLike
 * (ir/lower/elementwise.c) and QuantizeLinear/DequantizeLinear (ir/lower/quant.c).
 * A float8 buffer holds codes: loading one gives a u8, storing writes a u8. A 4-bit
 * buffer holds one element per byte: loads give i8/u8. So only these conversions know
 * the formats, and every emitter gets them from here.
 *
 * Decoding is a lookup in a 256-entry f32 table (kn_f8_decode's values; exact, NaN for
 * the NaN codes). Encoding is arithmetic in f64, the value of kn_f8_encode for every
 * input but a negative NaN (the sign of a NaN is not visible to kernel IR; the code is
 * the positive NaN): with a = |x| clamped to [0, 2^17], E = max(floor(log2 a), emin)
 * (log corrected by one step either way, as bf16_trunc does), the code magnitude is
 * (E - emin) * 2^m + round_half_even(a * 2^(m - E)), which is also right where the
 * rounding carries into the next binade and for subnormals (E = emin); a magnitude
 * above the format's largest finite code overflows (saturate: that code; else the
 * infinity of E5M2 or NaN). Infinite inputs overflow the same way, except in the FNUZ
 * kinds, where they are NaN. -0 is detected as 1/x < 0. */
#include "ir/kir.h"

#include <math.h>

static kn_kx *local(kn_lower *L, kn_kx *x) {
    if (x->op == KX_VAR || x->op == KX_CONST) return x;
    return kx_var(L, kl_decl(L, x->dtype, x));
}

static kn_kx *f(kn_lower *L, double v) {
    return kx_const(L, KN_F64, v);
}

kn_kx *kl_f8_decode(kn_lower *L, kn_kx *code, kn_dtype t) {
    float table[256];
    for (int c = 0; c < 256; c++) table[c] = (float)kn_f8_decode((uint8_t)c, kn_f8_kind_of(t));
    kn_kbuf *b = kl_table(L, KN_F32, 256, table);
    return kx_load(L, b, kx_cast(L, KN_I64, code));
}

kn_kx *kl_f8_encode(kn_lower *L, kn_kx *x, kn_dtype t, bool saturate) {
    kn_f8_kind kind = kn_f8_kind_of(t);
    int mbits, bias, maxcode;
    kn_f8_format(kind, &mbits, &bias, &maxcode);
    bool uz = kind == KN_F8_E4M3FNUZ || kind == KN_F8_E5M2FNUZ;
    double emin = 1 - bias, cap = 0x1p17, m2 = ldexp(1, mbits);
    x = local(L, kx_cast(L, KN_F64, x));
    kn_kx *a = local(L, kx_un(L, KX_ABS, x));
    /* finite and below every format's overflow: NaN and infinities become cap */
    kn_kx *af = local(L, kx_select(L, kx_bin(L, KX_LT, a, f(L, cap)), a, f(L, cap)));
    kn_kx *e = kx_un(L, KX_FLOOR, kx_bin(L, KX_MUL, kx_un(L, KX_LOG, af), f(L, 1 / log(2.0))));
    e = local(L, e);
    e = local(L, kx_select(L, kx_bin(L, KX_LT, e, f(L, emin - 1)), f(L, emin - 1), e));
    kn_kx *down = kx_bin(L, KX_GT, kx_bin(L, KX_LDEXP, f(L, 1), e), af);
    e = local(L, kx_select(L, down, kx_bin(L, KX_SUB, e, f(L, 1)), e));
    kn_kx *up = kx_bin(L, KX_LE, kx_bin(L, KX_LDEXP, f(L, 2), e), af);
    e = local(L, kx_select(L, up, kx_bin(L, KX_ADD, e, f(L, 1)), e));
    e = local(L, kx_select(L, kx_bin(L, KX_LT, e, f(L, emin)), f(L, emin), e));
    kn_kx *n = kx_un(L, KX_ROUND, kx_bin(L, KX_LDEXP, af, kx_bin(L, KX_SUB, f(L, mbits), e)));
    kn_kx *code = local(
        L, kx_bin(L, KX_ADD, kx_bin(L, KX_MUL, kx_bin(L, KX_SUB, e, f(L, emin)), f(L, m2)), n));
    kn_kx *over = local(L, kx_bin(L, KX_GT, code, f(L, maxcode)));
    double ovf = saturate ? maxcode : kind == KN_F8_E5M2 ? 0x7c : 0x7f;
    kn_kx *mag = local(L, kx_select(L, over, f(L, ovf), code));
    kn_kx *neg = kx_bin(L, KX_LOR, kx_bin(L, KX_LT, x, f(L, 0)),
                        kx_bin(L, KX_LAND, kx_bin(L, KX_EQ, x, f(L, 0)),
                               kx_bin(L, KX_LT, kx_bin(L, KX_DIV, f(L, 1), x), f(L, 0))));
    if (uz) neg = kx_bin(L, KX_LAND, neg, kx_bin(L, KX_NE, mag, f(L, 0))); /* no -0 */
    kn_kx *r = kx_bin(L, KX_ADD, mag, kx_select(L, neg, f(L, 128), f(L, 0)));
    kn_kx *nan = kx_un(L, KX_ISNAN, x);
    if (uz) { /* NaN 0x80: NaN, infinities, and overflow without saturation */
        nan = kx_bin(L, KX_LOR, nan, kx_un(L, KX_ISINF, x));
        if (!saturate) nan = kx_bin(L, KX_LOR, nan, over);
        r = kx_select(L, nan, f(L, 0x80), r);
    } else {
        r = kx_select(L, nan, f(L, 0x7f), r);
    }
    return kx_cast(L, KN_U8, r);
}

kn_kx *kl_to_4bit(kn_lower *L, kn_kx *x, kn_dtype t) {
    double lo = t == KN_I4 ? -8 : 0, hi = t == KN_I4 ? 7 : 15;
    x = local(L, kx_cast(L, KN_F64, x));
    kn_kx *c = kx_select(L, kx_bin(L, KX_LT, x, f(L, lo)), f(L, lo),
                         kx_select(L, kx_bin(L, KX_GT, x, f(L, hi)), f(L, hi), x));
    kn_kx *r = kx_select(L, kx_un(L, KX_ISNAN, x), f(L, 0), kx_un(L, KX_ROUND, c));
    return kx_cast(L, kx_compute_dtype(t), r);
}
