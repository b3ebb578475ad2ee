/* Integer contractions in the register tiles (see passes/tile_int.h).
 *
 * An integer depthwise convolution runs in the depthwise pass's tiles as they are,
 * in f32: each input is converted and its zero point subtracted (x - xz, an integer
 * in [-255, 255]), the weights are packed as w - wz[c] and the bias as itself, and
 * the tile multiplies and adds as for a float convolution. Every value and partial
 * sum is an integer of magnitude below 2^24 (kt_dw_int_suits checks the bound), so
 * each f32 operation, fused or not, is exact and gives the same sum as the int32
 * reference on every backend; the store converts it to i32 (exact) and requantizes.
 * f32 rather than i32 lanes: the tile is the float one, and a multiply-add is one
 * instruction where an i32 multiply and add are two. One channel per group has no
 * reduction over channels for a dot product to pack. */
#include "passes/tile_int.h"

#include "ir/lower_impl.h"
#include "ir/requant.h"
#include "targets/target.h"

#include <math.h>
#include <stdlib.h>

static bool is_const(const kn_kbuf *b) {
    return b && b->kind == KB_CONST && b->data;
}

/* Element i of constant b as a double (0 when b is NULL; a one-element b broadcasts). */
static double cval(const kn_kbuf *b, int64_t i) {
    return b ? kn_load_f64(b->data->data, b->dtype, (size_t)(b->numel == 1 ? 0 : i)) : 0.0;
}

bool kt_dw_int_suits(const kn_contract *d) {
    if (d->kind != KN_CONTRACT_CONV || d->group != d->c || d->m != d->c || d->epi ||
        !kn_contract_is_int(d) || !kn_contract_nchw(d) || !is_const(d->w) ||
        (d->w->dtype != KN_U8 && d->w->dtype != KN_I8) || (d->wz && !is_const(d->wz)) ||
        (d->bias && !is_const(d->bias)) || (d->xz && (!is_const(d->xz) || d->xz->numel != 1)))
        return false;
    if (d->ph < 0 || d->pw < 0 || d->peh < 0 || d->pew < 0) return false;
    if (d->yscale
            ? !is_const(d->xscale) || d->xscale->numel != 1 || !is_const(d->wscale) ||
                  !is_const(d->yscale) || d->yscale->numel != 1 ||
                  (d->y->dtype != KN_U8 && d->y->dtype != KN_I8) || (d->yz && !is_const(d->yz))
            : d->y->dtype != KN_I32)
        return false;
    int64_t taps = d->kh * d->kw;
    double bound = 0;
    for (int64_t ch = 0; ch < d->c; ch++) {
        double wmax = 0;
        for (int64_t t = 0; t < taps; t++) {
            double v = fabs(cval(d->w, ch * taps + t) - cval(d->wz, ch));
            wmax = v > wmax ? v : wmax;
        }
        double b = (double)taps * 255.0 * wmax + fabs(cval(d->bias, ch));
        bound = b > bound ? b : bound;
    }
    return bound < 16777216.0; /* 2^24: f32 integers are exact below it */
}

void kt_dw_int_pack(const kn_contract *d, float *pk) {
    int64_t taps = d->kh * d->kw, per = 1 + taps;
    for (int64_t ch = 0; ch < d->c; ch++) {
        pk[ch * per] = (float)cval(d->bias, ch);
        for (int64_t t = 0; t < taps; t++)
            pk[ch * per + 1 + t] = (float)(cval(d->w, ch * taps + t) - cval(d->wz, ch));
    }
}

double kt_int_xz(const kn_contract *d) {
    return cval(d->xz, 0);
}

void kt_int_tables_padded(kn_lower *L, const kn_contract *d, int64_t pad, kn_kbuf **mult,
                          kn_kbuf **shift) {
    *mult = *shift = NULL;
    if (!d->yscale) return;
    int64_t ncols = d->kind == KN_CONTRACT_CONV ? d->m : d->N, n = ncols + pad;
    if (d->fixed) { /* the columns' kn_qmul (kl_qmul_tables), then {0, 31} */
        int32_t *t = malloc((size_t)n * 2 * sizeof *t);
        KN_ASSERT(t);
        for (int64_t c = 0; c < n; c++) {
            kn_qmul q = {0, 31};
            if (c < ncols)
                q = kn_qmul_scales(cval(d->xscale, 0), cval(d->wscale, c), cval(d->yscale, 0));
            t[c] = q.mult;
            t[n + c] = q.shift;
        }
        *mult = kl_table(L, KN_I32, n, t);
        *shift = kl_table(L, KN_I32, n, t + n);
        free(t);
        /* microcontrollers: 32-bit requantization where every shift allows it */
        if (!pad) *shift = kl_qmul_shift32(L, *mult, *shift, ncols);
        return;
    }
    double *m = malloc((size_t)(n ? n : 1) * sizeof *m);
    KN_ASSERT(m);
    for (int64_t c = 0; c < n; c++)
        m[c] = c < ncols ? cval(d->xscale, 0) * cval(d->wscale, c) / cval(d->yscale, 0) : 0.0;
    *mult = kl_table(L, KN_F64, n, m);
    free(m);
}

