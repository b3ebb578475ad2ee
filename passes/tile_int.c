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
 * reduction over channels for a dot product to pack. Where the target has an integer
 * dot product, the depthwise pass packs kernel rows instead (passes/depthwise.c: staged
 * words of vertically adjacent rows, kt_int_dot_kind, kt_dot_word) and the tiles
 * accumulate in i32. */
#include "ir/epilogue.h"
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
    return kn_contract_nchw(d) && kt_dw_int_exact(d);
}

bool kt_dw_int_exact(const kn_contract *d) {
    if (d->kind != KN_CONTRACT_CONV || d->group != d->c || d->m != d->c || d->epi ||
        !kn_contract_is_int(d) || !is_const(d->w) ||
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

int kt_int_dot_kind(const kn_target *tg, const kn_contract *d, const kn_sched *ov) {
    int kind = ov && ov->dot >= KN_DOT_S16X2 && ov->dot <= KN_DOT_S8S8X4 ? ov->dot
               : tg                                                      ? (int)tg->int8_dot
                                                                         : KN_DOT_NONE;
    if (kind == KN_DOT_NONE || !is_const(d->w)) return KN_DOT_NONE;
    int64_t per = d->kind == KN_CONTRACT_CONV ? d->w->numel / d->m : 0;
    for (int64_t i = 0; i < d->w->numel && kind != KN_DOT_S16X2; i++) {
        double v = cval(d->w, i) - cval(d->wz, d->kind == KN_CONTRACT_CONV ? i / per : i % d->N);
        if (v < -128 || v > 127) kind = KN_DOT_S16X2;
    }
    return kind;
}

int64_t kt_int_xoff(int kind, kn_dtype x) {
    bool xu8 = x == KN_U8;
    return kind == KN_DOT_U8S8X4 ? (xu8 ? 0 : 128) : kind == KN_DOT_S8S8X4 ? (xu8 ? -128 : 0) : 0;
}

kn_kx *kt_dot_word(kn_lower *L, int bits, int64_t xoff, kn_kx *const *vals, int n) {
    kn_kx *w = NULL;
    uint32_t mask = bits == 8 ? 0xffu : 0xffffu;
    for (int g = 0; g < n; g++) {
        kn_kx *v = kx_cast(L, KN_I32, vals[g]);
        if (xoff) v = kx_add(L, v, kx_const(L, KN_I32, (double)xoff));
        v = kx_bin(L, KX_AND, kx_cast(L, KN_U32, v), kx_const(L, KN_U32, mask));
        if (g) v = kx_mul(L, v, kx_const(L, KN_U32, (double)(1u << (bits * g))));
        w = w ? kx_bin(L, KX_OR, w, v) : v;
    }
    return kx_cast(L, KN_I32, w);
}

/* The largest |acc| column c of d can see: 255 x sum |w - wz[c]| + |bias[c]| (|x - xz| <= 255
 * for 8-bit operands); -1 where it is not known at compile time (weights, zero points or
 * bias not constants, batched weights). */
static double col_bound(const kn_contract *d, int64_t c) {
    bool conv = d->kind == KN_CONTRACT_CONV;
    int64_t ncols = conv ? d->m : d->N;
    if (!is_const(d->w) || (d->wz && !is_const(d->wz)) || (d->bias && !is_const(d->bias)) ||
        ncols <= 0 || (!conv && d->w->numel != d->K * d->N) || kn_dtype_get(d->x->dtype)->size != 1)
        return -1;
    int64_t per = d->w->numel / ncols;
    double s = 0, wz = cval(d->wz, c);
    for (int64_t k = 0; k < per; k++)
        s += fabs(cval(d->w, conv || d->tb ? c * per + k : k * ncols + c) - wz);
    return 255.0 * s + fabs(cval(d->bias, c));
}

/* The largest col_bound over d's columns; -1 where one is unknown. */
static double acc_bound(const kn_contract *d) {
    int64_t ncols = d->kind == KN_CONTRACT_CONV ? d->m : d->N;
    double bound = ncols > 0 ? 0 : -1;
    for (int64_t c = 0; c < ncols && bound >= 0; c++) {
        double b = col_bound(d, c);
        bound = b < 0 ? -1 : b > bound ? b : bound;
    }
    return bound;
}

/* kt_int_tables_hi32 on any target; init: as one table of records with it (kt_rq.rec);
 * vlanes > 0: as one table of groups of vlanes columns (kt_rq.vrec) */
static bool hi32_tables(kn_lower *L, const kn_contract *d, int64_t pad, kt_rq *q,
                        const kn_kbuf *init, int vlanes) {
    *q = (kt_rq){0};
    if (!d->yscale || !d->fixed || (d->yz && (!is_const(d->yz) || d->yz->numel != 1))) return false;
    int64_t ncols = d->kind == KN_CONTRACT_CONV ? d->m : d->N, n = ncols + pad;
    int32_t zp = (int32_t)cval(d->yz, 0);
    int32_t *t = malloc((size_t)(n ? n : 1) * 3 * sizeof *t);
    KN_ASSERT(t);
    bool ok = true;
    for (int64_t c = 0; c < n && ok; c++) {
        kn_qmul m = {0, 31};
        double b = 0;
        if (c < ncols) {
            m = kn_qmul_scales(cval(d->xscale, 0), cval(d->wscale, c), cval(d->yscale, 0));
            b = col_bound(d, c);
        }
        t[c] = m.mult;
        ok =
            b >= 0 && b < 2147483648.0 && kn_qmul_hi32(m, (int64_t)b, zp, t + 2 * n + c, t + n + c);
    }
    if (ok && init) { /* records of init, mult, round, shift; past n (init's padding
                         columns, never stored): mult 0, round 0, shift 1 */
        int64_t nr = init->numel > n ? init->numel : n;
        int32_t *r = calloc((size_t)(nr ? nr : 1) * 4, sizeof *r);
        KN_ASSERT(r && is_const(init) && init->dtype == KN_I32);
        for (int64_t c = 0; c < nr; c++) {
            r[4 * c] = c < init->numel ? ((const int32_t *)init->data->data)[c] : 0;
            for (int k = 0; k < 3; k++) r[4 * c + 1 + k] = c < n ? t[k * n + c] : k == 2;
        }
        q->mult = q->round = q->shift = kl_table(L, KN_I32, 4 * nr, r);
        q->rec = 4;
        free(r);
    } else if (ok && vlanes > 0) { /* groups of vlanes mults, rounds, shifts; the columns
                                      past n (the last group's rest): mult 0, round 0,
                                      shift 1, as the padding's */
        int64_t ng = (n + vlanes - 1) / vlanes;
        int32_t *r = calloc((size_t)(ng ? ng : 1) * 3 * (size_t)vlanes, sizeof *r);
        KN_ASSERT(r);
        for (int64_t c = 0; c < ng * vlanes; c++)
            for (int k = 0; k < 3; k++) /* the shift negated: what VSHL by a vector takes */
                r[(c / vlanes) * 3 * vlanes + k * vlanes + c % vlanes] =
                    (k == 2 ? -1 : 1) * (c < n ? t[k * n + c] : k == 2);
        q->mult = q->round = q->shift = kl_table(L, KN_I32, ng * 3 * vlanes, r);
        q->vrec = vlanes;
        free(r);
    } else if (ok) {
        q->mult = kl_table(L, KN_I32, n, t);
        q->round = kl_table(L, KN_I32, n, t + n);
        q->shift = kl_table(L, KN_I32, n, t + 2 * n);
    }
    free(t);
    return ok;
}

/* kt_int_tables_hi32's targets */
static bool hi32_target(const kn_lower *L) {
    return L->target && (L->target->kind == KN_TARGET_CPU ||
                         (L->target->kind == KN_TARGET_MCU && L->target->vector_bits >= 128));
}

bool kt_int_tables_hi32(kn_lower *L, const kn_contract *d, int64_t pad, kt_rq *q) {
    *q = (kt_rq){0};
    return hi32_target(L) && hi32_tables(L, d, pad, q, NULL, 0);
}

bool kt_int_tables_vrec(kn_lower *L, const kn_contract *d, int64_t pad, int lanes, kt_rq *q) {
    *q = (kt_rq){0};
    return hi32_target(L) && lanes > 0 && hi32_tables(L, d, pad, q, NULL, lanes);
}

void kt_int_tables_red(kn_lower *L, const kn_contract *d, kt_rq *q) {
    if (!hi32_tables(L, d, 0, q, NULL, 0)) kt_int_tables(L, d, q);
}

bool kt_int_tables_rec(kn_lower *L, const kn_contract *d, const kn_kbuf *init, kt_rq *q) {
    return hi32_tables(L, d, 0, q, init, 0);
}

kn_kx *kt_int_rec_init(kn_lower *L, const kt_rq *q, kn_kx *col) {
    KN_ASSERT(q->rec == 4);
    return kx_load(L, q->mult, kx_mul(L, col, kx_int(L, 4)));
}

void kt_int_tables_padded(kn_lower *L, const kn_contract *d, int64_t pad, kt_rq *q) {
    *q = (kt_rq){0};
    if (!d->yscale) return;
    /* the high-word form for vectors of columns (the scalar per-element store of the
     * matrix tiles measured slower with it: MobileNetV2's classifier 0.065 -> 0.097 ms) */
    if (pad > 0 && kt_int_tables_hi32(L, d, pad, q)) return;
    int64_t ncols = d->kind == KN_CONTRACT_CONV ? d->m : d->N, n = ncols + pad;
    if (d->fixed) { /* the columns' kn_qmul (kl_qmul_tables), then {0, 31} */
        int32_t *t = malloc((size_t)n * 2 * sizeof *t);
        KN_ASSERT(t);
        for (int64_t c = 0; c < n; c++) {
            kn_qmul m = {0, 31};
            if (c < ncols)
                m = kn_qmul_scales(cval(d->xscale, 0), cval(d->wscale, c), cval(d->yscale, 0));
            t[c] = m.mult;
            t[n + c] = m.shift;
        }
        q->mult = kl_table(L, KN_I32, n, t);
        q->shift = kl_table(L, KN_I32, n, t + n);
        free(t);
        /* microcontrollers: 32-bit requantization where every shift allows it */
        if (!pad) q->shift = kl_qmul_shift32(L, q->mult, q->shift, ncols);
        return;
    }
    double *m = malloc((size_t)(n ? n : 1) * sizeof *m);
    KN_ASSERT(m);
    for (int64_t c = 0; c < n; c++)
        m[c] = c < ncols ? cval(d->xscale, 0) * cval(d->wscale, c) / cval(d->yscale, 0) : 0.0;
    q->mult = kl_table(L, KN_F64, n, m);
    free(m);
}

bool kt_int_tables_f64(kn_lower *L, const kn_contract *d, int64_t pad, kt_rq *q) {
    *q = (kt_rq){0};
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
        kn_qmul m = {0, 31};
        if (c < ncols)
            m = kn_qmul_scales(cval(d->xscale, 0), cval(d->wscale, c), cval(d->yscale, 0));
        t[c] = ldexp((double)m.mult, -m.shift); /* exact: 31 bits, shift <= 62 */
    }
    q->mult = kl_table(L, KN_F64, n, t);
    free(t);
    return true;
}

void kt_int_tables(kn_lower *L, const kn_contract *d, kt_rq *q) {
    kt_int_tables_padded(L, d, 0, q);
}

/* Field k after c3 in the records (kt_rq.rec). */
static kn_kx *kt_rec_at(kn_lower *L, kn_kx *c3, int k) {
    return kx_add(L, c3, kx_int(L, k));
}

/* The high-word form's clamp: d's, else y's whole range. */
static void y_range(const kn_contract *d, int64_t *l, int64_t *h) {
    const kn_dtype_info *di = kn_dtype_get(d->y->dtype);
    double hi = ldexp(1.0, (int)di->size * 8);
    double lo = di->is_signed ? -hi / 2 : 0;
    hi = di->is_signed ? hi / 2 - 1 : hi - 1;
    *l = d->clamp ? d->clo : (int64_t)lo, *h = d->clamp ? d->chi : (int64_t)hi;
}

static kn_kx *table_at(kn_lower *L, kn_kbuf *b, kn_kx *col, int lanes) {
    return lanes > 1 ? kx_vload(L, b, col, lanes) : kx_load(L, b, col);
}

kn_kx *kt_int_store_vec(kn_lower *L, const kn_contract *d, const kt_rq *q, kn_kx *acc, kn_kx *col,
                        int lanes) {
    if (!q->mult) return acc;
    if (q->rec) KN_ASSERT(lanes == 1);
    if (q->vrec) { /* the group of col (a multiple of q->vrec): mult, round, shift */
        KN_ASSERT((lanes == q->vrec || lanes == 1) && q->round);
        kn_kx *g = kx_mul(L, col, kx_int(L, 3));
        if (lanes == 1) { /* one column: its group's first entry, then its lane */
            kn_kx *v = kx_int(L, q->vrec);
            g = kx_add(L, kx_mul(L, kx_bin(L, KX_DIV, col, v), kx_int(L, 3 * q->vrec)),
                       kx_bin(L, KX_MOD, col, v));
        }
        int64_t l, h;
        y_range(d, &l, &h);
        kn_kx *tn = table_at(L, q->shift, kt_rec_at(L, g, 2 * lanes), lanes); /* -t */
        return kl_requant_hi32(L, acc, table_at(L, q->mult, g, lanes),
                               table_at(L, q->round, kt_rec_at(L, g, lanes), lanes),
                               kx_sub(L, kx_const(L, KN_I32, 0), tn), l, h, d->y->dtype);
    }
    kn_kx *c3 = q->rec ? kt_rec_at(L, kx_mul(L, col, kx_int(L, 4)), 1)
                       : col; /* the column's record: its mult */
    kn_kx *m = table_at(L, q->mult, c3, lanes);
    if (q->round) {
        int64_t l, h;
        y_range(d, &l, &h);
        return kl_requant_hi32(
            L, acc, m, table_at(L, q->round, q->rec ? kt_rec_at(L, c3, 1) : col, lanes),
            table_at(L, q->shift, q->rec ? kt_rec_at(L, c3, 2) : col, lanes), l, h, d->y->dtype);
    }
    kn_kx *zp = d->yz ? kx_load(L, d->yz, kx_int(L, 0)) : NULL;
    if (q->shift) {
        kn_kx *s = table_at(L, q->shift, col, lanes);
        if (q->shift->dtype == KN_I8 && acc->dtype == KN_I32) { /* kl_qmul_shift32 */
            kn_kx *r = kl_requant_fixed32(L, acc, m, s, zp, d->y->dtype);
            const kn_dtype_info *yi = kn_dtype_get(d->y->dtype);
            int64_t ylo = yi->is_signed ? -((int64_t)1 << (yi->size * 8 - 1)) : 0;
            int64_t yhi = yi->is_signed ? ((int64_t)1 << (yi->size * 8 - 1)) - 1
                                        : ((int64_t)1 << (yi->size * 8)) - 1;
            /* the clamp (kiln_clamp) lies within y's type; none where it is the whole type
             * (a Relu folded where y_zp is the type's minimum) */
            if (!d->clamp || (d->clo <= ylo && d->chi >= yhi)) return r;
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

kn_kx *kt_int_store(kn_lower *L, const kn_contract *d, const kt_rq *q, kn_kx *acc, kn_kx *col) {
    return kt_int_store_vec(L, d, q, acc, col, 1);
}

bool kt_int_epi_ok(const kn_contract *d) {
    int64_t cols = d->kind == KN_CONTRACT_CONV ? d->m : d->N;
    /* the axis of the columns in y, counted from its last: MatMul's last, NCHW's channel */
    int from_end = d->kind == KN_CONTRACT_CONV ? d->nsp : 0;
    for (int k = 0; d->epi && k < d->epi->n; k++) {
        const kn_kbuf *o = d->operand[k];
        if (!o) continue;
        if (o->dtype != KN_F32) return false;
        if (o->numel == 1) continue;
        if (o->numel != cols || o->rank > d->y->rank) return false;
        int ca = o->rank - 1 - from_end; /* the columns' axis in o */
        if (ca < 0 || o->dims[ca] != cols) return false;
    }
    return true;
}

kn_kx *kt_int_epi(kn_lower *L, const kn_contract *d, kn_kx *acc, kn_kx *col) {
    if (!d->epi) return acc;
    int lanes = kx_lanes(acc);
    kn_kx *opnd[KN_EPI_MAX] = {0};
    for (int k = 0; k < d->epi->n; k++) {
        kn_kbuf *o = d->operand[k];
        if (!o) continue;
        opnd[k] = o->numel == 1 ? kx_load(L, o, kx_int(L, 0))
                                : table_at(L, o, col, lanes); /* column col's, or lanes of them */
    }
    return kl_epilogue(L, d->epi, kx_cast(L, KN_F32, acc), opnd);
}
