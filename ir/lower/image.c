/* Lowerings of group 'image': Resize, Upsample, GridSample, AffineGrid, RoiAlign, MaxRoiPool,
 * CenterCropPad, Col2Im.
 *
 * Resize/Upsample: scales, sizes and roi must be constants. The interpolation is
 * separable (see ir/ops/image.c): per output axis, each output coordinate maps to
 * ntap (input index, weight) taps (an antialiased window may have many, see
 * kn_resize_window). The kernel first fills one small table per
 * resampled axis (idx[o * ntap + k], w[o * ntap + k], in scratch memory) with the
 * interpreter's coordinate arithmetic in f64, then walks the output, summing over
 * the tensor product of the axes' taps with one static loop per axis. Axes whose
 * mapping is the identity (same length, scale 1, a transform with x_in = x_out) get
 * no table. tf_crop_and_resize marks coordinates outside the input with idx = -1
 * in tap 0; those elements take extrapolation_value.
 *
 * GridSample, RoiAlign and MaxRoiPool compute their sample coordinates in f64 in
 * the kernel, per output cell, exactly as the interpreter does; every tap index is
 * clamped (or its weight zeroed) so no load leaves the input. NonMaxSuppression's
 * output length depends on the data: it is not lowered. */
#include "ir/kir.h"
#include "ir/ops/image_attrs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- expression shorthands (f64 coordinates, i64 indexes) ---- */

static kn_kx *F(kn_lower *L, double v) {
    return kx_const(L, KN_F64, v);
}
static kn_kx *I(kn_lower *L, int64_t v) {
    return kx_int(L, v);
}
static kn_kx *V(kn_lower *L, int var) {
    return kx_var(L, var);
}
static kn_kx *dvd(kn_lower *L, kn_kx *a, kn_kx *b) {
    return kx_bin(L, KX_DIV, a, b);
}
static kn_kx *sel(kn_lower *L, kn_kx *c, kn_kx *a, kn_kx *b) {
    return kx_select(L, c, a, b);
}
static kn_kx *f64(kn_lower *L, kn_kx *a) {
    return kx_cast(L, KN_F64, a);
}
static kn_kx *i64(kn_lower *L, kn_kx *a) {
    return kx_cast(L, KN_I64, a);
}
/* a clamped to [lo, hi]; NaN stays NaN, as with the interpreter's comparisons. */
static kn_kx *clampx(kn_lower *L, kn_kx *a, kn_kx *lo, kn_kx *hi) {
    return kx_bin(L, KX_MIN, kx_bin(L, KX_MAX, a, lo), hi);
}
static int declf(kn_lower *L, kn_kx *x) {
    return kl_decl(L, KN_F64, x);
}
static int decli(kn_lower *L, kn_kx *x) {
    return kl_decl(L, KN_I64, x);
}
/* The dtype sums of taps accumulate in: f32 for f32/f16/bf16 outputs, else f64
 * (integer outputs are rounded at the end, as the interpreter does). */
static kn_dtype acc_dtype(kn_dtype out) {
    kn_dtype t = kx_compute_dtype(out);
    return t == KN_F32 ? KN_F32 : KN_F64;
}
static kn_kx *finish(kn_lower *L, kn_dtype out, kn_kx *v) {
    return kn_dtype_get(out)->is_float ? v : kx_un(L, KX_ROUND, v);
}

/* ---- Resize, Upsample ---- */

/* The interpreter's plan (kn_resize_setup) with the roi/scales/sizes inputs that are
 * constants; scales and sizes must be. *roi_buf: the roi input when tf_crop_and_resize
 * reads a roi known only at run time, else NULL. */
static kn_status rplan_get(kn_lower *L, const kn_node *n, kn_kbuf *const *in, kn_resize_plan *p,
                           kn_kbuf **roi_buf) {
    kn_ctx *cx = kl_ctx(L);
    kn_tensor t[4], *tin[4] = {0}; /* the inputs as infer sees them: data for constants */
    for (int i = 0; i < n->nin && i < 4; i++) {
        if (!in[i]) continue;
        const kn_tensor *c = i > 0 ? kl_const(L, n, i) : NULL;
        memset(&t[i], 0, sizeof t[i]);
        if (c)
            t[i] = *c;
        else
            t[i].type = kn_type_make(in[i]->dtype, in[i]->rank, in[i]->dims);
        tin[i] = &t[i];
    }
    *roi_buf = NULL;
    if (kn_resize_setup(cx, n, tin, p)) return cx->status;
    if (p->known) return KN_OK;
    int legacy = n->op == KN_OP_UPSAMPLE || n->opset < 11, scales_in = legacy ? 1 : 2;
    if (!legacy && tin[3] && !tin[3]->data && in[3]->numel > 0)
        return kn_diag(cx, n, KN_EUNSUPPORTED, "needs a constant 'sizes' input (%s)",
                       kn_hint_text(cx, KN_HINT_BIND));
    if (scales_in < n->nin && tin[scales_in] && !tin[scales_in]->data && in[scales_in]->numel > 0)
        return kn_diag(cx, n, KN_EUNSUPPORTED, "needs a constant 'scales' input (%s)",
                       kn_hint_text(cx, KN_HINT_BIND));
    /* what remains unknown is tf_crop_and_resize's roi */
    if (in[1]->numel != 2 * p->rank) return kn_diag(cx, n, KN_EINVAL, "roi has the wrong length");
    *roi_buf = in[1];
    return KN_OK;
}

/* Taps per output coordinate on axis a: 0 when the axis maps identically. */
static int resize_ntap(const kn_resize_plan *p, int a, int64_t len, int64_t olen) {
    if (olen == len && p->scale[a] == 1.0 && p->coord != CT_TF_NN && p->coord != CT_TF_CROP)
        return 0;
    return p->mode == RS_NEAREST ? 1 : kn_resize_window(p, a);
}

/* The antialiased filter's weight for tap k (before normalization): the linear or cubic
 * kernel at distance (k + 1 - pad - ratio) * scale, zero outside the input with
 * exclude_outside (ir/ops/image.c's resize_taps). */
