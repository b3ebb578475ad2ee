/* Fixed-point requantization in 32-bit arithmetic (ir/requant.h kn_qmul_apply32): the
 * same results as kl_requant_fixed, for the tile pass's epilogue on 32-bit
 * microcontrollers, where kl_requant_fixed's int64 shifts by a run-time amount, adds and
 * clamps take about 50 instructions per element (no 64-bit registers) and this about 15:
 * one 32 x 32 -> 64 multiply (SMULL), its high word, 32-bit shifts and a 32-bit clamp. */
#include "ir/kir.h"
#include "ir/lower_impl.h"
#include "ir/requant.h"
#include "targets/target.h"

#include <math.h>
#include <stdlib.h>

kn_kx *kl_requant_fixed32(kn_lower *L, kn_kx *acc, kn_kx *mult, kn_kx *t32, kn_kx *zp, kn_dtype t) {
    const kn_dtype_info *di = kn_dtype_get(t);
    double span = ldexp(1.0, (int)di->size * 8);
    double lo = di->is_signed ? -span / 2 : 0, hi = di->is_signed ? span / 2 - 1 : span - 1;
    /* acc may be a vector (the depthwise pass's tiles), mult and t32 per channel */
    int p = kl_decl_vec(L, KN_I64, kx_lanes(acc),
                        kx_mul(L, kx_cast(L, KN_I64, acc), kx_cast(L, KN_I64, mult)));
    /* t is in [1, 30] (kl_qmul_shift32): the mask says so, so the emitters' guard for
     * shifts of 32 or more folds away (three compares and branches an element on the M4) */
    int s = kl_decl(L, KN_I32, kx_bin(L, KX_AND, kx_cast(L, KN_I32, t32), kx_const(L, KN_I32, 31)));
    kn_kx *one = kx_const(L, KN_I32, 1);
    /* odd = ((p >> 32) >> t) & 1: the parity of floor(p / 2^shift) */
    kn_kx *h = kx_cast(L, KN_I32, kx_bin(L, KX_SHR, kx_var(L, p), kx_int(L, 32)));
    kn_kx *odd = kx_bin(L, KX_AND, kx_bin(L, KX_SHR, h, kx_var(L, s)), one);
    /* (((p + odd - 1) >> 32) + 2^(t-1)) >> t */
    kn_kx *q = kx_add(L, kx_var(L, p), kx_cast(L, KN_I64, kx_sub(L, odd, one)));
    q = kx_cast(L, KN_I32, kx_bin(L, KX_SHR, q, kx_int(L, 32)));
    q = kx_add(L, q, kx_bin(L, KX_SHL, one, kx_sub(L, kx_var(L, s), one)));
    kn_kx *r = kx_bin(L, KX_SHR, q, kx_var(L, s));
    if (zp) r = kx_add(L, r, kx_cast(L, KN_I32, zp));
    /* one SSAT/USAT on cores that have it (KX_SAT), for scalars of 8 or 16 bits */
    if (kx_lanes(acc) == 1 && (di->size == 1 || di->size == 2) && !di->is_float)
        r = kx_sat(L, r, (int)di->size * 8, !di->is_signed);
    else
        r = kx_bin(L, KX_MIN, kx_bin(L, KX_MAX, r, kx_const(L, KN_I32, lo)),
                   kx_const(L, KN_I32, hi));
    return kx_cast(L, t, r);
}

kn_kbuf *kl_qmul_shift32(kn_lower *L, const kn_kbuf *mult, kn_kbuf *shift, int64_t ncols) {
    if (!L->target || L->target->kind != KN_TARGET_MCU) return shift;
    const int32_t *m = mult->data->data, *sh = shift->data->data;
    int8_t *t = malloc((size_t)(ncols ? ncols : 1));
    KN_ASSERT(t);
    bool ok = true;
    for (int64_t c = 0; c < ncols && ok; c++) {
        ok = kn_qmul_32bit((kn_qmul){m[c], sh[c]});
        t[c] = (int8_t)(sh[c] - 32);
    }
    kn_kbuf *r = ok ? kl_table(L, KN_I8, ncols, t) : shift;
    free(t);
    return r;
}

kn_kx *kl_requant_hi32(kn_lower *L, kn_kx *acc, kn_kx *mult, kn_kx *round, kn_kx *t, int64_t lo,
                       int64_t hi_, kn_dtype ty) {
    /* (i32)((i64)acc * (i64)mult >> 32): a signed high multiply (vpmuldq on even and odd
     * lanes on x86, SMULL on Arm) */
    if (kx_lanes(acc) > 1 && kx_lanes(mult) == 1)
        mult = kx_var(L, kl_decl_vec(L, KN_I32, kx_lanes(acc), kx_cast(L, KN_I32, mult)));
    kn_kx *p = kx_mul(L, kx_cast(L, KN_I64, acc), kx_cast(L, KN_I64, mult));
    kn_kx *h = kx_cast(L, KN_I32, kx_bin(L, KX_SHR, p, kx_int(L, 32)));
    /* t is in [1, 30] (kn_qmul_hi32; the tables' padding columns 1): on scalars a shift
     * known in range (kx_shr_inrange: one ASR on the M4, where the mask cost an AND an
     * output channel and tile); the vectors keep the mask, which says the same to the
     * emitters' guard for shifts of 32 or more and which Helium's requantization matches
     * (codegen/c/cprint.c, rq_match) */
    kn_kx *r, *ht = kx_add(L, h, kx_cast(L, KN_I32, round));
    if (kx_lanes(acc) == 1) {
        KN_ASSERT(t->op != KX_CONST || (t->i >= 1 && t->i <= 30));
        r = kx_shr_inrange(L, ht, kx_cast(L, KN_I32, t));
    } else {
        kn_kx *tm = kx_bin(L, KX_AND, kx_cast(L, KN_I32, t), kx_const(L, KN_I32, 31));
        r = kx_bin(L, KX_SHR, ht, tm);
    }
    /* scalars of 8 or 16 bits: one SSAT/USAT to the type's range (KX_SAT), then only the
     * bounds of a narrower clamp (a Relu folded above y's zero point); the same values
     * as the min/max clamp, which takes 7 instructions on the M4 */
    const kn_dtype_info *di = kn_dtype_get(ty);
    if (kx_lanes(acc) == 1 && (di->size == 1 || di->size == 2) && !di->is_float) {
        double span = ldexp(1.0, (int)di->size * 8);
        double tlo = di->is_signed ? -span / 2 : 0, thi = di->is_signed ? span / 2 - 1 : span - 1;
        r = kx_sat(L, r, (int)di->size * 8, !di->is_signed);
        if ((double)lo > tlo) r = kx_bin(L, KX_MAX, r, kx_const(L, KN_I32, (double)lo));
        if ((double)hi_ < thi) r = kx_bin(L, KX_MIN, r, kx_const(L, KN_I32, (double)hi_));
        return kx_cast(L, ty, r);
    }
    r = kx_bin(L, KX_MIN, kx_bin(L, KX_MAX, r, kx_const(L, KN_I32, (double)lo)),
               kx_const(L, KN_I32, (double)hi_));
    return kx_cast(L, ty, r);
}