/* The largest |acc| d's requantization can see: over the columns, 255 x sum |w - wz[c]|
 * + |bias[c]| (|x - xz| <= 255 for 8-bit operands); -1 where it is not known at compile
 * time (weights, zero points or bias not constants, batched weights). */
static double acc_bound(const kn_contract *d) {
    bool conv = d->kind == KN_CONTRACT_CONV;
    int64_t ncols = conv ? d->m : d->N;
    if (!is_const(d->w) || (d->wz && !is_const(d->wz)) || (d->bias && !is_const(d->bias)) ||
        ncols <= 0 || (!conv && d->w->numel != d->K * d->N) || kn_dtype_get(d->x->dtype)->size != 1)
        return -1;
    int64_t per = d->w->numel / ncols;
    double bound = 0;
    for (int64_t c = 0; c < ncols; c++) {
        double s = 0, wz = cval(d->wz, c);
        for (int64_t k = 0; k < per; k++)
            s += fabs(cval(d->w, conv || d->tb ? c * per + k : k * ncols + c) - wz);
        double b = 255.0 * s + fabs(cval(d->bias, c));
        bound = b > bound ? b : bound;
    }
    return bound;
}

bool kt_int_tables_f64(kn_lower *L, const kn_contract *d, int64_t pad, kn_kbuf **mult) {
    *mult = NULL;
    if (!d->yscale || !d->fixed || !L->target || L->target->kind != KN_TARGET_CPU ||
        kl_lanes(L, KN_F64) < 2)
        return false;
    double b = acc_bound(d);
    if (b < 0 || b > 4194304.0) /* 2^22 */
        return false;
    int64_t ncols = d->kind == KN_CONTRACT_CONV ? d->m : d->N, n = ncols + pad;
    double *t = malloc((size_t)(n ? n : 1) * sizeof *t);
    KN_ASSERT(t);
    for (int64_t c = 0; c < n; c++) {
        kn_qmul q = {0, 31};
        if (c < ncols)
            q = kn_qmul_scales(cval(d->xscale, 0), cval(d->wscale, c), cval(d->yscale, 0));
        t[c] = ldexp((double)q.mult, -q.shift); /* exact: 31 bits, shift <= 62 */
    }
    *mult = kl_table(L, KN_F64, n, t);
    free(t);
    return true;
}

void kt_int_tables(kn_lower *L, const kn_contract *d, kn_kbuf **mult, kn_kbuf **shift) {
    kt_int_tables_padded(L, d, 0, mult, shift);
}

kn_kx *kt_int_store_vec(kn_lower *L, const kn_contract *d, kn_kbuf *mult, kn_kbuf *shift,
                        kn_kx *acc, kn_kx *col, int lanes) {
    if (!mult) return acc;
    kn_kx *zp = d->yz ? kx_load(L, d->yz, kx_int(L, 0)) : NULL;
    kn_kx *m = lanes > 1 ? kx_vload(L, mult, col, lanes) : kx_load(L, mult, col);
    if (shift) {
        kn_kx *s = lanes > 1 ? kx_vload(L, shift, col, lanes) : kx_load(L, shift, col);
        if (shift->dtype == KN_I8 && acc->dtype == KN_I32) { /* kl_qmul_shift32 */
            kn_kx *r = kl_requant_fixed32(L, acc, m, s, zp, d->y->dtype);
            if (!d->clamp) return r; /* the clamp (kiln_clamp) lies within y's type */
            r = kx_bin(L, KX_MIN,
                       kx_bin(L, KX_MAX, kx_cast(L, KN_I32, r), kx_const(L, KN_I32, d->clo)),
                       kx_const(L, KN_I32, (double)d->chi));
            return kx_cast(L, d->y->dtype, r);
        }
        if (d->clamp) return kl_requant_fixed_range(L, acc, m, s, zp, d->y->dtype, d->clo, d->chi);
        return kl_requant_fixed(L, acc, m, s, zp, d->y->dtype);
    }
    kn_kx *r = kl_requant(L, kx_mul(L, kx_cast(L, KN_F64, acc), m), zp, d->y->dtype);
    if (!d->clamp) return r; /* fixed point in f64 (kt_int_tables_f64) may have a clamp */
    r = kx_bin(L, KX_MIN, kx_bin(L, KX_MAX, kx_cast(L, KN_I32, r), kx_const(L, KN_I32, d->clo)),
               kx_const(L, KN_I32, (double)d->chi));
    return kx_cast(L, d->y->dtype, r);
}

kn_kx *kt_int_store(kn_lower *L, const kn_contract *d, kn_kbuf *mult, kn_kbuf *shift, kn_kx *acc,
                    kn_kx *col) {
    return kt_int_store_vec(L, d, mult, shift, acc, col, 1);
}