static kn_kx *aa_weight(kn_lower *L, const kn_resize_plan *p, int a, int64_t len, int pad, kn_kx *k,
                        int vr, int st) {
    double s = p->scale[a], A = p->cubic_a;
    int d = declf(
        L, kx_un(L, KX_ABS,
                 kx_mul(L, kx_sub(L, f64(L, kx_add(L, k, I(L, 1 - pad))), V(L, vr)), F(L, s))));
    kn_kx *v;
    if (p->mode == RS_LINEAR) {
        v = kx_bin(L, KX_MAX, kx_sub(L, F(L, 1), V(L, d)), F(L, 0));
    } else {
        /* ((A + 2) d - (A + 3)) d d + 1 for d <= 1, ((A d - 5A) d + 8A) d - 4A for d < 2 */
        kn_kx *near = kx_add(
            L,
            kx_mul(L, kx_mul(L, kx_sub(L, kx_mul(L, F(L, A + 2), V(L, d)), F(L, A + 3)), V(L, d)),
                   V(L, d)),
            F(L, 1));
        kn_kx *far = kx_sub(
            L,
            kx_mul(L,
                   kx_add(L,
                          kx_mul(L, kx_sub(L, kx_mul(L, F(L, A), V(L, d)), F(L, 5 * A)), V(L, d)),
                          F(L, 8 * A)),
                   V(L, d)),
            F(L, 4 * A));
        v = sel(L, kx_bin(L, KX_LE, V(L, d), F(L, 1)), near,
                sel(L, kx_bin(L, KX_LT, V(L, d), F(L, 2)), far, F(L, 0)));
    }
    if (p->exclude_outside) {
        kn_kx *i = kx_add(L, V(L, st), k);
        kn_kx *in = kx_bin(L, KX_LAND, kx_bin(L, KX_GE, i, I(L, 0)),
                           kx_bin(L, KX_LT, kx_add(L, V(L, st), k), I(L, len)));
        v = sel(L, in, v, F(L, 0));
    }
    return v;
}

/* Fills idx[o * ntap + k] (and w[...] when ntap > 1) for o in [0, olen): the
 * interpreter's resize_taps as kernel code. */
static void resize_table(kn_lower *L, const kn_resize_plan *p, kn_kbuf *roi_buf, int a, int64_t len,
                         int64_t olen, int ntap, kn_kbuf *idx, kn_kbuf *w) {
    int vo = kl_for(L, olen);
    double s = p->scale[a], last = (double)(len - 1);
    double ol = p->from_sizes ? (double)olen : s * (double)len;
    kn_kx *x = f64(L, V(L, vo)), *xo = NULL;
    switch (p->coord) {
    case CT_HALF_PIXEL: xo = kx_sub(L, dvd(L, kx_add(L, x, F(L, 0.5)), F(L, s)), F(L, 0.5)); break;
    case CT_HALF_PIXEL_SYM: {
        double adj = (double)olen / (s * (double)len), c = (double)len / 2;
        xo = kx_add(L, F(L, c * (1 - adj)),
                    kx_sub(L, dvd(L, kx_add(L, x, F(L, 0.5)), F(L, s)), F(L, 0.5)));
        break;
    }
    case CT_PYTORCH:
        xo = ol > 1 ? kx_sub(L, dvd(L, kx_add(L, x, F(L, 0.5)), F(L, s)), F(L, 0.5)) : F(L, 0);
        break;
    case CT_ALIGN_CORNERS:
        xo = ol == 1 ? F(L, 0) : dvd(L, kx_mul(L, x, F(L, last)), F(L, ol - 1));
        break;
    case CT_ASYMMETRIC: xo = dvd(L, x, F(L, s)); break;
    case CT_TF_NN: xo = dvd(L, kx_add(L, x, F(L, 0.5)), F(L, s)); break;
    default: {
        kn_kx *x0 = F(L, p->roi[a]), *x1 = F(L, p->roi[p->rank + a]);
        if (roi_buf) {
            x0 = f64(L, kx_load(L, roi_buf, I(L, a)));
            x1 = f64(L, kx_load(L, roi_buf, I(L, p->rank + a)));
        }
        xo = ol > 1 ? kx_add(L,
                             dvd(L, kx_mul(L, kx_mul(L, x, kx_sub(L, x1, x0)), F(L, last)),
                                 F(L, ol - 1)),
                             kx_mul(L, x0, F(L, last)))
                    : kx_mul(L, kx_mul(L, F(L, 0.5), kx_add(L, x0, x1)), F(L, last));
        break;
    }
    }
    int vx = declf(L, xo);
    int outside = -1;
    if (p->coord == CT_TF_CROP)
        outside = kl_decl(L, KN_BOOL,
                          kx_bin(L, KX_LOR, kx_bin(L, KX_LT, V(L, vx), F(L, 0)),
                                 kx_bin(L, KX_GT, V(L, vx), F(L, last))));
    int wn = kn_resize_window(p, a), pad = wn / 2;
    kl_set(L, vx, clampx(L, V(L, vx), F(L, -pad - 1.0), F(L, (double)len + pad)));
    int vb = declf(L, kx_un(L, KX_FLOOR, V(L, vx)));
    int vr = declf(L, kx_sub(L, V(L, vx), V(L, vb)));
    int z = kl_decl(L, KN_BOOL, kx_bin(L, KX_EQ, V(L, vr), F(L, 0)));
    kl_set(L, vb, sel(L, V(L, z), kx_sub(L, V(L, vb), F(L, 1)), V(L, vb)));
    kl_set(L, vr, sel(L, V(L, z), F(L, 1), V(L, vr)));
    int st = decli(L, clampx(L, kx_sub(L, i64(L, V(L, vb)), I(L, pad - 1)), I(L, -pad),
                             I(L, len - 1 + pad - (wn - 1))));
    kn_kx *base = kx_mul(L, V(L, vo), I(L, ntap));
    if (p->mode == RS_NEAREST) {
        kn_kx *r = V(L, vr), *right;
        switch (p->nearest) {
        case NM_ROUND_PREFER_FLOOR: right = kx_bin(L, KX_GT, r, F(L, 0.5)); break;
        case NM_ROUND_PREFER_CEIL: right = kx_bin(L, KX_GE, r, F(L, 0.5)); break;
        case NM_FLOOR: right = kx_const(L, KN_BOOL, 0); break;
        case NM_CEIL: right = kx_const(L, KN_BOOL, 1); break;
        default: right = kx_const(L, KN_BOOL, s < 1); break;
        }
        right = kx_bin(L, KX_LOR, kx_bin(L, KX_EQ, V(L, vr), F(L, 1)), right);
        kn_kx *i = clampx(L, kx_add(L, V(L, st), i64(L, right)), I(L, 0), I(L, len - 1));
        if (outside >= 0) i = sel(L, V(L, outside), I(L, -1), i);
        kl_store(L, idx, base, i);
        kl_end(L);
        return;
    }
    if (p->antialias && s < 1) {
        /* wn taps: a loop summing the weights, then one storing them normalized */
        int sum = declf(L, F(L, 0));
        int k = kl_for(L, ntap);
        kl_set(L, sum, kx_add(L, V(L, sum), aa_weight(L, p, a, len, pad, V(L, k), vr, st)));
        kl_end(L);
        k = kl_for(L, ntap);
        kn_kx *o = kx_add(L, base, V(L, k));
        kn_kx *i = clampx(L, kx_add(L, V(L, st), V(L, k)), I(L, 0), I(L, len - 1));
        if (outside >= 0)
            i = sel(L, kx_bin(L, KX_LAND, V(L, outside), kx_bin(L, KX_EQ, V(L, k), I(L, 0))),
                    I(L, -1), i);
        kl_store(L, idx, o, i);
        kl_store(L, w, kx_add(L, base, V(L, k)),
                 dvd(L, aa_weight(L, p, a, len, pad, V(L, k), vr, st), V(L, sum)));
        kl_end(L);
        kl_end(L);
        return;
    }
    int c[4];
    if (p->mode == RS_LINEAR) {
        c[0] = declf(L, kx_sub(L, F(L, 1), V(L, vr)));
        c[1] = declf(L, V(L, vr));
    } else {
        double A = p->cubic_a;
        kn_kx *r1 = kx_add(L, V(L, vr), F(L, 1));
        int q = declf(L, kx_sub(L, F(L, 1), V(L, vr)));
        kn_kx *q1 = kx_add(L, V(L, q), F(L, 1));
        /* ((A * r1 - 5A) * r1 + 8A) * r1 - 4A and ((A + 2) * r - (A + 3)) * r * r + 1 */
        c[0] = declf(
            L,
            kx_sub(L,
                   kx_mul(L,
                          kx_add(L, kx_mul(L, kx_sub(L, kx_mul(L, F(L, A), r1), F(L, 5 * A)), r1),
                                 F(L, 8 * A)),
                          r1),
                   F(L, 4 * A)));
        c[1] = declf(
            L, kx_add(L,
                      kx_mul(L,
                             kx_mul(L, kx_sub(L, kx_mul(L, F(L, A + 2), V(L, vr)), F(L, A + 3)),
                                    V(L, vr)),
                             V(L, vr)),
                      F(L, 1)));
        c[2] = declf(
            L, kx_add(L,
                      kx_mul(L,
                             kx_mul(L, kx_sub(L, kx_mul(L, F(L, A + 2), V(L, q)), F(L, A + 3)),
                                    V(L, q)),
                             V(L, q)),
                      F(L, 1)));
        c[3] = declf(
            L,
            kx_sub(L,
                   kx_mul(L,
                          kx_add(L, kx_mul(L, kx_sub(L, kx_mul(L, F(L, A), q1), F(L, 5 * A)), q1),
                                 F(L, 8 * A)),
                          q1),
                   F(L, 4 * A)));
    }
    if (p->exclude_outside) {
        int sum = declf(L, F(L, 0));
        for (int k = 0; k < ntap; k++) {
            kn_kx *i = kx_add(L, V(L, st), I(L, k));
            kn_kx *in = kx_bin(L, KX_LAND, kx_bin(L, KX_GE, i, I(L, 0)),
                               kx_bin(L, KX_LT, kx_add(L, V(L, st), I(L, k)), I(L, len)));
            kl_set(L, c[k], sel(L, in, V(L, c[k]), F(L, 0)));
            kl_set(L, sum, kx_add(L, V(L, sum), V(L, c[k])));
        }
        for (int k = 0; k < ntap; k++) kl_set(L, c[k], dvd(L, V(L, c[k]), V(L, sum)));
    }
    for (int k = 0; k < ntap; k++) {
        kn_kx *o = kx_add(L, base, I(L, k));
        kn_kx *i = clampx(L, kx_add(L, V(L, st), I(L, k)), I(L, 0), I(L, len - 1));
        if (k == 0 && outside >= 0) i = sel(L, V(L, outside), I(L, -1), i);
        kl_store(L, idx, o, i);
        kl_store(L, w, kx_add(L, kx_mul(L, V(L, vo), I(L, ntap)), I(L, k)), V(L, c[k]));
    }
    kl_end(L);
}

