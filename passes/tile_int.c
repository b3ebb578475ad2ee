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

#include "ir/requant.h"

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

void kt_int_tables(kn_lower *L, const kn_contract *d, kn_kbuf **mult, kn_kbuf **shift) {
    *mult = *shift = NULL;
    if (!d->yscale) return;
    int64_t ncols = d->kind == KN_CONTRACT_CONV ? d->m : d->N;
    if (d->fixed) {
        bool ok = kl_qmul_tables(L, d->xscale, d->wscale, d->yscale, ncols, mult, shift);
        KN_ASSERT(ok); /* the callers checked that the scales are constants */
        return;
    }
    double *m = malloc((size_t)(ncols ? ncols : 1) * sizeof *m);
    KN_ASSERT(m);
    for (int64_t c = 0; c < ncols; c++)
        m[c] = cval(d->xscale, 0) * cval(d->wscale, c) / cval(d->yscale, 0);
    *mult = kl_table(L, KN_F64, ncols, m);
    free(m);
}

kn_kx *kt_int_store(kn_lower *L, const kn_contract *d, kn_kbuf *mult, kn_kbuf *shift, kn_kx *acc,
                    kn_kx *col) {
    if (!mult) return acc;
    kn_kx *zp = d->yz ? kx_load(L, d->yz, kx_int(L, 0)) : NULL;
    if (shift)
        return kl_requant_fixed(L, acc, kx_load(L, mult, col), kx_load(L, shift, col), zp,
                                d->y->dtype);
    return kl_requant(L, kx_mul(L, kx_cast(L, KN_F64, acc), kx_load(L, mult, col)), zp,
                      d->y->dtype);
}