static kn_status lower_resize(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                              kn_kbuf *const *out) {
    kn_resize_plan p;
    kn_kbuf *roi_buf;
    if (rplan_get(L, n, in, &p, &roi_buf)) return kl_ctx(L)->status;
    kn_kbuf *X = in[0], *Y = out[0];
    int r = p.rank;
    if (Y->numel == 0) return KN_OK;
    for (int a = 0; a < r; a++)
        if (X->dims[a] == 0)
            return kn_diag(kl_ctx(L), n, KN_EINVAL, "cannot resize an empty axis %d", a);
    kn_dtype at = acc_dtype(Y->dtype);
    int ntap[KN_MAX_RANK];
    kn_kbuf *idx[KN_MAX_RANK] = {0}, *wt[KN_MAX_RANK] = {0};
    int any_crop = 0, b0 = -1, b1 = -1;
    int ort = kn_resize_bilinear_axes(&p, Y->dtype, &b0, &b1);
    for (int a = 0; a < r; a++) {
        if (ort && (a == b0 || a == b1)) { /* compile-time taps, onnxruntime's arithmetic */
            ntap[a] = 2;
            int64_t olen = Y->dims[a];
            int64_t *ti = malloc(sizeof(int64_t) * 2 * (size_t)olen);
            float *tw = malloc(sizeof(float) * 2 * (size_t)olen);
            if (!ti || !tw) {
                free(ti);
                free(tw);
                return kn_diag(kl_ctx(L), n, KN_ELIMIT, "out of memory");
            }
            for (int64_t o = 0; o < olen; o++)
                kn_resize_bilinear_taps(&p, a, X->dims[a], olen, o, ti + 2 * o, tw + 2 * o);
            idx[a] = kl_table(L, KN_I64, 2 * olen, ti);
            wt[a] = kl_table(L, KN_F32, 2 * olen, tw);
            free(ti);
            free(tw);
            continue;
        }
        ntap[a] = resize_ntap(&p, a, X->dims[a], Y->dims[a]);
        if (!ntap[a]) continue;
        idx[a] = kl_scratch(L, KN_I64, Y->dims[a] * ntap[a]);
        if (ntap[a] > 1) wt[a] = kl_scratch(L, at, Y->dims[a] * ntap[a]);
        resize_table(L, &p, roi_buf, a, X->dims[a], Y->dims[a], ntap[a], idx[a], wt[a]);
        any_crop |= p.coord == CT_TF_CROP;
    }

    int v[KN_MAX_RANK];
    int64_t xst[KN_MAX_RANK], yst[KN_MAX_RANK];
    kn_strides(r, X->dims, xst);
    kn_strides(r, Y->dims, yst);
    kl_for_shape(L, r, Y->dims, v);
    kn_kx *yi = kx_offset(L, r, v, yst);
    if (any_crop) {
        kn_kx *outside = kx_const(L, KN_BOOL, 0);
        for (int a = 0; a < r; a++)
            if (ntap[a])
                outside = kx_bin(L, KX_LOR, outside,
                                 kx_bin(L, KX_LT,
                                        kx_load(L, idx[a], kx_mul(L, V(L, v[a]), I(L, ntap[a]))),
                                        I(L, 0)));
        kl_if(L, outside);
        kl_store(L, Y, yi, kx_const(L, Y->dtype, p.extrapolation));
        kl_else(L);
    }
    int acc = kl_decl(L, at, kx_const(L, at, 0));
    /* one loop per axis with several taps; the weight product builds up level by level */
    kn_kx *off = I(L, 0), *wprod = NULL;
    int nloops = 0;
    for (int a = 0; a < r; a++) {
        kn_kx *ia;
        if (!ntap[a]) {
            ia = V(L, v[a]);
        } else if (ntap[a] == 1) {
            ia = kx_load(L, idx[a], V(L, v[a]));
        } else {
            int k = kl_for(L, ntap[a]);
            nloops++;
            kn_kx *t = kx_add(L, kx_mul(L, V(L, v[a]), I(L, ntap[a])), V(L, k));
            kn_kx *w = kx_load(L, wt[a], t);
            int wv = kl_decl(L, at, wprod ? kx_mul(L, wprod, w) : w);
            wprod = V(L, wv);
            ia = kx_load(L, idx[a], kx_add(L, kx_mul(L, V(L, v[a]), I(L, ntap[a])), V(L, k)));
        }
        off = kx_add(L, off, kx_mul(L, ia, I(L, xst[a])));
    }
    kn_kx *xv = kx_load(L, X, off);
    /* the bilinear kernel rounds each product, as onnxruntime's does */
    kl_set(L, acc,
           !wprod ? kx_add(L, V(L, acc), xv)
           : ort  ? kx_add(L, V(L, acc), kx_mul(L, wprod, xv))
                  : kx_fma(L, wprod, xv, V(L, acc)));
    kl_end_n(L, nloops);
    kl_store(L, Y, kx_offset(L, r, v, yst), finish(L, Y->dtype, V(L, acc)));
    if (any_crop) kl_end(L);
    kl_end_n(L, r);
    return KN_OK;
}

/* ---- GridSample ---- */

/* gs_reflect(x, lo, hi) of ir/ops/image.c: folds x into [lo, hi]. */
static kn_kx *gs_reflect(kn_lower *L, kn_kx *x, double lo, double hi) {
    double range = hi - lo;
    if (range <= 0) return F(L, lo);
    kn_kx *dxl = kx_sub(L, F(L, lo), x), *dxh = kx_sub(L, x, F(L, hi));
    kn_kx *kl = kx_un(L, KX_FLOOR, dvd(L, dxl, F(L, range)));
    kn_kx *kh = kx_un(L, KX_FLOOR, dvd(L, dxh, F(L, range)));
    kn_kx *rl = kx_sub(L, dxl, kx_mul(L, kl, F(L, range))),
          *rh = kx_sub(L, dxh, kx_mul(L, kh, F(L, range)));
    kn_kx *evl = kx_bin(L, KX_EQ, kx_bin(L, KX_FMOD, kl, F(L, 2)), F(L, 0));
    kn_kx *evh = kx_bin(L, KX_EQ, kx_bin(L, KX_FMOD, kh, F(L, 2)), F(L, 0));
    kn_kx *below = sel(L, evl, kx_add(L, F(L, lo), rl), kx_sub(L, F(L, hi), rl));
    kn_kx *above = sel(L, evh, kx_sub(L, F(L, hi), rh), kx_add(L, F(L, lo), rh));
    return sel(L, kx_bin(L, KX_LT, x, F(L, lo)), below,
               sel(L, kx_bin(L, KX_GT, x, F(L, hi)), above, x));
}

/* Cubic convolution weights (A = -0.75) of fraction t into c[4] (f64 locals). */
static void gs_cubic(kn_lower *L, kn_kx *t, int *c) {
    const double A = -0.75;
    int tv = declf(L, t);
    kn_kx *ts[4] = {kx_add(L, V(L, tv), F(L, 1)), V(L, tv), kx_sub(L, F(L, 1), V(L, tv)),
                    kx_sub(L, F(L, 2), V(L, tv))};
    for (int k = 0; k < 4; k++) {
        kn_kx *u = ts[k];
        if (k == 0 || k == 3)
            c[k] = declf(
                L,
                kx_sub(L,
                       kx_mul(L,
                              kx_add(L, kx_mul(L, kx_sub(L, kx_mul(L, F(L, A), u), F(L, 5 * A)), u),
                                     F(L, 8 * A)),
                              u),
                       F(L, 4 * A)));
        else
            c[k] = declf(
                L, kx_add(L,
                          kx_mul(L, kx_mul(L, kx_sub(L, kx_mul(L, F(L, A + 2), u), F(L, A + 3)), u),
                                 u),
                          F(L, 1)));
    }
}

/* X [N, C, D_0..D_r-1] (r = 2 or 3), grid [N, O..., r] (x, the last axis, first): per
 * output position the pixel coordinates, the padding rule and nt taps an axis with
 * their weights, then for each channel the sum over the nt^r taps. */
static kn_status lower_gridsample(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                                  kn_kbuf *const *out) {
    kn_ctx *cx = kl_ctx(L);
    kn_grid_params g;
    if (kn_grid_setup(cx, n, &g)) return cx->status;
    int m = g.mode, pad = g.padding, align = g.align_corners;
    kn_kbuf *X = in[0], *G = in[1], *Y = out[0];
    int r = X->rank - 2;
    int64_t N = X->dims[0], C = X->dims[1], D[KN_MAX_RANK], O = 1, P = 1;
    for (int d = 0; d < r; d++) {
        D[d] = X->dims[2 + d];
        O *= G->dims[1 + d];
        P *= D[d];
    }
    if (Y->numel == 0) return KN_OK;
    if (P == 0) return kn_diag(cx, n, KN_EINVAL, "X has an empty spatial dim");
    kn_dtype at = acc_dtype(Y->dtype);

    int b = kl_for(L, N), o = kl_for(L, O);
    kn_kx *gi = kx_mul(L, kx_add(L, kx_mul(L, V(L, b), I(L, O)), V(L, o)), I(L, r));
    int p[KN_MAX_RANK];
    double lo = align ? 0 : -0.5, hi[KN_MAX_RANK];
    kn_kx *outside = NULL;
    for (int d = 0; d < r; d++) {
        kn_kx *gc = f64(L, kx_load(L, G, kx_add(L, gi, I(L, r - 1 - d))));
        kn_kx *pe =
            align
                ? kx_mul(L, dvd(L, kx_add(L, gc, F(L, 1)), F(L, 2)), F(L, (double)(D[d] - 1)))
                : dvd(L, kx_sub(L, kx_mul(L, kx_add(L, gc, F(L, 1)), F(L, (double)D[d])), F(L, 1)),
                      F(L, 2));
        if (m == GS_NEAREST) pe = kx_un(L, KX_ROUND, pe);
        p[d] = declf(L, pe);
        hi[d] = (double)(D[d] - 1) - lo;
        kn_kx *od = kx_bin(L, KX_LOR, kx_bin(L, KX_LT, V(L, p[d]), F(L, lo)),
                           kx_bin(L, KX_GT, V(L, p[d]), F(L, hi[d])));
        outside = outside ? kx_bin(L, KX_LOR, outside, od) : od;
    }
    if (pad != GS_ZEROS) {
        kl_if(L, outside);
        for (int d = 0; d < r; d++)
            kl_set(L, p[d],
                   pad == GS_BORDER ? clampx(L, V(L, p[d]), F(L, 0), F(L, (double)(D[d] - 1)))
                                    : gs_reflect(L, V(L, p[d]), lo, hi[d]));
        kl_end(L);
    }
    /* per axis: the first tap i0 and nt weights */
    int nt = m == GS_NEAREST ? 1 : m == GS_BILINEAR ? 2 : 4;
    int i0[KN_MAX_RANK], cw[KN_MAX_RANK][4];
    for (int d = 0; d < r; d++) {
        kl_set(L, p[d], clampx(L, V(L, p[d]), F(L, -5.0), F(L, (double)D[d] + 4)));
        if (m == GS_NEAREST) {
            i0[d] = decli(L, i64(L, V(L, p[d])));
            cw[d][0] = declf(L, F(L, 1));
            continue;
        }
        int f = declf(L, kx_un(L, KX_FLOOR, V(L, p[d])));
        int fr = declf(L, kx_sub(L, V(L, p[d]), V(L, f)));
        i0[d] = decli(L, kx_sub(L, i64(L, V(L, f)), I(L, m == GS_BICUBIC ? 1 : 0)));
        if (m == GS_BILINEAR) {
            cw[d][0] = declf(L, kx_sub(L, F(L, 1), V(L, fr)));
            cw[d][1] = fr;
        } else {
            gs_cubic(L, V(L, fr), cw[d]);
        }
    }
    /* taps: offsets into the plane and weights (zero for taps outside with zeros padding) */
    int ntaps = 1;
    for (int d = 0; d < r; d++) ntaps *= nt;
    int offs[64], ws[64];
    KN_ASSERT(ntaps <= 64);
    for (int t = 0; t < ntaps; t++) {
        kn_kx *off = I(L, 0), *wgt = NULL, *valid = NULL;
        for (int d = 0, rest = t, div = ntaps / nt; d < r; d++, div /= nt) {
            int k = rest / div;
            rest %= div;
            kn_kx *q = kx_add(L, V(L, i0[d]), I(L, k));
            if (pad == GS_ZEROS) {
                kn_kx *vd = kx_bin(L, KX_LAND, kx_bin(L, KX_GE, q, I(L, 0)),
                                   kx_bin(L, KX_LT, q, I(L, D[d])));
                valid = valid ? kx_bin(L, KX_LAND, valid, vd) : vd;
            } else if (pad == GS_REFLECTION) {
                q = i64(L, gs_reflect(L, f64(L, q), lo, hi[d]));
            }
            q = clampx(L, q, I(L, 0), I(L, D[d] - 1));
            off = kx_add(L, kx_mul(L, off, I(L, D[d])), q);
            wgt = wgt ? kx_mul(L, wgt, V(L, cw[d][k])) : V(L, cw[d][k]);
        }
        offs[t] = decli(L, off);
        if (valid) wgt = sel(L, valid, wgt, F(L, 0));
        ws[t] = kl_decl(L, at, wgt);
    }
    int c = kl_for(L, C);
    kn_kx *bc = kx_add(L, kx_mul(L, V(L, b), I(L, C)), V(L, c));
    kn_kx *base = kx_mul(L, bc, I(L, P));
    kn_kx *sum = NULL;
    for (int t = 0; t < ntaps; t++) {
        kn_kx *term = kx_mul(L, V(L, ws[t]), kx_load(L, X, kx_add(L, base, V(L, offs[t]))));
        sum = sum ? kx_add(L, sum, term) : term;
    }
    kl_store(L, Y, kx_add(L, kx_mul(L, bc, I(L, O)), V(L, o)), finish(L, Y->dtype, sum));
    kl_end_n(L, 3);
    return KN_OK;
}

/* ---- RoiAlign ---- */

static kn_status lower_roialign(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                                kn_kbuf *const *out) {
    kn_ctx *cx = kl_ctx(L);
    kn_roialign_attrs a;
    if (kn_roialign_attrs_get(cx, n, &a)) return cx->status;
    kn_kbuf *X = in[0], *rois = in[1], *bi = in[2], *Y = out[0];
    int64_t N = X->dims[0], C = X->dims[1], H = X->dims[2], W = X->dims[3], R = rois->dims[0];
    if (Y->numel == 0) return KN_OK;
    kn_dtype at = acc_dtype(Y->dtype);

    int r = kl_for(L, R);
    int b = decli(L, clampx(L, i64(L, kx_load(L, bi, V(L, r))), I(L, 0), I(L, N - 1)));
    int rv[4];
    for (int k = 0; k < 4; k++)
        rv[k] = declf(
            L,
            kx_sub(L,
                   kx_mul(L,
                          f64(L, kx_load(L, rois, kx_add(L, kx_mul(L, V(L, r), I(L, 4)), I(L, k)))),
                          F(L, a.scale)),
                   F(L, a.offset)));
    int rw = declf(L, kx_sub(L, V(L, rv[2]), V(L, rv[0]))),
        rh = declf(L, kx_sub(L, V(L, rv[3]), V(L, rv[1])));
    if (a.offset == 0) {
        kl_set(L, rw, sel(L, kx_bin(L, KX_LT, V(L, rw), F(L, 1)), F(L, 1), V(L, rw)));
        kl_set(L, rh, sel(L, kx_bin(L, KX_LT, V(L, rh), F(L, 1)), F(L, 1), V(L, rh)));
    }
    int bh = declf(L, dvd(L, V(L, rh), F(L, (double)a.oh))),
        bw = declf(L, dvd(L, V(L, rw), F(L, (double)a.ow)));
    int gh = decli(L, a.sr > 0 ? I(L, a.sr)
                               : i64(L, kx_un(L, KX_CEIL, dvd(L, V(L, rh), F(L, (double)a.oh)))));
    int gw = decli(L, a.sr > 0 ? I(L, a.sr)
                               : i64(L, kx_un(L, KX_CEIL, dvd(L, V(L, rw), F(L, (double)a.ow)))));
    kn_kx *cnt = kx_mul(L, V(L, gh), V(L, gw));
    int count = declf(L, f64(L, sel(L, kx_bin(L, KX_GT, cnt, I(L, 1)), cnt, I(L, 1))));

    int c = kl_for(L, C), ph = kl_for(L, a.oh), pw = kl_for(L, a.ow);
    int base = decli(L, kx_mul(L, kx_add(L, kx_mul(L, V(L, b), I(L, C)), V(L, c)), I(L, H * W)));
    int acc = kl_decl(L, at, kx_const(L, at, 0));
    int first = a.is_max ? kl_decl(L, KN_BOOL, kx_const(L, KN_BOOL, 1)) : -1;
    int iy = kl_for_x(L, V(L, gh));
    int sy = declf(L, kx_add(L, kx_add(L, V(L, rv[1]), kx_mul(L, f64(L, V(L, ph)), V(L, bh))),
                             dvd(L, kx_mul(L, kx_add(L, f64(L, V(L, iy)), F(L, 0.5)), V(L, bh)),
                                 f64(L, V(L, gh)))));
    int ix = kl_for_x(L, V(L, gw));
    int sx = declf(L, kx_add(L, kx_add(L, V(L, rv[0]), kx_mul(L, f64(L, V(L, pw)), V(L, bw))),
                             dvd(L, kx_mul(L, kx_add(L, f64(L, V(L, ix)), F(L, 0.5)), V(L, bw)),
                                 f64(L, V(L, gw)))));
    /* roi_bilinear: points more than a pixel outside weigh 0; others are clamped */
    kn_kx *out_of = kx_bin(L, KX_LOR,
                           kx_bin(L, KX_LOR, kx_bin(L, KX_LT, V(L, sy), F(L, -1)),
                                  kx_bin(L, KX_GT, V(L, sy), F(L, (double)H))),
                           kx_bin(L, KX_LOR, kx_bin(L, KX_LT, V(L, sx), F(L, -1)),
                                  kx_bin(L, KX_GT, V(L, sx), F(L, (double)W))));
    int outv = kl_decl(L, KN_BOOL, out_of);
    kl_set(L, sy, sel(L, kx_bin(L, KX_LE, V(L, sy), F(L, 0)), F(L, 0), V(L, sy)));
    kl_set(L, sx, sel(L, kx_bin(L, KX_LE, V(L, sx), F(L, 0)), F(L, 0), V(L, sx)));
    int y0 = decli(L, i64(L, V(L, sy))), x0 = decli(L, i64(L, V(L, sx)));
    int ylast = kl_decl(L, KN_BOOL, kx_bin(L, KX_GE, V(L, y0), I(L, H - 1)));
    int xlast = kl_decl(L, KN_BOOL, kx_bin(L, KX_GE, V(L, x0), I(L, W - 1)));
    kl_set(L, y0, sel(L, V(L, ylast), I(L, H - 1), V(L, y0)));
    kl_set(L, x0, sel(L, V(L, xlast), I(L, W - 1), V(L, x0)));
    /* out-of-range points still index in bounds (at 0) */
    kl_set(L, y0, clampx(L, V(L, y0), I(L, 0), I(L, H - 1)));
    kl_set(L, x0, clampx(L, V(L, x0), I(L, 0), I(L, W - 1)));
    int y1 = decli(L, sel(L, V(L, ylast), V(L, y0), kx_add(L, V(L, y0), I(L, 1))));
    int x1 = decli(L, sel(L, V(L, xlast), V(L, x0), kx_add(L, V(L, x0), I(L, 1))));
    kl_set(L, sy, sel(L, V(L, ylast), f64(L, V(L, y0)), V(L, sy)));
    kl_set(L, sx, sel(L, V(L, xlast), f64(L, V(L, x0)), V(L, sx)));
    int ly = declf(L, kx_sub(L, V(L, sy), f64(L, V(L, y0)))),
        lx = declf(L, kx_sub(L, V(L, sx), f64(L, V(L, x0))));
    int hy = declf(L, kx_sub(L, F(L, 1), V(L, ly))), hx = declf(L, kx_sub(L, F(L, 1), V(L, lx)));
    int ys[4] = {y0, y0, y1, y1}, xs[4] = {x0, x1, x0, x1};
    int wy[4] = {hy, hy, ly, ly}, wx[4] = {hx, lx, hx, lx};
    kn_kx *s = NULL;
    int m = -1;
    for (int k = 0; k < 4; k++) {
        kn_kx *wk = sel(L, V(L, outv), F(L, 0), kx_mul(L, V(L, wy[k]), V(L, wx[k])));
        kn_kx *pix = kx_load(
            L, X, kx_add(L, V(L, base), kx_add(L, kx_mul(L, V(L, ys[k]), I(L, W)), V(L, xs[k]))));
        kn_kx *t = kx_mul(L, kx_cast(L, at, wk), pix);
        if (!a.is_max) {
            s = s ? kx_add(L, s, t) : t;
        } else if (m < 0) {
            m = kl_decl(L, at, t);
        } else {
            int tv = kl_decl(L, at, t);
            kl_set(L, m, sel(L, kx_bin(L, KX_GT, V(L, tv), V(L, m)), V(L, tv), V(L, m)));
        }
    }
    if (a.is_max) {
        kl_set(L, acc,
               sel(L, kx_bin(L, KX_LOR, V(L, first), kx_bin(L, KX_GT, V(L, m), V(L, acc))), V(L, m),
                   V(L, acc)));
        kl_set(L, first, kx_const(L, KN_BOOL, 0));
    } else {
        kl_set(L, acc, kx_add(L, V(L, acc), s));
    }
    kl_end_n(L, 2);
    kn_kx *res = a.is_max ? V(L, acc) : dvd(L, V(L, acc), kx_cast(L, at, V(L, count)));
    kn_kx *yi = kx_add(
        L,
        kx_mul(L,
               kx_add(L, kx_mul(L, kx_add(L, kx_mul(L, V(L, r), I(L, C)), V(L, c)), I(L, a.oh)),
                      V(L, ph)),
               I(L, a.ow)),
        V(L, pw));
    kl_store(L, Y, yi, finish(L, Y->dtype, res));
    kl_end_n(L, 4);
    return KN_OK;
}

/* ---- MaxRoiPool ---- */

static kn_status lower_maxroipool(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                                  kn_kbuf *const *out) {
    kn_ctx *cx = kl_ctx(L);
    const int64_t *ps;
    if (kn_attr_ints(cx, n, "pooled_shape", &ps) != 2)
        return kn_diag(cx, n, KN_EINVAL, "pooled_shape must be two ints");
    double scale = kn_attr_float(cx, n, "spatial_scale", 1.0f);
    if (kn_failed(cx)) return cx->status;
    kn_kbuf *X = in[0], *rois = in[1], *Y = out[0];
    int64_t N = X->dims[0], C = X->dims[1], H = X->dims[2], W = X->dims[3], R = rois->dims[0];
    int64_t PH = ps[0], PW = ps[1];
    if (Y->numel == 0) return KN_OK;
    kn_dtype at = acc_dtype(Y->dtype);

    int r = kl_for(L, R);
    int rv[5];
    for (int k = 0; k < 5; k++)
        rv[k] = declf(L, f64(L, kx_load(L, rois, kx_add(L, kx_mul(L, V(L, r), I(L, 5)), I(L, k)))));
    int b = decli(L, clampx(L, i64(L, V(L, rv[0])), I(L, 0), I(L, N - 1)));
    int e[4]; /* xs, ys, xe, ye: round half away from zero, as C round() */
    for (int k = 0; k < 4; k++) {
        kn_kx *v = kx_mul(L, V(L, rv[k + 1]), F(L, scale));
        kn_kx *rd =
            sel(L, kx_bin(L, KX_LT, v, F(L, 0)),
                kx_un(L, KX_NEG, kx_un(L, KX_FLOOR, kx_add(L, kx_un(L, KX_NEG, v), F(L, 0.5)))),
                kx_un(L, KX_FLOOR, kx_add(L, kx_mul(L, V(L, rv[k + 1]), F(L, scale)), F(L, 0.5))));
        e[k] = decli(L, i64(L, rd));
    }
    kn_kx *rhe = kx_add(L, kx_sub(L, V(L, e[3]), V(L, e[1])), I(L, 1));
    kn_kx *rwe = kx_add(L, kx_sub(L, V(L, e[2]), V(L, e[0])), I(L, 1));
    int bh = declf(
        L, dvd(L, f64(L, sel(L, kx_bin(L, KX_GT, rhe, I(L, 1)), rhe, I(L, 1))), F(L, (double)PH)));
    int bw = declf(
        L, dvd(L, f64(L, sel(L, kx_bin(L, KX_GT, rwe, I(L, 1)), rwe, I(L, 1))), F(L, (double)PW)));
    int c = kl_for(L, C), ph = kl_for(L, PH), pw = kl_for(L, PW);
    kn_kx *h0 =
        kx_add(L, i64(L, kx_un(L, KX_FLOOR, kx_mul(L, f64(L, V(L, ph)), V(L, bh)))), V(L, e[1]));
    kn_kx *h1 = kx_add(
        L, i64(L, kx_un(L, KX_CEIL, kx_mul(L, f64(L, kx_add(L, V(L, ph), I(L, 1))), V(L, bh)))),
        V(L, e[1]));
    kn_kx *w0 =
        kx_add(L, i64(L, kx_un(L, KX_FLOOR, kx_mul(L, f64(L, V(L, pw)), V(L, bw)))), V(L, e[0]));
    kn_kx *w1 = kx_add(
        L, i64(L, kx_un(L, KX_CEIL, kx_mul(L, f64(L, kx_add(L, V(L, pw), I(L, 1))), V(L, bw)))),
        V(L, e[0]));
    int vh0 = decli(L, clampx(L, h0, I(L, 0), I(L, H))),
        vh1 = decli(L, clampx(L, h1, I(L, 0), I(L, H)));
    int vw0 = decli(L, clampx(L, w0, I(L, 0), I(L, W))),
        vw1 = decli(L, clampx(L, w1, I(L, 0), I(L, W)));
    int base = decli(L, kx_mul(L, kx_add(L, kx_mul(L, V(L, b), I(L, C)), V(L, c)), I(L, H * W)));
    int m = kl_decl(L, at, kx_const(L, at, 0));
    int any = kl_decl(L, KN_BOOL, kx_const(L, KN_BOOL, 0));
    int i = kl_for_x(L, kx_sub(L, V(L, vh1), V(L, vh0)));
    int j = kl_for_x(L, kx_sub(L, V(L, vw1), V(L, vw0)));
    kn_kx *off = kx_add(L, V(L, base),
                        kx_add(L, kx_mul(L, kx_add(L, V(L, vh0), V(L, i)), I(L, W)),
                               kx_add(L, V(L, vw0), V(L, j))));
    int xv = kl_decl(L, at, kx_load(L, X, off));
    kl_set(L, m,
           sel(L,
               kx_bin(L, KX_LOR, kx_un(L, KX_NOT, V(L, any)), kx_bin(L, KX_GT, V(L, xv), V(L, m))),
               V(L, xv), V(L, m)));
    kl_set(L, any, kx_const(L, KN_BOOL, 1));
    kl_end_n(L, 2);
    kn_kx *yi = kx_add(
        L,
        kx_mul(L,
               kx_add(L, kx_mul(L, kx_add(L, kx_mul(L, V(L, r), I(L, C)), V(L, c)), I(L, PH)),
                      V(L, ph)),
               I(L, PW)),
        V(L, pw));
    kl_store(L, Y, yi, V(L, m));
    kl_end_n(L, 4);
    return KN_OK;
}

/* ---- CenterCropPad, Col2Im ---- */

/* Input `i` of n as int64 values from its constant data. */
static kn_status const_shape(kn_lower *L, const kn_node *n, int i, int64_t *v, int *count) {
    const kn_tensor *t = kl_const(L, n, i);
    if (!t || kn_tensor_numel(t) > KN_MAX_RANK)
        return kn_diag(kl_ctx(L), n, KN_EUNSUPPORTED, "needs a constant input %d (%s)", i,
                       kn_hint_text(kl_ctx(L), KN_HINT_BIND));
    *count = (int)kn_tensor_numel(t);
    for (int k = 0; k < *count; k++) v[k] = kn_load_i64(t->data, t->type.dtype, (size_t)k);
    return KN_OK;
}

/* y[o] = x[o + start] where inside, else 0 */
static kn_status lower_ccp(kn_lower *L, const kn_node *n, kn_kbuf *const *in, kn_kbuf *const *out) {
    kn_kbuf *x = in[0], *y = out[0];
    int64_t s[KN_MAX_RANK], xs[KN_MAX_RANK];
    int cnt, v[KN_MAX_RANK], r = x->rank;
    kn_type xt = kn_type_make(x->dtype, r, x->dims);
    kn_ccp_plan p;
    if (const_shape(L, n, 1, s, &cnt) || kn_ccp_plan_make(kl_ctx(L), n, &xt, s, cnt, &p))
        return kl_ctx(L)->status;
    if (!y->numel) return KN_OK;
    kn_strides(r, x->dims, xs);
    kl_for_shape(L, r, y->dims, v);
    kn_kx *inside = NULL, *at = I(L, 0);
    for (int d = 0; d < r; d++) {
        kn_kx *c = kx_add(L, V(L, v[d]), I(L, p.start[d]));
        if (p.start[d] < 0 || p.out[d] + p.start[d] > x->dims[d]) {
            kn_kx *ok = kx_bin(L, KX_LAND, kx_bin(L, KX_GE, c, I(L, 0)),
                               kx_bin(L, KX_LT, c, I(L, x->dims[d])));
            inside = inside ? kx_bin(L, KX_LAND, inside, ok) : ok;
            c = kx_bin(L, KX_MAX, kx_bin(L, KX_MIN, c, I(L, x->dims[d] - 1)), I(L, 0));
        }
        at = kx_add(L, at, kx_mul(L, c, I(L, xs[d])));
    }
    int64_t ys[KN_MAX_RANK];
    kn_strides(r, y->dims, ys);
    kn_kx *oi = kx_offset(L, r, v, ys);
    kn_kx *val = kx_load(L, x, at);
    if (inside) val = kx_select(L, inside, val, kx_const(L, kx_compute_dtype(y->dtype), 0));
    kl_store(L, y, oi, val);
    kl_end_n(L, r);
    return KN_OK;
}

/* Gather form (each output pixel sums the block entries that cover it), so no two
 * iterations write one element; any number r of spatial axes. On axis d, block entry k
 * covers image position y from block position (y + pad - k*dil) / str when that
 * divides and lies in [0, l). */
static kn_status lower_col2im(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                              kn_kbuf *const *out) {
    kn_kbuf *x = in[0], *y = out[0];
    int64_t im[KN_MAX_RANK], bl[KN_MAX_RANK];
    int ci, cb;
    kn_type xt = kn_type_make(x->dtype, x->rank, x->dims);
    kn_col2im_plan p;
    if (const_shape(L, n, 1, im, &ci) || const_shape(L, n, 2, bl, &cb)) return kl_ctx(L)->status;
    if (ci != cb)
        return kn_diag(kl_ctx(L), n, KN_EINVAL, "image_shape has %d values and block_shape %d", ci,
                       cb);
    if (kn_col2im_plan_make(kl_ctx(L), n, &xt, im, bl, ci, &p)) return kl_ctx(L)->status;
    if (!y->numel) return KN_OK;
    kn_dtype t = kx_compute_dtype(y->dtype);
    int r = p.r, vy[KN_MAX_RANK], vk[KN_MAX_RANK], bv[KN_MAX_RANK];
    int vb = kl_for(L, p.n * p.c);
    for (int d = 0; d < r; d++) vy[d] = kl_for(L, p.img[d]);
    int acc = kl_decl(L, t, kx_const(L, t, 0));
    for (int d = 0; d < r; d++) vk[d] = kl_for(L, p.k[d]);
    kn_kx *ok = NULL, *l = I(L, 0), *row = V(L, vb);
    for (int d = 0; d < r; d++) {
        kn_kx *td = kx_sub(L, kx_add(L, V(L, vy[d]), I(L, p.pad[d])),
                           kx_mul(L, V(L, vk[d]), I(L, p.dil[d])));
        bv[d] = kl_decl(L, KN_I64, td);
        kn_kx *okd = kx_bin(L, KX_LAND, kx_bin(L, KX_GE, V(L, bv[d]), I(L, 0)),
                            kx_bin(L, KX_LT, V(L, bv[d]), I(L, p.l[d] * p.str[d])));
        if (p.str[d] > 1)
            okd = kx_bin(L, KX_LAND, okd,
                         kx_bin(L, KX_EQ, kx_bin(L, KX_MOD, V(L, bv[d]), I(L, p.str[d])), I(L, 0)));
        ok = ok ? kx_bin(L, KX_LAND, ok, okd) : okd;
        kn_kx *ld = p.str[d] > 1 ? kx_bin(L, KX_DIV, V(L, bv[d]), I(L, p.str[d])) : V(L, bv[d]);
        l = kx_add(L, kx_mul(L, l, I(L, p.l[d])), ld);
        /* input row (c * prod(k) + k_flat) of batch b, vb = b * C + c */
        row = kx_add(L, kx_mul(L, row, I(L, p.k[d])), V(L, vk[d]));
    }
    kl_if(L, ok);
    kl_set(L, acc, kx_add(L, V(L, acc), kx_load(L, x, kx_add(L, kx_mul(L, row, I(L, p.ll)), l))));
    kl_end(L);
    kl_end_n(L, r);
    kn_kx *o = V(L, vb);
    for (int d = 0; d < r; d++) o = kx_add(L, kx_mul(L, o, I(L, p.img[d])), V(L, vy[d]));
    kl_store(L, y, o, V(L, acc));
    kl_end_n(L, r + 1);
    return KN_OK;
}

/* AffineGrid: y[b, spatial..., j] = theta[b, j, r] + sum over k < r of theta[b, j, k] *
 * the normalized coordinate along spatial axis r-1-k (x is the last), which comes from
 * one table per axis computed at lowering time (kn_affine_coord, as the interpreter). */
static kn_status lower_affinegrid(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                                  kn_kbuf *const *out) {
    kn_kbuf *th = in[0], *y = out[0];
    int align = kn_attr_int(kl_ctx(L), n, "align_corners", 0) != 0;
    if (kn_failed(kl_ctx(L))) return kl_ctx(L)->status;
    if (!y->numel) return KN_OK;
    int r = y->rank - 2;
    kn_dtype t = kx_compute_dtype(y->dtype);
    kn_kbuf *coord[KN_MAX_RANK];
    for (int a = 0; a < r; a++) {
        int64_t s = y->dims[1 + a];
        double *v = malloc((size_t)s * sizeof *v);
        float *f = malloc((size_t)s * sizeof *f);
        KN_ASSERT(v && f);
        for (int64_t i = 0; i < s; i++) f[i] = (float)(v[i] = kn_affine_coord(i, s, align));
        coord[a] = t == KN_F64 ? kl_table(L, KN_F64, s, v) : kl_table(L, KN_F32, s, f);
        free(v);
        free(f);
    }
    int v[KN_MAX_RANK];
    kl_for_shape(L, y->rank, y->dims, v);
    kn_kx *row = kx_mul(L, kx_add(L, kx_mul(L, V(L, v[0]), I(L, r)), V(L, v[r + 1])), I(L, r + 1));
    int acc = kl_decl(L, t, kx_cast(L, t, kx_load(L, th, kx_add(L, row, I(L, r)))));
    for (int k = 0; k < r; k++) {
        int a = r - 1 - k;
        kn_kx *c = kx_load(L, coord[a], V(L, v[1 + a]));
        kn_kx *w = kx_cast(L, t, kx_load(L, th, kx_add(L, row, I(L, k))));
        kl_set(L, acc, kx_add(L, V(L, acc), kx_mul(L, w, kx_cast(L, t, c))));
    }
    int64_t st[KN_MAX_RANK];
    kn_strides(y->rank, y->dims, st);
    kl_store(L, y, kx_offset(L, y->rank, v, st), V(L, acc));
    kl_end_n(L, y->rank);
    return KN_OK;
}

const kn_oplower kn_lower_image[] = {
    {KN_OP_RESIZE, lower_resize},
    {KN_OP_UPSAMPLE, lower_resize},
    {KN_OP_GRIDSAMPLE, lower_gridsample},
    {KN_OP_ROIALIGN, lower_roialign},
    {KN_OP_MAXROIPOOL, lower_maxroipool},
    {KN_OP_CENTERCROPPAD, lower_ccp},
    {KN_OP_COL2IM, lower_col2im},
    {KN_OP_AFFINEGRID, lower_affinegrid},
    {KN_OP_COUNT, 0},
};
